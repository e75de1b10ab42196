//! The network opt-in ([`Policy::allow_host`](crate::Policy::allow_host)): the program may open
//! TCP connections to the hosts the application names, through a proxy that runs unconfined for
//! it, and to nothing else.
//!
//! The destinations are [`Host`]s, a name or a literal address with a port. The backend gives
//! the program a network of its own in which the only thing it can reach is the proxy's
//! listening socket on loopback, and tells the program where it is through the environment
//! ([`proxy_env`]): `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and their lowercase forms. The proxy
//! ([`proxy`]) takes `CONNECT host:port` (a tunnel: TLS stays end to end) and absolute-URI
//! requests for plain HTTP, checks each destination against the list, resolves names itself, and
//! refuses a name that resolves to a loopback, private or link-local address unless that literal
//! address is on the list (`localhost` is loopback by definition, RFC 6761).

use std::fmt;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU16, Ordering};

/// The port a destination named without one gets: HTTPS's.
pub const DEFAULT_PORT: u16 = 443;

/// How many connections the proxy makes for one launch unless the application says otherwise
/// ([`Policy::with_max_connections`](crate::Policy::with_max_connections)).
pub const DEFAULT_MAX_CONNECTIONS: u32 = 256;

/// One destination the program may reach: a host name (lowercase, without a trailing dot) or a
/// literal address, and a port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Host {
    name: String,
    port: u16,
}

/// Why a destination given to [`Host::parse`] is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Nothing before the port, or nothing at all.
    #[error(
        "{given:?}: names no host; give HOST or HOST:PORT, such as example.org or 127.0.0.1:8080"
    )]
    Empty {
        /// The text as given.
        given: String,
    },
    /// The port is not a number from 1 to 65535.
    #[error("{given:?}: the port is not a number from 1 to 65535")]
    Port {
        /// The text as given.
        given: String,
    },
    /// The host has a character no host name or address has (a space, a `/`, a `@`, ...).
    #[error("{given:?}: is not a host name or an address (letters, digits, `-` and `.`, or an IP address in brackets for IPv6); give HOST or HOST:PORT")]
    Name {
        /// The text as given.
        given: String,
    },
}

impl Host {
    /// Reads `HOST[:PORT]`: a name or an IPv4 address, or an IPv6 address in brackets
    /// (`[::1]:8080`); the port is [`DEFAULT_PORT`] where none is given. Names are compared
    /// without case and without a trailing dot.
    pub fn parse(given: &str) -> Result<Self, HostError> {
        let (host, port) = split_host_port(given).ok_or_else(|| HostError::Port {
            given: given.to_owned(),
        })?;
        let port = port.unwrap_or(DEFAULT_PORT);
        Self::new(host, port).map_err(|e| match e {
            HostError::Empty { .. } => HostError::Empty {
                given: given.to_owned(),
            },
            _ => HostError::Name {
                given: given.to_owned(),
            },
        })
    }

    /// The destination `host` (a name or an address, IPv6 without brackets) on `port`.
    pub fn new(host: &str, port: u16) -> Result<Self, HostError> {
        let given = || host.to_owned();
        if port == 0 {
            return Err(HostError::Port { given: given() });
        }
        let host = host.strip_suffix('.').unwrap_or(host);
        if host.is_empty() {
            return Err(HostError::Empty { given: given() });
        }
        if let Ok(address) = host.parse::<IpAddr>() {
            return Ok(Self {
                name: address.to_string(),
                port,
            });
        }
        let valid = host.len() <= 253
            && host.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if !valid {
            return Err(HostError::Name { given: given() });
        }
        Ok(Self {
            name: host.to_ascii_lowercase(),
            port,
        })
    }

    /// The name or the address, as compared (IPv6 without brackets).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The literal address, where the host is one.
    pub fn address(&self) -> Option<IpAddr> {
        self.name.parse().ok()
    }

    /// Whether the host is `localhost` or a name beneath it, which RFC 6761 reserves for
    /// loopback: such a name reaches loopback only, and is never asked of a resolver.
    pub fn is_localhost(&self) -> bool {
        self.name == "localhost" || self.name.ends_with(".localhost")
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.contains(':') {
            write!(f, "[{}]:{}", self.name, self.port)
        } else {
            write!(f, "{}:{}", self.name, self.port)
        }
    }
}

/// `host` and its port, if one is given: `name`, `name:port`, `[v6]`, `[v6]:port`, or a bare
/// IPv6 address (which has no port); `None` for a port that is not a number.
fn split_host_port(given: &str) -> Option<(&str, Option<u16>)> {
    let port = |text: &str| text.parse::<u16>().ok().filter(|&p| p != 0);
    if let Some(rest) = given.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            _ => Some((host, Some(port(after.strip_prefix(':')?)?))),
        };
    }
    if given.parse::<IpAddr>().is_ok() {
        return Some((given, None));
    }
    match given.rsplit_once(':') {
        Some((host, text)) => Some((host, Some(port(text)?))),
        None => Some((given, None)),
    }
}

/// Whether `address` is one a name must not lead to unless the application named it: loopback,
/// private, link-local, unspecified, shared (100.64/10), multicast or broadcast, an IPv6
/// unique-local or site-local one, or an IPv4 one mapped into IPv6 that is any of those.
pub fn is_internal(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || a >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
        }
    }
}

/// The descriptor the proxy logs its decisions to, shared by a policy's clones; two logs are
/// the same where they are the same descriptor.
#[derive(Debug, Clone)]
pub(crate) struct NetLog(#[cfg(unix)] pub(crate) std::sync::Arc<std::os::fd::OwnedFd>);

impl PartialEq for NetLog {
    #[cfg(unix)]
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }

    // Without Unix there is no log to hold.
    #[cfg(not(unix))]
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for NetLog {}

/// The port of the proxy's listening socket, once the backend has made it.
pub fn proxy_port() -> Option<u16> {
    Some(PROXY_PORT.load(Ordering::Relaxed)).filter(|&p| p != 0)
}

/// The port of the proxy the program reaches, once the backend has made it; 0 before.
static PROXY_PORT: AtomicU16 = AtomicU16::new(0);

/// Records the port of the proxy's listening socket in the program's network, for
/// [`proxy_env`]. The backend calls it while it confines the launcher.
pub fn set_proxy_port(port: u16) {
    PROXY_PORT.store(port, Ordering::Relaxed);
}

/// The variables that name the proxy to the program, set over the caller's: the proxy for every
/// scheme in both spellings, and `NO_PROXY` empty, so that no destination bypasses it (a direct
/// connection would be refused anyway). Empty in a launch without the opt-in.
pub fn proxy_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let port = PROXY_PORT.load(Ordering::Relaxed);
    if port == 0 {
        return Vec::new();
    }
    let url = format!("http://127.0.0.1:{port}");
    let mut env = Vec::new();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        env.push((name.into(), url.clone().into()));
        env.push((name.to_ascii_lowercase().into(), url.clone().into()));
    }
    env.push(("NO_PROXY".into(), "".into()));
    env.push(("no_proxy".into(), "".into()));
    env
}

pub mod decider;
#[cfg(unix)]
pub mod proxy;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_read_as_written_with_https_by_default() {
        let h = Host::parse("Example.ORG.").unwrap();
        assert_eq!((h.name(), h.port()), ("example.org", 443));
        assert_eq!(
            Host::parse("127.0.0.1:8080").unwrap().to_string(),
            "127.0.0.1:8080"
        );
        assert_eq!(Host::parse("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert_eq!(Host::parse("::1").unwrap().to_string(), "[::1]:443");
        assert_eq!(
            Host::parse("localhost:9").unwrap().to_string(),
            "localhost:9"
        );
        assert!(Host::parse("localhost:9").unwrap().is_localhost());
        assert!(matches!(Host::parse("a:0"), Err(HostError::Port { .. })));
        assert!(matches!(Host::parse("a:x"), Err(HostError::Port { .. })));
        assert!(matches!(Host::parse(":80"), Err(HostError::Empty { .. })));
        assert!(matches!(Host::parse("a b"), Err(HostError::Name { .. })));
        assert!(matches!(Host::parse("u@h"), Err(HostError::Name { .. })));
    }

    #[test]
    fn internal_addresses_are_those_a_name_must_not_reach() {
        for internal in [
            "127.0.0.2",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in ["93.184.216.34", "2606:2800:220:1::1", "8.8.8.8"] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }
}
