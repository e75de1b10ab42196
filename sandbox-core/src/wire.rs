//! How a launch request travels to the launcher: as its command-line arguments.
//!
//! Every value is its own argument, passed as the operating system string it is, so a path with
//! spaces, newlines or bytes that are not UTF-8 arrives unchanged and needs no escaping. Keys come
//! in pairs with their values and are matched exactly; anything else is a [`WireError`]. The
//! decoder re-validates every path, so a path that vanished since encoding is refused.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::error::WireError;
use crate::policy::Policy;

/// The format this build writes and reads. Parent and launcher are the same executable, so a
/// mismatch means something else wrote the arguments.
pub const FORMAT: &str = "1";

const READ: &str = "--read";
const EXEC: &str = "--exec";
const CANARY: &str = "--canary";
const PARENT: &str = "--parent";
/// The descriptor the launcher reports a refusal on; it comes first, so that a request that does
/// not decode can still be reported.
const STATUS: &str = "--status";
/// A variable the caller sets for the program, `NAME=VALUE`.
const ENV: &str = "--env";
/// One of the policy's limits, `name=value`; a request without any gets the defaults.
const LIMIT: &str = "--limit";
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
    /// The descriptor, open in the launcher, on which it reports a refusal to the parent before
    /// exiting; `None` where the parent reads only the exit status and standard error.
    pub status: Option<i32>,
    /// Variables the caller sets for the program, over the few the launcher keeps.
    pub env: Vec<(OsString, OsString)>,
}

/// Encodes `request` as the arguments that follow the launcher flag.
pub fn encode(request: &Request) -> Vec<OsString> {
    let mut out = vec![OsString::from(FORMAT)];
    let mut pair = |key: &str, value: &OsStr| {
        out.push(key.into());
        out.push(value.to_os_string());
    };
    if let Some(fd) = request.status {
        pair(STATUS, OsStr::new(&fd.to_string()));
    }
    for path in request.policy.read_paths() {
        pair(READ, path.as_os_str());
    }
    for path in request.policy.exec_paths() {
        pair(EXEC, path.as_os_str());
    }
    pair(CANARY, request.canary.as_os_str());
    for word in request.policy.limits().encode() {
        pair(LIMIT, &word);
    }
    for (name, value) in &request.env {
        let mut word = name.clone();
        word.push("=");
        word.push(value);
        pair(ENV, &word);
    }
    if let Some(parent) = request.parent {
        pair(PARENT, OsStr::new(&parent.to_string()));
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
    let mut policy = Policy::new();
    let mut canaries = Vec::new();
    let mut parent = None;
    let mut limits = *policy.limits();
    let mut status = None;
    let mut env = Vec::new();
    loop {
        let key = args.next().ok_or(WireError::NoProgram)?;
        let key = match key.to_str() {
            Some(READ) => READ,
            Some(EXEC) => EXEC,
            Some(CANARY) => CANARY,
            Some(PARENT) => PARENT,
            Some(LIMIT) => LIMIT,
            Some(STATUS) => STATUS,
            Some(ENV) => ENV,
            Some(PROGRAM) => break,
            _ => return Err(WireError::UnknownKey { key }),
        };
        let value = args.next().ok_or(WireError::MissingValue { key })?;
        match key {
            READ => policy = policy.allow_read(&value)?,
            EXEC => policy = policy.allow_exec(&value)?,
            CANARY => canaries.push(PathBuf::from(value)),
            LIMIT => limits.decode_word(&value)?,
            STATUS => status = Some(parse_status(value)?),
            ENV => env.push(parse_variable(value)?),
            _ => parent = Some(parse_pid(PARENT, value)?),
        }
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
        env,
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
pub fn peek_status(args: &[OsString]) -> Option<i32> {
    match args {
        [_, key, value, ..] if key == STATUS => parse_status(value.clone()).ok(),
        _ => None,
    }
}

/// A status descriptor is above the standard streams, which are the program's.
fn parse_status(value: OsString) -> Result<i32, WireError> {
    value
        .to_str()
        .and_then(|text| text.parse::<i32>().ok())
        .filter(|&fd| fd > 2)
        .ok_or(WireError::Number { key: STATUS, value })
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
            status: Some(3),
            env: vec![("A".into(), "b=c".into()), ("EMPTY".into(), "".into())],
        }
    }

    #[test]
    fn limits_travel_and_a_request_without_them_gets_the_defaults() {
        let mut r = request();
        let mut limits = crate::Limits::none();
        limits.tasks = Some(7);
        r.policy = r.policy.with_limits(limits);
        assert_eq!(decode(encode(&r)).unwrap().policy.limits(), &limits);
        let bare = decode_strs(&["1", "--canary", "/a", "--", "/bin/true"]).unwrap();
        assert_eq!(bare.policy.limits(), &crate::Limits::default());
        assert!(matches!(
            decode_strs(&[
                "1",
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
        assert_eq!(peek_status(&encode(&r)), Some(3));
        assert!(matches!(
            decode_strs(&["1", "--env", "=x", "--canary", "/a", "--", "/x"]),
            Err(WireError::Variable { .. })
        ));
        assert!(matches!(
            decode_strs(&["1", "--status", "2", "--canary", "/a", "--", "/x"]),
            Err(WireError::Number {
                key: "--status",
                ..
            })
        ));
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
    fn garbage_is_a_typed_error() {
        assert!(matches!(decode_strs(&[]), Err(WireError::Version { .. })));
        assert!(matches!(
            decode_strs(&["2"]),
            Err(WireError::Version { .. })
        ));
        assert!(matches!(decode_strs(&["1"]), Err(WireError::NoProgram)));
        assert!(matches!(
            decode_strs(&["1", "--bogus", "x"]),
            Err(WireError::UnknownKey { .. })
        ));
        assert!(matches!(
            decode_strs(&["1", "--read"]),
            Err(WireError::MissingValue { key: "--read" })
        ));
        assert!(matches!(
            decode_strs(&["1", "--read", "rel", "--", "/bin/true"]),
            Err(WireError::Policy(crate::PolicyError::Relative { .. }))
        ));
        assert!(matches!(
            decode_strs(&["1", "--", "/bin/true"]),
            Err(WireError::Canary { count: 0 })
        ));
        assert!(matches!(
            decode_strs(&["1", "--canary", "/a", "--canary", "/b", "--", "/bin/true"]),
            Err(WireError::Canary { count: 2 })
        ));
        assert!(matches!(
            decode_strs(&["1", "--canary", "/a", "--parent", "-1", "--", "/x"]),
            Err(WireError::Number { .. })
        ));
        assert!(matches!(
            decode_strs(&["1", "--canary", "/a", "--", "true"]),
            Err(WireError::RelativeProgram { .. })
        ));
        assert!(matches!(
            decode_strs(&["1", "--canary", "/a", "--"]),
            Err(WireError::NoProgram)
        ));
    }

    #[test]
    fn a_path_removed_since_encoding_is_refused() {
        let dir = std::env::temp_dir().join(format!("sandbox-wire-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = request();
        r.policy = r.policy.allow_read(&dir).unwrap();
        let encoded = encode(&r);
        std::fs::remove_dir(&dir).unwrap();
        assert!(matches!(
            decode(encoded),
            Err(WireError::Policy(crate::PolicyError::Unreadable { .. }))
        ));
    }
}
