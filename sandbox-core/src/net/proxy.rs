//! The proxy the program reaches its hosts through: it runs unconfined for the program, with
//! the application's network, so it bounds its own work.
//!
//! One request per connection: `CONNECT host:port` opens a tunnel (the program's TLS goes
//! through it untouched), and a request with an absolute `http://` URI is passed on with its
//! target in origin form and `Connection: close`. Each destination is checked against the list
//! before anything is resolved or connected; names are resolved here, never by the program, and
//! an address of the network's inside ([`super::is_internal`]) is reached through a
//! name only where that literal address is on the list too. Bounds: the request's head (16 KiB,
//! read within 10 s), the connection to the destination (10 s), a tunnel idle for 5 minutes,
//! the requests of the launch ([`Config::max_connections`]) and the connections open at once
//! ([`MAX_OPEN`]).

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{is_internal, split_host_port, Host};

/// The longest request head the proxy reads.
pub const MAX_HEAD: usize = 16 * 1024;
/// How long the proxy waits for a request's head, and for a destination to answer a connect.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// How many connections the proxy serves at once for a launch, each on a thread of its own
/// (two for a tunnel); one opened past it is refused as past the launch's bound.
pub const MAX_OPEN: u32 = 64;
/// How long a tunnel may carry nothing either way before the proxy closes it.
pub const IDLE: Duration = Duration::from_secs(300);

/// What the proxy lets through, and where it says what it decided.
#[derive(Debug)]
pub struct Config {
    /// The destinations the program may reach.
    pub hosts: Vec<Host>,
    /// How many connections the launch may have in all; the proxy refuses every one past it.
    pub max_connections: u32,
    /// Where each decision goes, one JSON line each (`--net-log`), if anywhere.
    pub log: Option<File>,
    /// Who decides a destination off the list
    /// ([`Sandbox::on_connect`](crate::Sandbox::on_connect)), if anyone; without it, such a
    /// destination is refused.
    pub decider: Option<super::decider::Asker>,
}

/// Why the proxy refused a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refused {
    /// The destination is not on the list.
    NotAllowed,
    /// A name on the list resolved only to addresses of the network's inside.
    Internal(IpAddr),
    /// The name did not resolve, or the destination did not answer.
    Unreachable(String),
    /// The launch has had all its connections.
    Limit(u32),
    /// The application's function refused the destination, or did not answer.
    Decider(super::decider::NotAllowed),
}

impl Refused {
    fn reason(&self) -> String {
        match self {
            Refused::NotAllowed => "not allowed".to_owned(),
            Refused::Internal(address) => format!(
                "the name resolves to {address}, an address of the local network, which was not allowed by address"
            ),
            Refused::Unreachable(why) => format!("unreachable: {why}"),
            Refused::Limit(max) => {
                format!("the launch has had its {max} connections (--max-connections)")
            }
            Refused::Decider(super::decider::NotAllowed::Refused) => {
                "refused by the application's function (on_connect)".to_owned()
            }
            Refused::Decider(super::decider::NotAllowed::NoAnswer) => format!(
                "the application's function (on_connect) did not answer within {} s, or failed",
                super::decider::DEADLINE.as_secs()
            ),
        }
    }

    fn status(&self) -> &'static str {
        match self {
            Refused::NotAllowed | Refused::Internal(_) | Refused::Decider(_) => "403 Forbidden",
            Refused::Unreachable(_) => "502 Bad Gateway",
            Refused::Limit(_) => "429 Too Many Requests",
        }
    }
}

struct Shared {
    config: Config,
    /// The requests the launch has made, each decided once.
    count: AtomicU32,
    /// The connections being served now, each on a thread of its own.
    open: AtomicU32,
    log: Mutex<Option<File>>,
}

/// Serves `listener` on a thread of its own until the process ends; each connection gets a
/// thread of its own too, up to the launch's bound.
pub fn serve(listener: TcpListener, mut config: Config) -> io::Result<()> {
    let log = config.log.take();
    let shared = Arc::new(Shared {
        config,
        count: AtomicU32::new(0),
        open: AtomicU32::new(0),
        log: Mutex::new(log),
    });
    std::thread::Builder::new()
        .name("proxy".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                // Past the bound every connection is refused here, one at a time, so that the
                // threads the proxy starts for a launch are bounded too: a program opening
                // connections it never writes to waits its turn rather than costing a thread.
                if shared.open.fetch_add(1, Ordering::Relaxed) >= MAX_OPEN {
                    shared.open.fetch_sub(1, Ordering::Relaxed);
                    let _ignored = connection(&shared, stream, true);
                    continue;
                }
                let worker = Arc::clone(&shared);
                let spawned = std::thread::Builder::new()
                    .name("proxy connection".into())
                    .spawn(move || {
                        let _ignored = connection(&worker, stream, false);
                        worker.open.fetch_sub(1, Ordering::Relaxed);
                    });
                if spawned.is_err() {
                    // No thread: the connection went with the closure, unanswered.
                    shared.open.fetch_sub(1, Ordering::Relaxed);
                }
            }
        })?;
    Ok(())
}

/// One request: read, decided, logged, and then a tunnel or a refusal; `over`, a connection
/// opened while [`MAX_OPEN`] are, is refused whatever it asks.
fn connection(shared: &Shared, mut client: TcpStream, over: bool) -> io::Result<()> {
    client.set_read_timeout(Some(TIMEOUT))?;
    client.set_write_timeout(Some(TIMEOUT))?;
    let (head, rest) = read_head(&mut client)?;
    let Some(request) = Request::parse(&head) else {
        return answer(&mut client, "400 Bad Request", "sandbox: the proxy takes CONNECT host:port and http:// requests with an absolute URI\n");
    };
    let destination = request.destination.to_string();
    let count = shared.count.fetch_add(1, Ordering::Relaxed);
    let mut by_application = false;
    let decided = if over || count >= shared.config.max_connections {
        Err(Refused::Limit(shared.config.max_connections))
    } else {
        decide(shared, &request.destination, &mut by_application).and_then(|addresses| {
            connect(&addresses).map_err(|e| Refused::Unreachable(e.to_string()))
        })
    };
    log(shared, &request, &decided, by_application);
    let upstream = match decided {
        Ok(upstream) => upstream,
        Err(refused) => {
            let body = match &refused {
                Refused::NotAllowed => format!(
                    "sandbox: the program may not reach {destination}; --allow-host {destination} would allow it\n"
                ),
                other => format!("sandbox: {destination}: {}\n", other.reason()),
            };
            return answer(&mut client, refused.status(), &body);
        }
    };
    let mut upstream_write = upstream.try_clone()?;
    if request.method == "CONNECT" {
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    } else {
        upstream_write.write_all(&request.forwarded)?;
    }
    upstream_write.write_all(&rest)?;
    tunnel(client, upstream)
}

/// Where `destination` may be reached: [`addresses`] for one on the list; for one off it, the
/// application's function is asked first (nothing is resolved before it allows), and an allowed
/// one is then treated as on the list, the rule for names leading inside included.
fn decide(
    shared: &Shared,
    destination: &Host,
    by_application: &mut bool,
) -> Result<Vec<SocketAddr>, Refused> {
    let hosts = &shared.config.hosts;
    match &shared.config.decider {
        Some(decider) if !hosts.contains(destination) => {
            decider.ask(destination).map_err(Refused::Decider)?;
            *by_application = true;
            let mut allowed = hosts.clone();
            allowed.push(destination.clone());
            addresses(destination, &allowed)
        }
        _ => addresses(destination, hosts),
    }
}

/// Reads up to the end of the request's head: the head, and what came after it.
fn read_head(client: &mut TcpStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let read = client.read(&mut chunk)?;
        if read == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            return Ok((buffer, rest));
        }
        if buffer.len() > MAX_HEAD {
            let _ignored = answer(
                client,
                "431 Request Header Fields Too Large",
                "sandbox: the request's head is longer than the proxy reads\n",
            );
            return Err(io::Error::other("head too long"));
        }
    }
}

/// A request the proxy understood.
struct Request {
    method: String,
    destination: Host,
    /// For a plain request: the head to send on, in origin form with `Connection: close`.
    forwarded: Vec<u8>,
}

impl Request {
    fn parse(head: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(head).ok()?;
        let mut lines = text.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let (method, target, version) = (first.next()?, first.next()?, first.next()?);
        if first.next().is_some() || !version.starts_with("HTTP/1.") {
            return None;
        }
        if method.eq_ignore_ascii_case("CONNECT") {
            let (host, port) = split_host_port(target)?;
            let destination = Host::new(host, port?).ok()?;
            return Some(Self {
                method: "CONNECT".to_owned(),
                destination,
                forwarded: Vec::new(),
            });
        }
        let scheme = target.get(..7)?;
        if !scheme.eq_ignore_ascii_case("http://") {
            return None;
        }
        let after = &target[7..];
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let (authority, path) = after.split_at(end);
        if authority.contains('@') {
            return None;
        }
        let (host, port) = split_host_port(authority)?;
        let destination = Host::new(host, port.unwrap_or(80)).ok()?;
        let path = match path {
            "" => "/".to_owned(),
            p if p.starts_with('/') => p.to_owned(),
            p => format!("/{p}"),
        };
        let mut forwarded = format!("{method} {path} {version}\r\n");
        for line in lines.filter(|l| !l.is_empty()) {
            let name = line.split(':').next().unwrap_or("").trim();
            if [
                "connection",
                "proxy-connection",
                "proxy-authorization",
                "keep-alive",
            ]
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n))
            {
                continue;
            }
            forwarded.push_str(line);
            forwarded.push_str("\r\n");
        }
        forwarded.push_str("Connection: close\r\n\r\n");
        Some(Self {
            method: method.to_owned(),
            destination,
            forwarded: forwarded.into_bytes(),
        })
    }
}

/// Where `destination` may be reached: refused unless it is on the list; a literal address as
/// it is; `localhost` as loopback (RFC 6761), never asked of the resolver; any other name
/// resolved here, keeping the addresses outside the local network and those on the list by
/// address.
fn addresses(destination: &Host, allowed: &[Host]) -> Result<Vec<SocketAddr>, Refused> {
    addresses_with(destination, allowed, |name, port| {
        std::net::ToSocketAddrs::to_socket_addrs(&(name, port)).map(Iterator::collect)
    })
}

/// [`addresses`], with `resolve` for the system's resolver.
fn addresses_with(
    destination: &Host,
    allowed: &[Host],
    resolve: impl FnOnce(&str, u16) -> io::Result<Vec<SocketAddr>>,
) -> Result<Vec<SocketAddr>, Refused> {
    if !allowed.contains(destination) {
        return Err(Refused::NotAllowed);
    }
    let port = destination.port();
    if let Some(address) = destination.address() {
        return Ok(vec![SocketAddr::new(address, port)]);
    }
    if destination.is_localhost() {
        return Ok(vec![
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port),
        ]);
    }
    let resolved =
        resolve(destination.name(), port).map_err(|e| Refused::Unreachable(e.to_string()))?;
    let by_address = |address: IpAddr| {
        allowed
            .iter()
            .any(|h| h.address() == Some(address) && h.port() == port)
    };
    let usable: Vec<SocketAddr> = resolved
        .iter()
        .copied()
        .filter(|a| !is_internal(a.ip()) || by_address(a.ip()))
        .collect();
    match (usable.is_empty(), resolved.first()) {
        (false, _) => Ok(usable),
        (true, Some(first)) => Err(Refused::Internal(first.ip())),
        (true, None) => Err(Refused::Unreachable("the name has no address".to_owned())),
    }
}

fn connect(addresses: &[SocketAddr]) -> io::Result<TcpStream> {
    let mut last = io::Error::other("no address");
    for address in addresses {
        match TcpStream::connect_timeout(address, TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Copies both ways until either side ends or the tunnel is idle for [`IDLE`].
fn tunnel(client: TcpStream, upstream: TcpStream) -> io::Result<()> {
    for stream in [&client, &upstream] {
        stream.set_read_timeout(Some(IDLE))?;
        stream.set_write_timeout(Some(IDLE))?;
    }
    let (client_read, upstream_write) = (client.try_clone()?, upstream.try_clone()?);
    let up = std::thread::Builder::new()
        .name("proxy tunnel".into())
        .spawn(move || copy(client_read, upstream_write))?;
    copy(upstream, client);
    let _ignored = up.join();
    Ok(())
}

/// Copies `from` into `to` until `from` ends or fails, then shuts both down, so that the other
/// direction ends too.
fn copy(mut from: TcpStream, mut to: TcpStream) {
    let _ignored = io::copy(&mut from, &mut to);
    let _ignored = to.shutdown(Shutdown::Write);
    let _ignored = from.shutdown(Shutdown::Read);
}

fn answer(client: &mut TcpStream, status: &str, body: &str) -> io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes())?;
    let _ignored = client.shutdown(Shutdown::Write);
    Ok(())
}

/// One JSON line for a decision, where the application asked for them.
fn log(
    shared: &Shared,
    request: &Request,
    decided: &Result<TcpStream, Refused>,
    by_application: bool,
) {
    let Ok(mut guard) = shared.log.lock() else {
        return;
    };
    let Some(file) = guard.as_mut() else { return };
    let (decision, reason) = match decided {
        Ok(_) => ("allowed", String::new()),
        Err(refused) => ("refused", refused.reason()),
    };
    let mut line = format!(
        "{{\"decision\":\"{decision}\",\"destination\":{},\"host\":{},\"port\":{},\"method\":{}",
        json(&request.destination.to_string()),
        json(request.destination.name()),
        request.destination.port(),
        json(&request.method),
    );
    if !reason.is_empty() {
        line.push_str(&format!(",\"reason\":{}", json(&reason)));
    }
    if by_application {
        line.push_str(",\"by\":\"on_connect\"");
    }
    line.push_str("}\n");
    let _ignored = file.write_all(line.as_bytes());
}

/// `text` as a JSON string.
fn json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(list: &[&str]) -> Vec<Host> {
        list.iter().map(|h| Host::parse(h).unwrap()).collect()
    }

    #[test]
    fn a_destination_not_on_the_list_is_refused_before_it_is_resolved() {
        let allowed = hosts(&["127.0.0.1:80", "localhost:81"]);
        assert_eq!(
            addresses(&Host::parse("127.0.0.1:81").unwrap(), &allowed),
            Err(Refused::NotAllowed)
        );
        assert_eq!(
            addresses(&Host::parse("localhost:81").unwrap(), &allowed).unwrap()[0],
            "127.0.0.1:81".parse().unwrap()
        );
        assert_eq!(
            addresses(&Host::parse("127.0.0.1:80").unwrap(), &allowed).unwrap(),
            vec!["127.0.0.1:80".parse().unwrap()]
        );
    }

    /// DNS rebinding: a name on the list that resolves inside the network reaches only what
    /// the list names by address; its public addresses are kept.
    #[test]
    fn a_name_leading_inside_reaches_only_addresses_allowed_by_address() {
        let resolver = |list: &'static [&'static str]| {
            move |_: &str, port: u16| -> io::Result<Vec<SocketAddr>> {
                Ok(list
                    .iter()
                    .map(|a| SocketAddr::new(a.parse().unwrap(), port))
                    .collect())
            }
        };
        let host = Host::parse("api.example:443").unwrap();
        let allowed = hosts(&["api.example"]);
        for inside in [
            &["127.0.0.1"][..],
            &["10.0.0.5"],
            &["169.254.169.254"],
            &["::1"],
            &["fe80::1"],
        ] {
            assert_eq!(
                addresses_with(&host, &allowed, resolver(inside)),
                Err(Refused::Internal(inside[0].parse().unwrap())),
                "{inside:?}"
            );
        }
        assert_eq!(
            addresses_with(&host, &allowed, resolver(&["10.0.0.5", "93.184.216.34"])),
            Ok(vec!["93.184.216.34:443".parse().unwrap()])
        );
        let allowed = hosts(&["api.example", "10.0.0.5:443"]);
        assert_eq!(
            addresses_with(&host, &allowed, resolver(&["10.0.0.5"])),
            Ok(vec!["10.0.0.5:443".parse().unwrap()])
        );
        // `localhost` is never asked of the resolver.
        let local = Host::parse("localhost:8080").unwrap();
        let never = |_: &str, _: u16| -> io::Result<Vec<SocketAddr>> { panic!("resolved") };
        assert!(addresses_with(&local, std::slice::from_ref(&local), never).is_ok());
    }

    #[test]
    fn requests_read_as_proxies_read_them() {
        let r = Request::parse(b"CONNECT Example.org:8443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(r.destination.to_string(), "example.org:8443");
        let r = Request::parse(
            b"GET http://127.0.0.1:8080/a?b HTTP/1.1\r\nHost: 127.0.0.1\r\nProxy-Connection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.destination.to_string(), "127.0.0.1:8080");
        assert_eq!(
            String::from_utf8(r.forwarded).unwrap(),
            "GET /a?b HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(
            Request::parse(b"GET http://h/ HTTP/1.1\r\n\r\n")
                .unwrap()
                .destination
                .port(),
            80
        );
        assert!(Request::parse(b"GET / HTTP/1.1\r\n\r\n").is_none());
        assert!(Request::parse(b"GET http://u@h/ HTTP/1.1\r\n\r\n").is_none());
        assert!(Request::parse(b"CONNECT h HTTP/1.1\r\n\r\n").is_none());
    }
}
