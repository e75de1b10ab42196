//! How a launch request travels to the launcher: as its command-line arguments.
//!
//! Every value is its own argument, passed as the operating system string it is, so a path with
//! spaces, newlines or bytes that are not UTF-8 arrives unchanged and needs no escaping. Keys come
//! with their values and are matched exactly; anything else is a [`WireError`]. A path key takes
//! two values: what the parent resolved the path to ([`Identity`], `DEVICE:INODE:KIND`) and the
//! canonical path. The decoder checks the path's form but does not look it up: the launcher's
//! backend opens it once and refuses when it is not that object any more.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use super::inherited_handle::InheritedHandle;
use crate::backend::identity::Identity;
use crate::error::wire::WireError;
use crate::policy::Policy;
use crate::scratch::ScratchGrant;

/// The first argument of a launcher run: the rest is an encoded [`Request`].
pub const LAUNCH_FLAG: &str = "--sandbox-launch";

/// The first argument of a confined copy of the launcher, started by a backend that confines by
/// re-executing (macOS): the copy goes straight to the enforcement check.
pub const CONFINED_FLAG: &str = "--sandbox-confined";

// The enforcement check's own flag, defined with the attempt that uses it (the check sits below
// the wire, which carries the policy the check is run for).
#[doc(inline)]
pub use crate::backend::check::EXIT_FLAG;

/// The format this build writes and reads. Parent and launcher are the same executable, so a
/// mismatch means something else wrote the arguments. Format 2 added each path's identity.
pub const FORMAT: &str = "2";

const READ: &str = "--read";
const EXEC: &str = "--exec";
/// A folder the program may write beneath ([`Policy::allow_write`]).
const WRITE: &str = "--write";
const SCRATCH: &str = "--scratch";
const CANARY: &str = "--canary";
const PARENT: &str = "--parent";
/// The descriptor the launcher reports a refusal on; it comes first, so that a request that does
/// not decode can still be reported.
const STATUS: &str = "--status";
/// The descriptor the launcher shares with the application's supervisor (grants on demand).
const SUPERVISOR: &str = "--supervisor";
/// A variable the caller sets for the program, `NAME=VALUE`.
const ENV: &str = "--env";
/// The folder the program starts in, an absolute path.
const DIR: &str = "--dir";
/// One of the policy's limits, `name=value`; a request without any gets the defaults.
const LIMIT: &str = "--limit";
/// Something the policy allows beyond paths, by name: [`LOCAL_SOCKET_PAIRS`].
const ALLOW: &str = "--allow";
/// [`Policy::allow_local_socket_pairs`] on the wire.
const LOCAL_SOCKET_PAIRS: &str = "local-socket-pairs";
/// [`Policy::allow_processes`] on the wire.
const PROCESSES: &str = "processes";
/// A destination the program may reach, `HOST:PORT` ([`Policy::allow_host`]).
const HOST: &str = "--host";
/// The bound on the launch's connections ([`Policy::with_max_connections`]).
const MAX_CONNECTIONS: &str = "--max-connections";
/// The descriptor the proxy logs its decisions to ([`Policy::with_net_log`]).
const NET_LOG: &str = "--net-log";
/// The socket the proxy asks the application's function on ([`crate::Sandbox::on_connect`]).
const NET_DECIDER: &str = "--net-decider";
const PROGRAM: &str = "--";

/// A launch request: the policy, the canary, and the program with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// What the program may read and execute.
    pub policy: Policy,
    /// The canary the enforcement check tries to reach.
    pub canary: PathBuf,
    /// The program to run, an absolute path.
    pub program: PathBuf,
    /// Its arguments, not counting the program itself.
    pub args: Vec<OsString>,
    /// The launcher's parent, when a confined copy of the launcher must check against the parent
    /// the first copy saw.
    pub parent: Option<u32>,
    /// The channel (on Unix a descriptor), open in the launcher, on which it reports a refusal to
    /// the parent before exiting; `None` where the parent reads only the exit status and
    /// standard error.
    pub status: Option<InheritedHandle>,
    /// The channel (on Unix a descriptor), open in the launcher, of the socket whose other end the
    /// application's supervisor holds ([`crate::grant`]): `None` for a launch without grants on
    /// demand. The launcher closes it just before it executes the program.
    pub supervisor: Option<InheritedHandle>,
    /// Variables the caller sets for the program, over the few the launcher keeps.
    pub env: Vec<(OsString, OsString)>,
    /// The folder the program starts in, an absolute path; `None` keeps the launcher's own.
    /// Where the program starts gives it no right: what it may open is the policy's.
    pub dir: Option<PathBuf>,
}

/// Encodes `request` as the arguments that follow the launcher flag.
pub fn encode(request: &Request) -> Vec<OsString> {
    let mut out = vec![OsString::from(FORMAT)];
    // The status descriptor comes first, so that even a request whose policy does not decode
    // is reported on it.
    if let Some(fd) = request.status {
        out.push(STATUS.into());
        out.push(fd.to_string().into());
    }
    let policy = &request.policy;
    let paths = policy.read_paths().len() + policy.exec_paths().len();
    out.reserve(3 * paths + 32 + 2 * request.env.len() + request.args.len());
    let mut path = |key: &str, path: &PathBuf, identity: Identity| {
        out.push(key.into());
        out.push(identity.to_token().into());
        out.push(path.clone().into_os_string());
    };
    // Each path with the identity the policy recorded beside it, in order, without looking
    // either up.
    for (at, identity) in policy.read_entries() {
        path(READ, at, identity);
    }
    for (at, identity) in policy.exec_entries() {
        path(EXEC, at, identity);
    }
    for (at, identity) in policy.write_entries() {
        path(WRITE, at, identity);
    }
    if let Some(scratch) = policy.scratch() {
        out.push(SCRATCH.into());
        out.push(scratch.identity.to_token().into());
        out.push(scratch.to_token().into());
        out.push(scratch.path.clone().into_os_string());
    }
    let mut pair = |key: &str, value: &OsStr| {
        out.push(key.into());
        out.push(value.to_os_string());
    };
    pair(CANARY, request.canary.as_os_str());
    if request.policy.local_socket_pairs() {
        pair(ALLOW, OsStr::new(LOCAL_SOCKET_PAIRS));
    }
    if request.policy.processes() {
        pair(ALLOW, OsStr::new(PROCESSES));
    }
    for host in request.policy.hosts() {
        pair(HOST, OsStr::new(&host.to_string()));
    }
    #[cfg(unix)]
    if let Some(fd) = request.policy.net_log() {
        use std::os::fd::AsRawFd;
        pair(NET_LOG, OsStr::new(&fd.as_raw_fd().to_string()));
    }
    #[cfg(unix)]
    if let Some(fd) = request.policy.decider() {
        use std::os::fd::AsRawFd;
        pair(NET_DECIDER, OsStr::new(&fd.as_raw_fd().to_string()));
    }
    if let Some(max) = request.policy.max_connections_set() {
        pair(MAX_CONNECTIONS, OsStr::new(&max.to_string()));
    }
    for word in request.policy.limits().encode() {
        pair(LIMIT, &word);
    }
    for (name, value) in &request.env {
        let mut word = name.clone();
        word.push("=");
        word.push(value);
        pair(ENV, &word);
    }
    if let Some(fd) = request.supervisor {
        pair(SUPERVISOR, OsStr::new(&fd.to_string()));
    }
    if let Some(parent) = request.parent {
        pair(PARENT, OsStr::new(&parent.to_string()));
    }
    if let Some(dir) = &request.dir {
        pair(DIR, dir.as_os_str());
    }
    out.push(PROGRAM.into());
    out.push(request.program.clone().into_os_string());
    out.extend(request.args.iter().cloned());
    out
}

/// Decodes the arguments that follow the launcher flag.
pub fn decode(args: impl IntoIterator<Item = OsString>) -> Result<Request, WireError> {
    let mut args = args.into_iter();
    match args.next() {
        Some(version) if version == FORMAT => {}
        found => {
            return Err(WireError::Version {
                found: found.unwrap_or_default(),
                expected: FORMAT,
            })
        }
    }
    let mut args = args.collect::<Vec<_>>().into_iter();
    let mut policy = Policy::new();
    // A launcher decodes up to thousands of paths: room for all of them at once, rather than
    // growing (and rehashing) the list as they come.
    policy.reserve_read(
        args.as_slice()
            .iter()
            .take_while(|arg| *arg != PROGRAM)
            .filter(|arg| *arg == READ)
            .count(),
    );
    let mut canaries = Vec::new();
    let mut parent = None;
    let mut limits = *policy.limits();
    let mut status = None;
    let mut supervisor = None;
    let mut env = Vec::new();
    let mut dir = None;
    loop {
        let key = args.next().ok_or(WireError::NoProgram)?;
        let key = match key.to_str() {
            Some(READ) => READ,
            Some(EXEC) => EXEC,
            Some(WRITE) => WRITE,
            Some(SCRATCH) => SCRATCH,
            Some(CANARY) => CANARY,
            Some(PARENT) => PARENT,
            Some(LIMIT) => LIMIT,
            Some(STATUS) => STATUS,
            Some(SUPERVISOR) => SUPERVISOR,
            Some(ENV) => ENV,
            Some(DIR) => DIR,
            Some(ALLOW) => ALLOW,
            Some(HOST) => HOST,
            Some(MAX_CONNECTIONS) => MAX_CONNECTIONS,
            Some(NET_LOG) => NET_LOG,
            Some(NET_DECIDER) => NET_DECIDER,
            Some(PROGRAM) => break,
            _ => return Err(WireError::UnknownKey { key }),
        };
        let value = args.next().ok_or(WireError::MissingValue { key })?;
        match key {
            READ | EXEC => {
                let identity = identity(key, &value)?;
                let path = args.next().ok_or(WireError::MissingValue { key })?;
                policy.add_resolved(key == EXEC, PathBuf::from(path), identity)?;
            }
            WRITE => {
                let identity = identity(key, &value)?;
                let path = args.next().ok_or(WireError::MissingValue { key })?;
                policy.add_resolved_write(PathBuf::from(path), identity)?;
            }
            SCRATCH if policy.scratch().is_some() => return Err(WireError::Scratch { value }),
            SCRATCH => {
                let identity = identity(key, &value)?;
                let bound = args.next().ok_or(WireError::MissingValue { key })?;
                let (bound, home, keeper) = bound
                    .to_str()
                    .and_then(ScratchGrant::parse_token)
                    .ok_or(WireError::Scratch { value: bound })?;
                let path = PathBuf::from(args.next().ok_or(WireError::MissingValue { key })?);
                policy = policy.with_resolved_scratch(ScratchGrant {
                    path,
                    identity,
                    bound,
                    home,
                    keeper,
                })?;
            }
            CANARY => canaries.push(PathBuf::from(value)),
            LIMIT => limits.decode_word(&value)?,
            STATUS => status = Some(parse_status(value)?),
            SUPERVISOR => {
                supervisor = Some(InheritedHandle::from_wire(parse_descriptor(
                    SUPERVISOR, value,
                )?))
            }
            ALLOW if value == LOCAL_SOCKET_PAIRS => policy = policy.allow_local_socket_pairs(),
            ALLOW if value == PROCESSES => policy = policy.allow_processes(),
            ALLOW => return Err(WireError::UnknownAllowance { value }),
            HOST => {
                policy = policy
                    .allow_host(&value.to_string_lossy())
                    .map_err(|_| WireError::Host { value })?
            }
            #[cfg(unix)]
            NET_LOG => {
                let fd = parse_descriptor(NET_LOG, value.clone())?;
                policy = crate::sys::take_descriptor(fd)
                    .and_then(|log| policy.clone().with_net_log(log))
                    .map_err(|_| WireError::Number {
                        key: NET_LOG,
                        value,
                    })?;
            }
            #[cfg(unix)]
            NET_DECIDER => {
                let fd = parse_descriptor(NET_DECIDER, value.clone())?;
                policy = crate::sys::take_descriptor(fd)
                    .and_then(|socket| policy.clone().with_decider(socket.into()))
                    .map_err(|_| WireError::Number {
                        key: NET_DECIDER,
                        value,
                    })?;
            }
            MAX_CONNECTIONS => {
                let max = value
                    .to_str()
                    .and_then(|v| v.parse().ok())
                    .ok_or(WireError::Host { value })?;
                policy = policy.with_max_connections(max);
            }
            ENV => env.push(parse_variable(value)?),
            DIR => {
                let path = PathBuf::from(value);
                if !path.is_absolute() {
                    return Err(WireError::RelativeDir { path });
                }
                dir = Some(path);
            }
            _ => parent = Some(parse_pid(PARENT, value)?),
        }
    }
    // The supervisor's socket and the status pipe are two descriptors: one number for both
    // would send the listener down the pipe.
    if let (Some(fd), true) = (supervisor, supervisor == status) {
        return Err(WireError::Number {
            key: SUPERVISOR,
            value: fd.to_string().into(),
        });
    }
    let program = PathBuf::from(args.next().ok_or(WireError::NoProgram)?);
    if !program.is_absolute() {
        return Err(WireError::RelativeProgram { path: program });
    }
    let canary = match <[PathBuf; 1]>::try_from(canaries) {
        Ok([canary]) => canary,
        Err(all) => return Err(WireError::Canary { count: all.len() }),
    };
    Ok(Request {
        policy: policy.with_limits(limits),
        canary,
        program,
        args: args.collect(),
        parent,
        status,
        supervisor,
        env,
        dir,
    })
}

/// The identity token that follows `key`.
fn identity(key: &'static str, value: &OsString) -> Result<Identity, WireError> {
    value
        .to_str()
        .and_then(Identity::from_token)
        .ok_or_else(|| WireError::Identity {
            key,
            value: value.clone(),
        })
}

/// `NAME=VALUE`, split at the first `=`; the name is not empty.
#[cfg(unix)]
fn parse_variable(word: OsString) -> Result<(OsString, OsString), WireError> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = word.as_bytes();
    match bytes.iter().position(|&b| b == b'=') {
        Some(at) if at > 0 => Ok((
            OsStr::from_bytes(&bytes[..at]).to_os_string(),
            OsStr::from_bytes(&bytes[at + 1..]).to_os_string(),
        )),
        _ => Err(WireError::Variable { value: word }),
    }
}

/// `NAME=VALUE`, split at the first `=`; the name is not empty.
#[cfg(not(unix))]
fn parse_variable(word: OsString) -> Result<(OsString, OsString), WireError> {
    match word.to_str().and_then(|w| w.split_once('=')) {
        Some((name, value)) if !name.is_empty() => Ok((name.into(), value.into())),
        _ => Err(WireError::Variable { value: word }),
    }
}

/// The status descriptor of encoded arguments, if they name one where [`encode`] puts it: read
/// before decoding, so that a request that does not decode is reported there too.
pub fn peek_status(args: &[OsString]) -> Option<InheritedHandle> {
    match args {
        [_, key, value, ..] if key == STATUS => parse_status(value.clone()).ok(),
        _ => None,
    }
}

/// A status descriptor is above the standard streams, which are the program's.
fn parse_status(value: OsString) -> Result<InheritedHandle, WireError> {
    parse_descriptor(STATUS, value).map(InheritedHandle::from_wire)
}

/// A descriptor the launcher keeps is above the standard streams, which are the program's.
fn parse_descriptor(key: &'static str, value: OsString) -> Result<i32, WireError> {
    value
        .to_str()
        .and_then(|text| text.parse::<i32>().ok())
        .filter(|&fd| fd > 2)
        .ok_or(WireError::Number { key, value })
}

fn parse_pid(key: &'static str, value: OsString) -> Result<u32, WireError> {
    value
        .to_str()
        .and_then(|text| text.parse::<u32>().ok())
        .filter(|&pid| pid > 0)
        .ok_or(WireError::Number { key, value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            policy: Policy::new()
                .allow_read("/")
                .unwrap()
                .allow_exec(std::env::current_exe().unwrap())
                .unwrap(),
            canary: PathBuf::from("/tmp/canary"),
            program: PathBuf::from("/bin/echo"),
            args: vec!["--".into(), "--read".into(), "a b\nc".into()],
            parent: Some(42),
            status: Some(InheritedHandle::from_raw_fd(3)),
            supervisor: Some(InheritedHandle::from_raw_fd(4)),
            env: vec![("A".into(), "b=c".into()), ("EMPTY".into(), "".into())],
            dir: Some(PathBuf::from("/work dir")),
        }
    }

    #[test]
    fn limits_travel_and_a_request_without_them_gets_the_defaults() {
        let mut r = request();
        let mut limits = crate::Limits::none();
        limits.tasks = Some(7);
        r.policy = r.policy.with_limits(limits);
        assert_eq!(decode(encode(&r)).unwrap().policy.limits(), &limits);
        let bare = decode_strs(&[FORMAT, "--canary", "/a", "--", "/bin/true"]).unwrap();
        assert_eq!(bare.policy.limits(), &crate::Limits::default());
        assert!(matches!(
            decode_strs(&[
                FORMAT,
                "--limit",
                "tasks=x",
                "--canary",
                "/a",
                "--",
                "/bin/true"
            ]),
            Err(WireError::Limit { .. })
        ));
    }

    #[test]
    fn a_request_survives_the_round_trip() {
        let r = request();
        assert_eq!(decode(encode(&r)).unwrap(), r);
        assert_eq!(
            peek_status(&encode(&r)),
            Some(InheritedHandle::from_raw_fd(3))
        );
        // A handle travels as its number in decimal, right after the format, as a bare `i32`
        // did: a launcher of the previous release reads the same words.
        let words = encode(&r);
        assert_eq!(words[1..3], [OsString::from(STATUS), OsString::from("3")]);
        assert!(words
            .windows(2)
            .any(|w| w == [OsString::from(SUPERVISOR), OsString::from("4")]));
        assert!(matches!(
            decode_strs(&[FORMAT, "--env", "=x", "--canary", "/a", "--", "/x"]),
            Err(WireError::Variable { .. })
        ));
        assert!(matches!(
            decode_strs(&[FORMAT, "--status", "2", "--canary", "/a", "--", "/x"]),
            Err(WireError::Number {
                key: "--status",
                ..
            })
        ));
    }

    #[test]
    fn write_folders_and_processes_survive_the_round_trip() {
        let dir = std::env::temp_dir().join(format!("sandbox-wire-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = request();
        r.policy = r.policy.allow_write(&dir).unwrap().allow_processes();
        let encoded = encode(&r);
        assert_eq!(decode(encoded.clone()).unwrap(), r);
        assert!(encoded.iter().any(|t| t == "processes"));
        // A write folder the decoder refuses by what it is: `/`, whatever the parent sent.
        let at = encoded.iter().position(|t| t == "--write").unwrap();
        let mut root = encoded;
        root[at + 2] = "/".into();
        assert!(matches!(
            decode(root),
            Err(WireError::Policy(crate::PolicyError::Write {
                problem: crate::opt_in::write_problem::WriteProblem::Root,
                ..
            }))
        ));
        // Without the opt-ins, nothing of them is written.
        let plain = encode(&request());
        assert!(!plain.iter().any(|t| t == "--write" || t == "processes"));
        std::fs::remove_dir(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn paths_and_arguments_that_are_not_utf8_survive() {
        use std::os::unix::ffi::OsStringExt;
        let odd = OsString::from_vec(vec![b'/', b't', b'm', b'p', b'/', 0xff, 0xfe]);
        let mut r = request();
        r.canary = PathBuf::from(&odd);
        r.args = vec![odd.clone()];
        let dir = std::env::temp_dir().join(OsString::from_vec(vec![b's', b'b', 0xff]));
        std::fs::create_dir_all(&dir).unwrap();
        r.policy = r.policy.allow_read(&dir).unwrap();
        assert_eq!(decode(encode(&r)).unwrap(), r);
        std::fs::remove_dir(&dir).unwrap();
    }

    fn decode_strs(tokens: &[&str]) -> Result<Request, WireError> {
        decode(tokens.iter().map(OsString::from))
    }

    #[test]
    fn a_scratch_folder_survives_the_round_trip_once() {
        let mut r = request();
        let grant = ScratchGrant {
            path: PathBuf::from("/tmp/sandbox-scratch-1-2-x"),
            identity: Identity::from_token("7:8:dir").unwrap(),
            bound: crate::scratch::Bound {
                bytes: 4096,
                entries: 3,
            },
            home: true,
            keeper: crate::scratch::KeeperRef {
                pid: 1,
                start: 2,
                user_namespace: false,
            },
        };
        r.policy = r.policy.with_scratch(grant.clone());
        let encoded = encode(&r);
        assert_eq!(decode(encoded.clone()).unwrap(), r);
        let at = encoded.iter().position(|t| t == "--scratch").unwrap();
        assert_eq!(
            encoded[at..at + 4],
            [
                "--scratch",
                "7:8:dir",
                "4096:3:home:1:2:mount",
                "/tmp/sandbox-scratch-1-2-x"
            ]
            .map(OsString::from)
        );
        // Twice, a bad bound, a path not canonical: refused.
        let mut twice = encoded.clone();
        twice.splice(at..at, encoded[at..at + 4].iter().cloned());
        assert!(matches!(decode(twice), Err(WireError::Scratch { .. })));
        let mut bad = encoded.clone();
        bad[at + 2] = "0:3:tmp".into();
        assert!(matches!(decode(bad), Err(WireError::Scratch { .. })));
        let mut odd = encoded;
        odd[at + 3] = "/tmp/../etc".into();
        assert!(matches!(
            decode(odd),
            Err(WireError::Policy(crate::PolicyError::NotCanonical { .. }))
        ));
    }

    #[test]
    fn garbage_is_a_typed_error() {
        assert!(matches!(decode_strs(&[]), Err(WireError::Version { .. })));
        assert!(matches!(
            decode_strs(&["1"]),
            Err(WireError::Version { .. })
        ));
        assert!(matches!(decode_strs(&["2"]), Err(WireError::NoProgram)));
        assert!(matches!(
            decode_strs(&["2", "--bogus", "x"]),
            Err(WireError::UnknownKey { .. })
        ));
        assert!(matches!(
            decode_strs(&["2", "--read"]),
            Err(WireError::MissingValue { key: "--read" })
        ));
        assert!(matches!(
            decode_strs(&["2", "--read", "1:2:dir"]),
            Err(WireError::MissingValue { key: "--read" })
        ));
        assert!(matches!(
            decode_strs(&["2", "--exec", "/usr", "--", "/bin/true"]),
            Err(WireError::Identity { key: "--exec", .. })
        ));
        assert!(matches!(
            decode_strs(&["2", "--read", "1:2:dir", "rel", "--", "/bin/true"]),
            Err(WireError::Policy(crate::PolicyError::Relative { .. }))
        ));
        for odd in [
            "/usr/",
            "/usr/.",
            "/usr/../usr",
            "//usr",
            "/usr//bin",
            "/./usr",
            "/usr/..",
            "/..",
            "//",
        ] {
            assert!(
                matches!(
                    decode_strs(&["2", "--read", "1:2:dir", odd, "--", "/bin/true"]),
                    Err(WireError::Policy(crate::PolicyError::NotCanonical { .. }))
                ),
                "{odd}"
            );
        }
        for fine in ["/", "/usr", "/a/.../b", "/a/.b/c..", "/a b/c:d"] {
            let decoded =
                decode_strs(&["2", "--read", "1:2:dir", fine, "--canary", "/a", "--", "/x"]);
            assert_eq!(
                decoded.unwrap().policy.read_paths(),
                [PathBuf::from(fine)],
                "{fine}"
            );
        }
        assert!(matches!(
            decode_strs(&["2", "--", "/bin/true"]),
            Err(WireError::Canary { count: 0 })
        ));
        assert!(matches!(
            decode_strs(&["2", "--canary", "/a", "--canary", "/b", "--", "/bin/true"]),
            Err(WireError::Canary { count: 2 })
        ));
        assert!(matches!(
            decode_strs(&["2", "--canary", "/a", "--parent", "-1", "--", "/x"]),
            Err(WireError::Number { .. })
        ));
        assert!(matches!(
            decode_strs(&["2", "--canary", "/a", "--", "true"]),
            Err(WireError::RelativeProgram { .. })
        ));
        assert!(matches!(
            decode_strs(&["2", "--canary", "/a", "--"]),
            Err(WireError::NoProgram)
        ));
    }

    #[test]
    fn decoding_checks_the_form_and_carries_the_identity_without_looking_the_path_up() {
        let dir = std::env::temp_dir().join(format!("sandbox-wire-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = request();
        r.policy = r.policy.allow_read(&dir).unwrap();
        let resolved = dir.canonicalize().unwrap();
        let identity = r.policy.read_identity(&resolved).unwrap();
        let encoded = encode(&r);
        std::fs::remove_dir(&dir).unwrap();
        // The launcher's backend opens the path and finds it gone; decoding only carries it.
        let decoded = decode(encoded).unwrap();
        assert_eq!(decoded.policy.read_identity(&resolved), Some(identity));
        assert_eq!(decoded, r);
    }
}
