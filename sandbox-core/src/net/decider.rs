//! Destinations decided at run time ([`Sandbox::on_connect`](crate::Sandbox::on_connect)): the
//! proxy puts each destination not on the list to a function of the application's.
//!
//! The proxy is a process of its own, forked from the launcher, so the function is not in its
//! memory: the application serves it on a thread of its own over a socket pair, whose other end
//! the launcher hands to the proxy and the program never holds (close-on-exec). One question at a
//! time, each answered within [`DEADLINE`]; a function that panics, or does not answer in time,
//! ends the conversation, and every later destination off the list is refused unasked (the
//! decider fails closed, as the grant supervisor does).
//!
//! A question is one line, `ID HOST PORT\n`; an answer is `ID A\n` (allow) or `ID R\n` (refuse).
//! Only the destination goes: the proxy resolves nothing for a destination off the list before
//! the function has allowed it, so a program cannot make the application's resolver look up
//! names (and so carry data out in them) by asking.

#[cfg(unix)]
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::IpAddr;
#[cfg(unix)]
use std::os::unix::net::UnixStream;
#[cfg(unix)]
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::Host;

/// How long the proxy waits for the application's function to answer one destination; past
/// it, the destination and every later one off the list are refused.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// One destination the program asked for that the list does not name, as the application's
/// function sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectRequest {
    /// The host as the program named it: a name (lowercase, without a trailing dot) or a
    /// literal address.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The address, where the program named one. For a name, `None`: the name is resolved only
    /// after the function allows it, and then the rule for names on the list holds too (an
    /// address of the network's inside, [`super::is_internal`], is reached through a name only
    /// where that literal address is on the list).
    pub address: Option<IpAddr>,
}

impl ConnectRequest {
    /// The request for `destination`.
    pub fn new(destination: &Host) -> Self {
        Self {
            host: destination.name().to_owned(),
            port: destination.port(),
            address: destination.address(),
        }
    }
}

/// The application's answer to one [`ConnectRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Connect {
    /// The proxy connects, as for a destination on the list: logged as allowed (`--net-log`)
    /// and counted against the launch's bound ([`Policy::with_max_connections`](crate::Policy::with_max_connections)).
    Allow,
    /// Refused with `403`, as a destination off the list is without a function.
    Refuse,
}

/// The application's function: called on a thread of the application's, one destination at a
/// time, while the program's request waits. It may take up to [`DEADLINE`]; a destination it
/// has not answered by then is refused, and so is every later one, unasked.
pub type OnConnect = dyn Fn(&ConnectRequest) -> Connect + Send + Sync;

#[cfg(unix)]
/// Answers the proxy's questions on `stream` with `decide` until the proxy ends, the function
/// panics (that question is refused, then the conversation ends), or a question is malformed.
pub fn serve(stream: UnixStream, decide: Arc<OnConnect>) -> io::Result<()> {
    let mut writer = stream.try_clone()?;
    std::thread::Builder::new()
        .name("sandbox on_connect".into())
        .spawn(move || {
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            loop {
                line.clear();
                match (&mut reader).take(1024).read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let mut words = line.trim_end().split(' ');
                let (Some(id), Some(host), Some(port), None) =
                    (words.next(), words.next(), words.next(), words.next())
                else {
                    return;
                };
                let Some(destination) = port.parse().ok().and_then(|p| Host::new(host, p).ok())
                else {
                    return;
                };
                let request = ConnectRequest::new(&destination);
                let answer =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(&request)));
                let letter = match answer {
                    Ok(Connect::Allow) => 'A',
                    Ok(Connect::Refuse) | Err(_) => 'R',
                };
                if writeln!(writer, "{id} {letter}").is_err() || answer.is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}

#[cfg(unix)]
/// Why the application's function did not allow a destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotAllowed {
    /// It answered: refused.
    Refused,
    /// It did not answer in time, panicked, or its thread is gone.
    NoAnswer,
}

#[cfg(unix)]
/// The proxy's side: asks the application, one question at a time.
#[derive(Debug)]
pub struct Asker {
    inner: Mutex<Conversation>,
}

#[cfg(unix)]
#[derive(Debug)]
struct Conversation {
    /// `None` once the application failed to answer: everything is refused from then on.
    stream: Option<BufReader<UnixStream>>,
    next: u64,
}

#[cfg(unix)]
impl Asker {
    /// Asks over `stream`, the end the launcher handed over.
    pub fn new(stream: UnixStream) -> Self {
        Self {
            inner: Mutex::new(Conversation {
                stream: Some(BufReader::new(stream)),
                next: 0,
            }),
        }
    }

    /// The application's answer for `destination`, within [`DEADLINE`] of asking.
    pub(crate) fn ask(&self, destination: &Host) -> Result<(), NotAllowed> {
        let Ok(mut conversation) = self.inner.lock() else {
            return Err(NotAllowed::NoAnswer);
        };
        let id = conversation.next;
        conversation.next += 1;
        let Some(stream) = conversation.stream.as_mut() else {
            return Err(NotAllowed::NoAnswer);
        };
        let answer = exchange(stream, id, destination);
        if answer.is_err() {
            conversation.stream = None;
        }
        match answer {
            Ok(true) => Ok(()),
            Ok(false) => Err(NotAllowed::Refused),
            Err(_) => Err(NotAllowed::NoAnswer),
        }
    }
}

#[cfg(unix)]
/// One question and its answer; an error (no answer within [`DEADLINE`], the application's
/// end closed, an answer out of turn) ends the conversation, so answers never fall out of step.
fn exchange(stream: &mut BufReader<UnixStream>, id: u64, destination: &Host) -> io::Result<bool> {
    stream.get_mut().set_write_timeout(Some(DEADLINE))?;
    stream.get_mut().set_read_timeout(Some(DEADLINE))?;
    writeln!(
        stream.get_mut(),
        "{id} {} {}",
        destination.name(),
        destination.port()
    )?;
    let mut line = String::new();
    if stream.by_ref().take(64).read_line(&mut line)? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    match line.trim_end().split_once(' ') {
        Some((answered, letter)) if answered == id.to_string() => Ok(letter == "A"),
        _ => Err(io::Error::other("an answer out of turn")),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn host(text: &str) -> Host {
        Host::parse(text).unwrap()
    }

    #[test]
    fn each_destination_is_put_to_the_function_and_a_panic_ends_the_conversation() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        serve(
            ours,
            Arc::new(move |request: &ConnectRequest| {
                counted.fetch_add(1, Ordering::SeqCst);
                match request.port {
                    1 => Connect::Allow,
                    2 => Connect::Refuse,
                    _ => panic!("a function that fails"),
                }
            }),
        )
        .unwrap();
        let asker = Asker::new(theirs);
        assert_eq!(asker.ask(&host("127.0.0.1:1")), Ok(()));
        assert_eq!(asker.ask(&host("example.org:2")), Err(NotAllowed::Refused));
        assert_eq!(asker.ask(&host("[::1]:3")), Err(NotAllowed::Refused));
        // The function panicked: no more questions reach it.
        assert_eq!(asker.ask(&host("127.0.0.1:1")), Err(NotAllowed::NoAnswer));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_request_shows_the_address_only_where_the_program_named_one() {
        let named = ConnectRequest::new(&host("Example.org:8443"));
        assert_eq!(
            (named.host.as_str(), named.port, named.address),
            ("example.org", 8443, None)
        );
        let literal = ConnectRequest::new(&host("[::1]:80"));
        assert_eq!(
            literal.address,
            Some(IpAddr::from(std::net::Ipv6Addr::LOCALHOST))
        );
    }

    #[test]
    fn an_answer_out_of_turn_or_a_closed_end_refuses_from_then_on() {
        let (mut ours, theirs) = UnixStream::pair().unwrap();
        let asker = Asker::new(theirs);
        let answering = std::thread::spawn(move || {
            let mut line = String::new();
            BufReader::new(ours.try_clone().unwrap())
                .read_line(&mut line)
                .unwrap();
            writeln!(ours, "7 A").unwrap();
        });
        assert_eq!(asker.ask(&host("127.0.0.1:1")), Err(NotAllowed::NoAnswer));
        answering.join().unwrap();
        assert_eq!(asker.ask(&host("127.0.0.1:1")), Err(NotAllowed::NoAnswer));
    }
}
