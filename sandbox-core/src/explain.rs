//! What the sandbox refused a program, asked for per launch: each refused file access with the
//! right it needed, each refused system call with the rule that refused it, the grants that would
//! allow what a policy can allow, and what no policy allows.
//!
//! The types are the platform's neither: a backend that can watch a program (Linux traces it)
//! fills an [`Explanation`] through a [`Tracer`] from [`Backend::tracer`]; a backend that cannot
//! answers [`ExplainError::Unsupported`], and an explained launch is then refused before anything
//! runs rather than run without what was asked for. Explaining never changes the launch: the
//! policy, the filters and the enforcement check are those of a launch without it.
//!
//! [`Backend::tracer`]: crate::Backend::tracer
//!
//! ```
//! use sandbox_core::explain::{PathRight, Explanation, Right, Seen};
//!
//! let mut explanation = Explanation::new(Seen::Everything);
//! let access = PathRight {
//!     named: "/etc/ssl/openssl.cnf".into(),
//!     resolved: "/etc/ssl/openssl.cnf".into(),
//!     right: Right::Read,
//! };
//! explanation.add_file(access, "openat");
//! assert_eq!(explanation.sentences(), ["reading /etc/ssl/openssl.cnf was refused"]);
//! assert_eq!(explanation.grants()[0].to_string(), "--read /etc/ssl/openssl.cnf");
//! assert_eq!(explanation.grants()[0].call(), r#"read("/etc/ssl/openssl.cnf")"#);
//! ```

mod learn;
pub(crate) mod paths;
mod refusal;
mod remedy;
mod report;
pub(crate) mod tracer;

use std::path::Path;

pub use paths::{is_secret, shown, SECRET_NAMES};
pub use refusal::{CallRefusal, FileRefusal, PathRight, Right, Rule};
pub use remedy::{Because, Learnt, OptIn, OptInAllows, Remedy, Withheld};
pub use report::Report;
pub use tracer::{ExplainError, Tracer};

use report::file_sentence;

/// How the program ended, as far as an explanation tells success from failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// It exited 0: it went on past every refusal, and none was where it failed.
    Succeeded,
    /// It exited otherwise or was killed: the last refusal that is not routine
    /// ([`Explanation::cause`]) is the likeliest cause.
    Failed,
}

/// Something the program was refused that no policy allows, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Never {
    /// What: `create in /tmp`, `socket`.
    pub what: String,
    /// Why no policy allows it.
    pub why: String,
}

/// How much of the program the backend saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Seen {
    /// Every call of the program, from its start to its end.
    Everything,
    /// Nothing: the system did not let this process watch the program (a security module
    /// refusing `PTRACE_TRACEME`). The program ran confined as usual.
    NotTraced,
    /// The launcher ended before it executed the program (a refused launch): there were no
    /// calls of the program to see.
    NoProgram,
    /// The program was watched, but some of its system calls could not be read: what they were
    /// refused may be missing.
    NotEveryCall,
}

/// What the sandbox refused a program, with what would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Explanation {
    /// How much was seen.
    pub seen: Seen,
    /// Refused file accesses, in the order first seen.
    pub files: Vec<FileRefusal>,
    /// Refused system calls, in the order first seen.
    pub calls: Vec<CallRefusal>,
    /// Refused file accesses past the first [`MAX_DISTINCT`] distinct ones, only counted: the
    /// program chooses the paths, and the unconfined watcher must not grow without end.
    pub more_files: u64,
    /// The refusal seen last, of all, routine ones included.
    pub last: Option<Last>,
    /// The refusal seen last that is not routine (neither a file of [`ROUTINE_FILES`] nor a
    /// call of [`ROUTINE_CALLS`]): where the program failed, the likeliest cause (it went on
    /// from the ones before). See [`Explanation::likeliest_cause`].
    pub cause: Option<Last>,
    /// How the program ended, where the backend knows it: `None` for an explanation built by
    /// hand.
    pub outcome: Option<Outcome>,
    /// The launch's write folders ([`Policy::allow_write`](crate::Policy::allow_write)): a write
    /// refused beneath one is not one the write opt-in would allow.
    pub write_folders: Vec<std::path::PathBuf>,
}

/// Which refusal came last: an index into [`Explanation::files`] or [`Explanation::calls`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Last {
    /// `files[i]`.
    File(usize),
    /// `calls[i]`.
    Call(usize),
}

/// Files a program's runtime looks for and goes on without (the loader's cache, the locale
/// alias table, the user and host databases, the time zone): refused in nearly every run, and
/// rarely why one failed.
pub const ROUTINE_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.preload",
    "/etc/locale.alias",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
    "/etc/host.conf",
    "/etc/gai.conf",
];

/// Calls refused in nearly every run and gone on without: `clone3`, for which the C library
/// falls back to `clone` when it gets `ENOSYS`.
pub const ROUTINE_CALLS: &[&str] = &["clone3"];

/// The most distinct refused file accesses (and calls) an explanation keeps.
pub const MAX_DISTINCT: usize = 256;

impl Explanation {
    /// An empty explanation of a run seen as `seen`.
    pub fn new(seen: Seen) -> Self {
        Self {
            seen,
            files: Vec::new(),
            calls: Vec::new(),
            more_files: 0,
            last: None,
            cause: None,
            outcome: None,
            write_folders: Vec::new(),
        }
    }

    /// Whether `file` is one a runtime looks for and goes on without ([`ROUTINE_FILES`]).
    pub fn is_routine(file: &FileRefusal) -> bool {
        ROUTINE_FILES
            .iter()
            .any(|routine| file.access.resolved == Path::new(routine))
    }

    /// Whether `call` is one a runtime goes on without ([`CallRefusal::routine`]).
    pub fn is_routine_call(call: &CallRefusal) -> bool {
        call.routine
    }

    /// The likeliest cause of a failure: the last refusal that is not routine
    /// ([`Explanation::cause`]). `None` when the program succeeded (it failed nowhere), or when
    /// nothing but routine lookups was refused.
    pub fn likeliest_cause(&self) -> Option<Last> {
        if self.outcome == Some(Outcome::Succeeded) {
            return None;
        }
        self.cause
    }

    /// The likeliest cause ([`Explanation::likeliest_cause`]) as a sentence (see
    /// [`Explanation::sentences`]): never a routine lookup, and `None` when the program
    /// succeeded.
    pub fn last_sentence(&self) -> Option<String> {
        match self.likeliest_cause()? {
            Last::File(i) => self.files.get(i).map(file_sentence),
            Last::Call(i) => self
                .calls
                .get(i)
                .map(|c| format!("the system call {} was refused", c.name)),
        }
    }

    /// Whether nothing was refused.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.calls.is_empty()
    }

    /// Counts a refused access.
    pub fn add_file(&mut self, access: PathRight, call: &str) {
        let full = self.files.len() >= MAX_DISTINCT;
        let at = match self.files.iter().position(|f| f.access == access) {
            Some(at) => {
                self.files[at].count += 1;
                at
            }
            None if full => {
                self.more_files += 1;
                return;
            }
            None => {
                self.files.push(FileRefusal {
                    access,
                    call: call.to_owned(),
                    count: 1,
                });
                self.files.len() - 1
            }
        };
        self.last = Some(Last::File(at));
        if !Self::is_routine(&self.files[at]) {
            self.cause = Some(Last::File(at));
        }
    }

    /// Counts a refused call, once for each time it is added; routine if it is one of
    /// [`ROUTINE_CALLS`].
    pub fn add_call(&mut self, name: String, answer: String, rules: Vec<Rule>) {
        let routine = ROUTINE_CALLS.contains(&name.as_str());
        self.add_call_as(name, answer, rules, routine);
    }

    /// Counts a refused call the backend knows to be routine ([`CallRefusal::routine`]).
    pub fn add_routine_call(&mut self, name: String, answer: String, rules: Vec<Rule>) {
        self.add_call_as(name, answer, rules, true);
    }

    fn add_call_as(&mut self, name: String, answer: String, rules: Vec<Rule>, routine: bool) {
        let full = self.calls.len() >= MAX_DISTINCT;
        let at = match self.calls.iter().position(|c| {
            c.name == name && c.answer == answer && c.rules == rules && c.routine == routine
        }) {
            Some(at) => {
                self.calls[at].count += 1;
                at
            }
            None if full => return,
            None => {
                self.calls.push(CallRefusal {
                    name,
                    answer,
                    rules,
                    count: 1,
                    routine,
                });
                self.calls.len() - 1
            }
        };
        self.last = Some(Last::Call(at));
        if !Self::is_routine_call(&self.calls[at]) {
            self.cause = Some(Last::Call(at));
        }
    }

    /// Each refusal as a sentence for a user, in the order seen: `reading /etc/ssl/openssl.cnf
    /// was refused`, `the system call socket was refused`. Paths are [`shown`].
    pub fn sentences(&self) -> Vec<String> {
        let files = self.files.iter().map(file_sentence);
        let calls = self
            .calls
            .iter()
            .map(|c| format!("the system call {} was refused", c.name));
        files.chain(calls).collect()
    }

    /// The grants suggested: [`Explanation::learnt`] with nothing kept clear and no routine
    /// file. What the command line prints and what `--suggest` writes come from `learnt`, so
    /// they say the same thing.
    pub fn grants(&self) -> Vec<Remedy> {
        self.learnt(&[]).grants
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::learn::WRITING;
    use super::*;

    fn refused(right: Right, path: &str) -> FileRefusal {
        FileRefusal {
            access: PathRight {
                named: PathBuf::from(path),
                resolved: PathBuf::from(path),
                right,
            },
            call: "openat".to_owned(),
            count: 1,
        }
    }

    /// A learnt profile grants a folder only where several of its entries were read, and
    /// nothing that covers the canary, the temporary folder or the home as a whole, nothing
    /// that looks like a secret, and no folder only listed.
    #[test]
    fn a_learnt_profile_is_as_small_as_what_was_read_and_keeps_clear() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![
            refused(Right::Read, "/etc/hostname"),
            refused(Right::Read, "/opt/app/conf/a.toml"),
            refused(Right::Read, "/opt/app/conf/b.toml"),
            refused(Right::Read, "/opt/app/conf/a.toml"),
            refused(Right::Read, "/opt/tool/only.txt"),
            refused(Right::Execute, "/opt/app/bin/run"),
            // The program reads two files beside the canary to have their folder granted, two
            // in the home's folder, and lists the home itself.
            refused(Right::Read, "/tmp/canary-x"),
            refused(Right::Read, "/tmp/other"),
            refused(Right::Read, "/home/u/.ssh/id_rsa"),
            refused(Right::Read, "/home/u/.netrc"),
            refused(Right::Read, "/home/u/notes"),
            refused(Right::List, "/home/u"),
            refused(Right::Read, "/proc/99/environ"),
            refused(Right::Read, "/etc/passwd"),
            refused(Right::Write, "/opt/app/conf/a.toml"),
            // Two files of a project, one of them its secrets: its folder is not granted.
            refused(Right::Read, "/srv/proj/main.py"),
            refused(Right::Read, "/srv/proj/.env"),
            // A folder listed, and two files of a folder of /proc.
            refused(Right::List, "/opt/data"),
            refused(Right::Read, "/proc/sys/kernel/a"),
            refused(Right::Read, "/proc/sys/kernel/b"),
        ];
        let (canary, temp, home) = (
            Path::new("/tmp/canary-x"),
            Path::new("/tmp"),
            Path::new("/home/u"),
        );
        let learnt = report.learnt(&[canary, temp, home]);
        let shown: Vec<String> = learnt.grants.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "--read /etc/hostname",
                "--read /home/u/notes",
                "--read /opt/app/conf",
                "--read /opt/tool/only.txt",
                "--read /proc/sys/kernel/a",
                "--read /proc/sys/kernel/b",
                "--read /srv/proj/main.py",
                "--read /tmp/other",
                "--exec /opt/app/bin/run",
            ]
        );
        let withheld: Vec<(String, Because)> = learnt
            .withheld
            .iter()
            .map(|w| (w.grant.to_string(), w.because.clone()))
            .collect();
        assert_eq!(
            withheld,
            [
                ("--read /etc/passwd".to_owned(), Because::Routine),
                ("--read /home/u".to_owned(), Because::Listed),
                ("--read /home/u/.netrc".to_owned(), Because::Secret),
                ("--read /home/u/.ssh/id_rsa".to_owned(), Because::Secret),
                ("--read /opt/data".to_owned(), Because::Listed),
                ("--read /proc/99/environ".to_owned(), Because::NotAPath),
                ("--read /proc/sys/kernel".to_owned(), Because::TooWide),
                ("--read /srv/proj/.env".to_owned(), Because::Secret),
                ("--read /tmp".to_owned(), Because::TooWide),
                (
                    "--read /tmp/canary-x".to_owned(),
                    Because::Covers(canary.into())
                ),
            ]
        );
        // The routine files are suggested only when asked.
        let all = report.learnt_all(&[canary, temp, home]);
        assert!(all.grants.contains(&Remedy::Read("/etc/passwd".into())));
        // The printed report says the same as the learnt profile.
        assert_eq!(report.grants(), report.learnt(&[]).grants);
    }

    /// A program that exited 0 failed nowhere: no refusal is its likeliest cause, and the
    /// routine ones are counted on one line, never suggested. One that failed names the last
    /// refusal that is not routine, and suggests nothing where no grant gets it past that one.
    #[test]
    fn success_and_failure_are_told_apart() {
        let mut report = Explanation::new(Seen::Everything);
        let access = |right, path: &str| refused(right, path).access;
        report.add_file(access(Right::Read, "/etc/ssl/openssl.cnf"), "openat");
        report.add_file(access(Right::Read, "/etc/ld.so.preload"), "openat");
        report.add_file(access(Right::Read, "/etc/passwd"), "openat");

        report.outcome = Some(Outcome::Succeeded);
        assert_eq!(report.likeliest_cause(), None);
        assert_eq!(report.last_sentence(), None);
        let text = report.to_string();
        assert!(!text.contains("likeliest"), "{text}");
        assert!(!text.contains("where the program failed"), "{text}");
        assert!(text.contains(
            "explain: 2 routine lookup(s) refused, which most programs go on without, neither \
             listed nor suggested (--explain=all does both): /etc/ld.so.preload, /etc/passwd\n"
        ));
        assert!(!text.contains("refused read of /etc/passwd"), "{text}");
        assert_eq!(
            report.grants(),
            [Remedy::Read("/etc/ssl/openssl.cnf".into())]
        );

        report.outcome = Some(Outcome::Failed);
        assert_eq!(
            report.last_sentence().as_deref(),
            Some("reading /etc/ssl/openssl.cnf was refused")
        );
        assert!(report.to_string().contains(
            "explain: the likeliest cause: reading /etc/ssl/openssl.cnf was refused (the last \
             refusal that is not routine; the program went on from the ones before it)\n"
        ));
        // Failing at a call no policy allows: the read would not get it past, so it is withheld.
        report.add_call("socket".into(), "EPERM".into(), Vec::new());
        report.add_call("clone3".into(), "ENOSYS".into(), Vec::new());
        assert_eq!(
            report.last_sentence().as_deref(),
            Some("the system call socket was refused")
        );
        let learnt = report.learnt(&[]);
        assert_eq!(learnt.grants, []);
        assert!(learnt.withheld.contains(&Withheld {
            grant: Remedy::Read("/etc/ssl/openssl.cnf".into()),
            because: Because::NotTheCause
        }));

        // Nothing but routine lookups: nothing to blame on the sandbox.
        let mut routine = Explanation::new(Seen::Everything);
        routine.add_file(access(Right::Read, "/etc/ld.so.cache"), "openat");
        routine.outcome = Some(Outcome::Failed);
        assert_eq!(routine.last_sentence(), None);
        assert!(routine
            .to_string()
            .contains("explain: the program failed, and nothing but routine lookups was"));
        assert_eq!(routine.grants(), []);
    }

    /// A process's folder in /proc names another process on the next run: never suggested.
    #[test]
    fn a_process_folder_is_never_suggested() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![
            refused(Right::Read, "/proc/1234/status"),
            refused(Right::Read, "/proc/cpuinfo"),
        ];
        let grants: Vec<String> = report
            .grants()
            .iter()
            .map(|g| g.path().display().to_string())
            .collect();
        assert_eq!(grants, ["/proc/cpuinfo"]);
    }

    /// The program chooses the paths it is refused: past a bound they are only counted.
    #[test]
    fn distinct_refusals_are_bounded() {
        let mut report = Explanation::new(Seen::Everything);
        for i in 0..MAX_DISTINCT + 10 {
            let access = refused(Right::Read, &format!("/etc/x{i}")).access;
            report.add_file(access.clone(), "openat");
            report.add_file(access, "openat");
        }
        assert_eq!(report.files.len(), MAX_DISTINCT);
        assert_eq!(report.more_files, 20);
        assert!(report.to_string().contains("20 more refused file accesses"));
    }

    /// A file read is suggested as itself, a folder only where two of its files were read and
    /// it is not a top-level one; a folder listed is not suggested.
    #[test]
    fn grants_are_the_smallest_that_cover_the_refusals() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![
            refused(Right::Read, "/etc/ssl/openssl.cnf"),
            refused(Right::Read, "/etc/ssl/certs/a.pem"),
            refused(Right::Read, "/etc/hosts"),
            refused(Right::Read, "/etc/hostname"),
            refused(Right::Read, "/opt/tool/lib/x/libx.so"),
            refused(Right::Read, "/opt/tool/lib/x/liby.so"),
            refused(Right::List, "/opt/tool/lib"),
            refused(Right::Execute, "/opt/tool/bin/tool"),
            refused(Right::Create, "/tmp/x"),
        ];
        assert_eq!(
            report.grants(),
            [
                Remedy::Read("/etc/hostname".into()),
                Remedy::Read("/etc/hosts".into()),
                Remedy::Read("/etc/ssl/certs/a.pem".into()),
                Remedy::Read("/etc/ssl/openssl.cnf".into()),
                Remedy::Read("/opt/tool/lib/x".into()),
                Remedy::Exec("/opt/tool/bin/tool".into()),
            ]
        );
        assert_eq!(
            report.never(),
            [Never {
                what: "create in /tmp".to_owned(),
                why: WRITING.to_owned()
            }]
        );
    }

    #[test]
    fn secrets_are_named_by_their_components() {
        for secret in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.gnupg",
            "/home/u/.aws/credentials",
            "/srv/app/.env",
            "/srv/app/.env.local",
            "/home/u/.local/share/keyrings/login.keyring",
            "/etc/shadow",
            "/etc/ssh/ssh_host_ed25519_key",
        ] {
            assert!(is_secret(Path::new(secret)), "{secret}");
        }
        for plain in ["/etc/ssl/openssl.cnf", "/srv/app/environment", "/etc/sshd"] {
            assert!(!is_secret(Path::new(plain)), "{plain}");
        }
    }

    #[test]
    fn control_characters_are_escaped_and_never_suggested() {
        let mut report = Explanation::new(Seen::Everything);
        report.files = vec![refused(Right::Read, "/opt/a\x1b[2Jb/c")];
        assert_eq!(report.grants(), []);
        assert_eq!(
            report.to_string(),
            "explain: refused read of /opt/a\\x1b[2Jb/c by openat, 1 time(s)\n\
             explain: not suggested: /opt/a\\x1b[2Jb/c: it is no path to copy\n"
        );
        assert_eq!(
            report.sentences(),
            ["reading /opt/a\\x1b[2Jb/c was refused"]
        );
    }

    #[test]
    fn an_empty_report_says_so() {
        assert_eq!(
            Explanation::new(Seen::Everything).to_string(),
            "explain: nothing was refused\n"
        );
        assert!(Explanation::new(Seen::NotTraced)
            .to_string()
            .starts_with("explain: nothing could be seen:"));
    }

    /// What an opt-in allows is named apart, never suggested: a call whose rows the processes
    /// opt-in lifts, a write in a folder that may be a write folder; not a write beneath a write
    /// folder of the launch, in a system or top-level folder, or covering what is kept clear.
    #[test]
    fn an_opt_in_is_named_never_suggested_and_only_where_it_would_allow() {
        let mut report = Explanation::new(Seen::Everything);
        report.write_folders = vec![PathBuf::from("/srv/work/w")];
        report.files = vec![
            refused(Right::Create, "/srv/work/other/new"),
            refused(Right::Write, "/srv/work/other/old"),
            refused(Right::Create, "/srv/work/w/fifo"),
            refused(Right::Create, "/etc/x"),
            refused(Right::Remove, "/opt/x"),
            refused(Right::Create, "/var/tmp/kept/x"),
            refused(Right::Read, "/srv/work/in"),
        ];
        let row = |reason: &str, opt_in: Option<OptIn>| Rule {
            rule: format!("`{reason}`"),
            reason: reason.to_owned(),
            opt_in,
        };
        report.add_call(
            "clone".into(),
            "EPERM".into(),
            vec![row("a new process", Some(OptIn::Processes))],
        );
        report.add_call(
            "socket".into(),
            "EPERM".into(),
            vec![row("a new socket", None)],
        );
        // Two rows, one the opt-in does not lift: no opt-in allows it for certain.
        report.add_call(
            "kill".into(),
            "EPERM".into(),
            vec![
                row("a signal", Some(OptIn::Processes)),
                row("another", None),
            ],
        );
        let kept = [Path::new("/var/tmp/kept/canary")];
        let opt_ins = report.opt_ins(&kept);
        let named: Vec<(&str, String)> = opt_ins
            .iter()
            .map(|o| (o.what.as_str(), o.opt_in.flag()))
            .collect();
        assert_eq!(
            named,
            [
                (
                    "create in /srv/work/other",
                    "--write /srv/work/other".to_owned()
                ),
                (
                    "write in /srv/work/other",
                    "--write /srv/work/other".to_owned()
                ),
                ("clone", "--processes".to_owned()),
            ]
        );
        let never: Vec<String> = report
            .never_beside(&kept)
            .into_iter()
            .map(|n| n.what)
            .collect();
        assert_eq!(
            never,
            [
                "create in /srv/work/w",
                "create in /etc",
                "remove in /opt",
                "create in /var/tmp/kept",
                "socket",
                "kill"
            ]
        );
        assert!(report
            .never_beside(&kept)
            .iter()
            .any(|n| n.why.starts_with("beneath the write folder /srv/work/w ")));
        // The suggestion is the read alone.
        assert_eq!(
            report.learnt(&kept).grants,
            [Remedy::Read(PathBuf::from("/srv/work/in"))]
        );
        let text = report.report(&kept, false).to_string();
        assert!(
            text.contains(
                "explain: an opt-in allows: clone: a new process; --processes \
                 (Policy::allow_processes) lets the program start processes, confined as it is \
                 (an opt-in only the application names: never suggested)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_call_is_counted_once_per_refusal_and_said_by_name() {
        let mut report = Explanation::new(Seen::Everything);
        let rule = || {
            vec![Rule {
                rule: "`socket` when always".to_owned(),
                reason: "no network".to_owned(),
                opt_in: None,
            }]
        };
        report.add_call("socket".into(), "EPERM".into(), rule());
        report.add_call("socket".into(), "EPERM".into(), rule());
        assert_eq!(report.calls.len(), 1);
        assert_eq!(report.calls[0].count, 2);
        assert_eq!(report.sentences(), ["the system call socket was refused"]);
    }
}

#[cfg(all(test, unix))]
mod unsupported {
    use crate::backend::{BackendError, Launch, Support};
    use crate::{Backend, Policy, RunOptions, Sandbox, SpawnError};

    struct Mute;

    impl Backend for Mute {
        fn name(&self) -> &'static str {
            "mute"
        }
        fn support(&self) -> Support {
            Support::Supported { facts: Vec::new() }
        }
        fn confine(&self, _: &Launch) -> Result<(), BackendError> {
            Err(BackendError::new(std::io::Error::other("never called")))
        }
    }

    /// A backend without a tracer refuses an explained launch before anything is spawned,
    /// rather than run it without the explanation that was asked for.
    #[test]
    fn a_backend_that_cannot_explain_refuses_before_anything_runs() {
        let options = RunOptions::new().explain(true);
        match Sandbox::new(&Mute).run(&Policy::new(), "/bin/true", [""; 0], &options) {
            Err(SpawnError::Explain(super::ExplainError::Unsupported { backend: "mute" })) => {}
            other => panic!("expected the backend's refusal to explain, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod grant_tests {
    use super::Remedy;
    use std::path::PathBuf;

    #[test]
    fn a_grant_reads_as_a_flag_for_a_shell_and_as_a_call_for_an_application() {
        let grant = Remedy::Read(PathBuf::from("/etc/ssl"));
        assert_eq!(grant.to_string(), "--read /etc/ssl");
        assert_eq!(grant.call(), r#"read("/etc/ssl")"#);
        assert_eq!(
            Remedy::Exec(PathBuf::from("/usr/bin/env")).call(),
            r#"exec("/usr/bin/env")"#
        );
    }
}
