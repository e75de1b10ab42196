//! The launcher's report to its parent: a typed [`Refusal`], written on a close-on-exec pipe the
//! program never holds, or nothing at all when the program was executed.
//!
//! The report is a list of fields, each written as its length in decimal, a colon and its bytes,
//! the first naming the variant. A field that is an error from the system carries its errno, so the
//! parent gets back the same `io::Error` kind; a backend's own error arrives as its one-line text
//! (the parent cannot know the backend's types). Names the launcher took from its own constants
//! (a phase, a check's attempt) are interned, so decoding gives back `&'static str` without
//! leaking more than one copy of each.

use crate::start::ProgramStart;
use std::collections::HashSet;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::Mutex;

use crate::error::backend::{BackendError, CheckFailure};
use crate::error::limit::LimitError;
use crate::error::policy::PolicyError;
use crate::error::refusal::Refusal;
use crate::error::report::MalformedReport;
use crate::error::wire::WireError;
use crate::observed::Observed;

/// The byte a launcher writes first on its status descriptor: it is a launcher, and has started.
pub(crate) const STARTED: u8 = b'S';
/// The byte it writes just before it executes the program: anything after it is the refusal of
/// an `exec` that failed.
pub(crate) const EXECUTING: u8 = b'E';
/// The byte a copy of the application writes, as its whole report, when it was started as a
/// launcher, did not stop in [`handle_args`](crate::handle_args), and came to a launch of its own
/// (`launch::parent::stop_if_unhandled_launcher`): the parent answers `NotALauncher` at once,
/// without waiting for the copy's end (a child the copy started may hold the descriptor open).
pub(crate) const NOT_A_LAUNCHER: u8 = b'N';

/// Whether the report so far already says all it will: a copy that is no launcher.
pub(crate) fn settled(bytes: &[u8]) -> bool {
    bytes == [NOT_A_LAUNCHER]
}

/// Reads a report from `from` to its end, or only until it is [`settled`].
pub(crate) fn read_from(mut from: impl io::Read) -> io::Result<Vec<u8>> {
    let mut reading = Reading::default();
    let mut buffer = [0u8; 4096];
    loop {
        let read = from.read(&mut buffer);
        if let Some(report) = reading.take(read, &buffer) {
            return report;
        }
    }
}

/// A report as it is read, one read at a time, whichever way the reads are waited for (blocking,
/// polled against a deadline, or awaited): where it ends is decided here once.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    bytes: Vec<u8>,
}

impl Reading {
    /// Takes the result of one read into `buffer`: the whole report once the channel has ended
    /// or the report is [`settled`], the error of a failed read, `None` while more may come.
    pub(crate) fn take(
        &mut self,
        read: io::Result<usize>,
        buffer: &[u8],
    ) -> Option<io::Result<Vec<u8>>> {
        match read {
            Ok(0) => return Some(Ok(std::mem::take(&mut self.bytes))),
            Ok(n) => self.bytes.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return None,
            Err(e) => return Some(Err(e)),
        }
        settled(&self.bytes).then(|| Ok(std::mem::take(&mut self.bytes)))
    }
}

/// What a launcher's status descriptor said, read to its end.
#[derive(Debug)]
pub(crate) enum Said {
    /// Nothing: whatever ran was not a launcher, or died before it could start.
    Nothing,
    /// A copy of the application that did not stop in `handle_args` said so.
    Unhandled,
    /// It started and ended before it executed the program or refused: killed by a signal.
    Ended,
    /// It executed the program.
    Executed,
    /// It refused.
    Refused(Refusal),
}

/// Reads a whole report: the start and `exec` markers, and a refusal after either.
pub(crate) fn read(bytes: &[u8]) -> Result<Said, MalformedReport> {
    let Some(rest) = bytes.strip_prefix(&[STARTED]) else {
        return match bytes {
            [] => Ok(Said::Nothing),
            [NOT_A_LAUNCHER] => Ok(Said::Unhandled),
            // A launcher that refused before it knew its status descriptor cannot have written
            // there; a report without the marker is a confined copy's (macOS), started by one.
            _ => decode(bytes).map(Said::Refused),
        };
    };
    match rest {
        [] => Ok(Said::Ended),
        [EXECUTING] => Ok(Said::Executed),
        [EXECUTING, refusal @ ..] => decode(refusal).map(Said::Refused),
        refusal => decode(refusal).map(Said::Refused),
    }
}

/// Encodes `refusal` for the parent.
pub(crate) fn encode(refusal: &Refusal) -> Vec<u8> {
    let mut w = Writer::default();
    match refusal {
        Refusal::Arguments(e) => {
            w.s("arguments");
            wire_error(&mut w, e);
            &mut w
        }
        Refusal::CanaryInsidePolicy { canary } => w.s("canary-inside").p(canary),
        Refusal::ProcessesUnavailable => w.s("processes-unavailable"),
        Refusal::HostsUnavailable => w.s("hosts-unavailable"),
        Refusal::WriteFolder { path, problem } => {
            let (token, other) = problem.token();
            w.s("write-folder")
                .p(path)
                .s(token)
                .p(other.unwrap_or(std::path::Path::new("")))
        }
        Refusal::Canary { canary, source } => w.s("canary").p(canary).io(source),
        Refusal::ParentUnreachable { pid, source } => w.s("parent-unreachable").n(*pid).io(source),
        Refusal::Orphaned => w.s("orphaned"),
        Refusal::Threads(e) => w.s("threads").io(e),
        Refusal::ThreadCount { count } => w.s("thread-count").n(*count),
        Refusal::ParentChanged { expected, found } => w.s("parent-changed").n(*expected).n(*found),
        Refusal::Descriptors(e) => w.s("descriptors").io(e),
        Refusal::DescriptorOpen { fd } => w.s("descriptor-open").n(*fd),
        Refusal::CurrentExe(e) => w.s("current-exe").io(e),
        Refusal::Limits(e) => match e {
            LimitError::Resource { name, source } => w.s("limit-resource").s(name).io(source),
            LimitError::Nice(e) => w.s("limit-nice").io(e),
            LimitError::OomScore(e) => w.s("limit-oom").io(e),
            LimitError::Cgroup { step, path, source } => {
                w.s("limit-cgroup").s(step).p(path).io(source)
            }
        },
        Refusal::Confine(e) => match e.remedy() {
            None => w
                .s("confine")
                .s(e.code().unwrap_or(""))
                .s(&crate::error::report::one_line(e)),
            // The remedy typed, and the text without it: the parent names it its own way.
            Some(remedy) => w
                .s("confine-remedy")
                .s(e.code().unwrap_or(""))
                .s(&e.text_without_remedy())
                .s(match remedy {
                    crate::remedy::Remedy::Read(_) => "read",
                    crate::remedy::Remedy::Exec(_) => "exec",
                })
                .p(remedy.path()),
        },
        Refusal::Check(CheckFailure { attempt, observed }) => {
            let w = w.s("check").s(attempt);
            match observed {
                Observed::Worked => w.s("worked"),
                Observed::OtherError(e) => w.s("other-error").io(e),
                Observed::Failed(e) => w.s("failed").io(e),
            }
        }
        Refusal::Session(e) => w.s("session").io(e),
        Refusal::Signals(e) => w.s("signals").io(e),
        Refusal::ProgramStart { start } => w.s("program-start").s(match start {
            ProgramStart::ExecByPath => "path",
            ProgramStart::ExecOpenedBefore => "opened",
            ProgramStart::SpawnAndWait => "spawn",
        }),
        Refusal::Exec { program, source } => w.s("exec").p(program).io(source),
        Refusal::WorkingFolder { path, source } => w.s("working-folder").p(path).io(source),
        Refusal::Fault { phase } => w.s("fault").s(phase),
        Refusal::Panic { message } => w.s("panic").s(message),
    };
    w.0
}

fn wire_error(w: &mut Writer, e: &WireError) {
    match e {
        WireError::Version { found, .. } => w.s("version").o(found),
        WireError::UnknownKey { key } => w.s("unknown-key").o(key),
        WireError::MissingValue { key } => w.s("missing-value").s(key),
        WireError::Canary { count } => w.s("canary").n(*count),
        WireError::Number { key, value } => w.s("number").s(key).o(value),
        WireError::NoProgram => w.s("no-program"),
        WireError::RelativeProgram { path } => w.s("relative-program").p(path),
        WireError::RelativeDir { path } => w.s("relative-dir").p(path),
        WireError::UnknownAllowance { value } => w.s("unknown-allowance").o(value),
        WireError::Host { value } => w.s("host").o(value),
        WireError::Limit { value } => w.s("limit").o(value),
        WireError::Variable { value } => w.s("variable").o(value),
        WireError::Identity { key, value } => w.s("identity").s(key).o(value),
        WireError::Scratch { value } => w.s("scratch").o(value),
        WireError::Policy(p) => match p {
            PolicyError::Relative { path } => w.s("policy-relative").p(path),
            PolicyError::ContainsNul { path } => w.s("policy-nul").p(path),
            PolicyError::Unreadable { path, source } => w.s("policy-unreadable").p(path).io(source),
            PolicyError::LinkToFolder { path, target } => w.s("policy-link").p(path).p(target),
            PolicyError::NotCanonical { path } => w.s("policy-not-canonical").p(path),
            // The launcher reads destinations as `WireError::Host`; this one is never sent.
            PolicyError::Host(e) => w.s("host").o(std::ffi::OsStr::new(&e.to_string())),
            PolicyError::Write { path, problem } => {
                let (token, other) = problem.token();
                w.s("policy-write")
                    .p(path)
                    .s(token)
                    .p(other.unwrap_or(std::path::Path::new("")))
            }
        },
    };
}

/// Decodes a report written by [`encode`].
pub(crate) fn decode(bytes: &[u8]) -> Result<Refusal, MalformedReport> {
    let mut r = Reader(bytes);
    let refusal = match r.s()?.as_str() {
        "arguments" => Refusal::Arguments(decode_wire(&mut r)?),
        "canary-inside" => Refusal::CanaryInsidePolicy { canary: r.p()? },
        "processes-unavailable" => Refusal::ProcessesUnavailable,
        "hosts-unavailable" => Refusal::HostsUnavailable,
        "write-folder" => {
            let path = r.p()?;
            let token = r.s()?;
            let problem = crate::opt_in::write_problem::WriteProblem::from_token(&token, r.p()?)
                .ok_or(MalformedReport)?;
            Refusal::WriteFolder { path, problem }
        }
        "canary" => Refusal::Canary {
            canary: r.p()?,
            source: r.io()?,
        },
        "parent-unreachable" => Refusal::ParentUnreachable {
            pid: r.n()?,
            source: r.io()?,
        },
        "orphaned" => Refusal::Orphaned,
        "threads" => Refusal::Threads(r.io()?),
        "thread-count" => Refusal::ThreadCount { count: r.n()? },
        "parent-changed" => Refusal::ParentChanged {
            expected: r.n()?,
            found: r.n()?,
        },
        "descriptors" => Refusal::Descriptors(r.io()?),
        "descriptor-open" => Refusal::DescriptorOpen { fd: r.n()? },
        "current-exe" => Refusal::CurrentExe(r.io()?),
        "limit-resource" => Refusal::Limits(LimitError::Resource {
            name: intern(&r.s()?),
            source: r.io()?,
        }),
        "limit-nice" => Refusal::Limits(LimitError::Nice(r.io()?)),
        "limit-oom" => Refusal::Limits(LimitError::OomScore(r.io()?)),
        "limit-cgroup" => Refusal::Limits(LimitError::Cgroup {
            step: intern(&r.s()?),
            path: r.p()?,
            source: r.io()?,
        }),
        "confine" => {
            let code = Some(r.s()?).filter(|c| !c.is_empty());
            Refusal::Confine(BackendError::reported(code, r.s()?, None))
        }
        "confine-remedy" => {
            let code = Some(r.s()?).filter(|c| !c.is_empty());
            let message = r.s()?;
            let remedy = match r.s()?.as_str() {
                "read" => crate::remedy::Remedy::Read(r.p()?),
                "exec" => crate::remedy::Remedy::Exec(r.p()?),
                _ => return Err(MalformedReport),
            };
            Refusal::Confine(BackendError::reported(code, message, Some(remedy)))
        }
        "check" => {
            let attempt = intern(&r.s()?);
            let observed = match r.s()?.as_str() {
                "worked" => Observed::Worked,
                "other-error" => Observed::OtherError(r.io()?),
                "failed" => Observed::Failed(r.io()?),
                _ => return Err(MalformedReport),
            };
            Refusal::Check(CheckFailure { attempt, observed })
        }
        "session" => Refusal::Session(r.io()?),
        "signals" => Refusal::Signals(r.io()?),
        "program-start" => Refusal::ProgramStart {
            start: match r.s()?.as_str() {
                "path" => ProgramStart::ExecByPath,
                "opened" => ProgramStart::ExecOpenedBefore,
                "spawn" => ProgramStart::SpawnAndWait,
                _ => return Err(MalformedReport),
            },
        },
        "exec" => Refusal::Exec {
            program: r.p()?,
            source: r.io()?,
        },
        "working-folder" => Refusal::WorkingFolder {
            path: r.p()?,
            source: r.io()?,
        },
        "fault" => Refusal::Fault {
            phase: intern(&r.s()?),
        },
        "panic" => Refusal::Panic { message: r.s()? },
        _ => return Err(MalformedReport),
    };
    if !r.0.is_empty() {
        return Err(MalformedReport);
    }
    Ok(refusal)
}

fn decode_wire(r: &mut Reader) -> Result<WireError, MalformedReport> {
    Ok(match r.s()?.as_str() {
        "version" => WireError::Version {
            found: r.o()?,
            expected: crate::backend::wire::FORMAT,
        },
        "unknown-key" => WireError::UnknownKey { key: r.o()? },
        "missing-value" => WireError::MissingValue {
            key: intern(&r.s()?),
        },
        "canary" => WireError::Canary { count: r.n()? },
        "number" => WireError::Number {
            key: intern(&r.s()?),
            value: r.o()?,
        },
        "no-program" => WireError::NoProgram,
        "relative-program" => WireError::RelativeProgram { path: r.p()? },
        "relative-dir" => WireError::RelativeDir { path: r.p()? },
        "unknown-allowance" => WireError::UnknownAllowance { value: r.o()? },
        "host" => WireError::Host { value: r.o()? },
        "limit" => WireError::Limit { value: r.o()? },
        "variable" => WireError::Variable { value: r.o()? },
        "scratch" => WireError::Scratch { value: r.o()? },
        "identity" => WireError::Identity {
            key: intern(&r.s()?),
            value: r.o()?,
        },
        "policy-relative" => WireError::Policy(PolicyError::Relative { path: r.p()? }),
        "policy-nul" => WireError::Policy(PolicyError::ContainsNul { path: r.p()? }),
        "policy-unreadable" => WireError::Policy(PolicyError::Unreadable {
            path: r.p()?,
            source: r.io()?,
        }),
        "policy-link" => WireError::Policy(PolicyError::LinkToFolder {
            path: r.p()?,
            target: r.p()?,
        }),
        "policy-not-canonical" => WireError::Policy(PolicyError::NotCanonical { path: r.p()? }),
        "policy-write" => {
            let path = r.p()?;
            let token = r.s()?;
            let problem = crate::opt_in::write_problem::WriteProblem::from_token(&token, r.p()?)
                .ok_or(MalformedReport)?;
            WireError::Policy(PolicyError::Write { path, problem })
        }
        _ => return Err(MalformedReport),
    })
}

/// One `&'static str` per distinct name. The names come from the launcher's own constants, written
/// before the program runs, so there are a handful.
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.extend_from_slice(bytes.len().to_string().as_bytes());
        self.0.push(b':');
        self.0.extend_from_slice(bytes);
        self
    }
    fn s(&mut self, text: &str) -> &mut Self {
        self.field(text.as_bytes())
    }
    fn o(&mut self, text: &std::ffi::OsStr) -> &mut Self {
        self.field(text.as_bytes())
    }
    fn p(&mut self, path: &std::path::Path) -> &mut Self {
        self.o(path.as_os_str())
    }
    fn n(&mut self, number: impl ToString) -> &mut Self {
        self.s(&number.to_string())
    }
    fn io(&mut self, error: &io::Error) -> &mut Self {
        match error.raw_os_error() {
            Some(errno) => self.n(errno),
            None => self.s("-").s(&crate::error::report::one_line(error)),
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn field(&mut self) -> Result<&[u8], MalformedReport> {
        let colon = self
            .0
            .iter()
            .position(|&b| b == b':')
            .ok_or(MalformedReport)?;
        let len: usize = std::str::from_utf8(&self.0[..colon])
            .ok()
            .and_then(|n| n.parse().ok())
            .ok_or(MalformedReport)?;
        let rest = &self.0[colon + 1..];
        if rest.len() < len {
            return Err(MalformedReport);
        }
        let (field, rest) = rest.split_at(len);
        self.0 = rest;
        Ok(field)
    }
    fn s(&mut self) -> Result<String, MalformedReport> {
        String::from_utf8(self.field()?.to_vec()).map_err(|_| MalformedReport)
    }
    fn o(&mut self) -> Result<OsString, MalformedReport> {
        Ok(OsString::from_vec(self.field()?.to_vec()))
    }
    fn p(&mut self) -> Result<PathBuf, MalformedReport> {
        self.o().map(PathBuf::from)
    }
    fn n<T: std::str::FromStr>(&mut self) -> Result<T, MalformedReport> {
        self.s()?.parse().map_err(|_| MalformedReport)
    }
    fn io(&mut self) -> Result<io::Error, MalformedReport> {
        let first = self.s()?;
        if first == "-" {
            return Ok(io::Error::other(self.s()?));
        }
        first
            .parse()
            .map(io::Error::from_raw_os_error)
            .map_err(|_| MalformedReport)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::report::one_line;

    #[test]
    fn refusals_survive_the_report() {
        let refusals = vec![
            Refusal::Fault { phase: "verify" },
            Refusal::ProgramStart {
                start: ProgramStart::SpawnAndWait,
            },
            Refusal::ProgramStart {
                start: ProgramStart::ExecOpenedBefore,
            },
            Refusal::Orphaned,
            Refusal::ParentChanged {
                expected: 4,
                found: 1,
            },
            Refusal::Exec {
                program: PathBuf::from(OsString::from_vec(b"/a\xff b".to_vec())),
                source: io::Error::from_raw_os_error(libc::ENOENT),
            },
            Refusal::WorkingFolder {
                path: PathBuf::from("/no/such"),
                source: io::Error::from_raw_os_error(libc::ENOENT),
            },
            Refusal::Arguments(WireError::RelativeDir {
                path: PathBuf::from("work"),
            }),
            Refusal::Check(CheckFailure {
                attempt: "read the canary",
                observed: Observed::Worked,
            }),
            Refusal::Arguments(WireError::Policy(PolicyError::Unreadable {
                path: PathBuf::from("/x"),
                source: io::Error::from_raw_os_error(libc::ENOENT),
            })),
            Refusal::Limits(LimitError::Cgroup {
                step: "making the cgroup",
                path: PathBuf::from("/sys/fs/cgroup/sandbox-1"),
                source: io::Error::other("odd"),
            }),
            Refusal::Confine(BackendError::new(io::Error::other("landlock: too old"))),
            Refusal::Confine(
                BackendError::coded("loader", io::Error::other("the loader is not readable"))
                    .with_remedy(crate::remedy::Remedy::Read(PathBuf::from("/usr"))),
            ),
            Refusal::Panic {
                message: "a\nb".into(),
            },
            Refusal::ProcessesUnavailable,
            Refusal::HostsUnavailable,
            Refusal::WriteFolder {
                path: PathBuf::from("/w/bin"),
                problem: crate::opt_in::write_problem::WriteProblem::BeneathExec {
                    exec: PathBuf::from("/w"),
                },
            },
            Refusal::Arguments(WireError::Policy(PolicyError::Write {
                path: PathBuf::from("/"),
                problem: crate::opt_in::write_problem::WriteProblem::Root,
            })),
        ];
        for refusal in refusals {
            let decoded = decode(&encode(&refusal)).unwrap();
            assert_eq!(one_line(&decoded), one_line(&refusal));
            assert_eq!(
                std::mem::discriminant(&decoded),
                std::mem::discriminant(&refusal)
            );
        }
        // The remedy arrives typed, and the text names it as this process names remedies.
        let Refusal::Confine(confine) = decode(&encode(&Refusal::Confine(
            BackendError::coded("loader", io::Error::other("the loader is not readable"))
                .with_remedy(crate::remedy::Remedy::Read(PathBuf::from("/usr"))),
        )))
        .unwrap() else {
            panic!("not confine")
        };
        assert_eq!(confine.code(), Some("loader"));
        assert_eq!(
            confine.remedy(),
            Some(&crate::remedy::Remedy::Read(PathBuf::from("/usr")))
        );
        assert_eq!(
            one_line(&confine),
            "the loader is not readable: add .read(\"/usr\")"
        );
        let Refusal::Exec { source, .. } = decode(&encode(&Refusal::Exec {
            program: "/x".into(),
            source: io::Error::from_raw_os_error(libc::ENOENT),
        }))
        .unwrap() else {
            panic!("not exec")
        };
        assert_eq!(source.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn garbage_is_malformed() {
        for bytes in [&b""[..], b"5:fault", b"5:fault6:verify1:x", b"3:odd", b"x:"] {
            assert!(decode(bytes).is_err(), "{bytes:?}");
        }
    }
}
