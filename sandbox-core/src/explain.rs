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

pub(crate) mod explanation;
mod learn;
pub(crate) mod paths;
mod refusal;
mod remedy;
mod report;
pub(crate) mod routine;
pub(crate) mod tracer;

pub use crate::remedy::Remedy;
pub use explanation::{Explanation, Last, Never, Outcome, Seen, MAX_DISTINCT};
pub use paths::{is_secret, shown, SECRET_NAMES};
pub use refusal::{CallRefusal, FileRefusal, PathRight, Right, Rule};
pub use remedy::{Because, Learnt, OptIn, OptInAllows, Withheld};
pub use report::Report;
pub use routine::{ROUTINE_CALLS, ROUTINE_FILES};
pub use tracer::{ExplainError, Tracer};

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::learn::WRITING;
    use super::*;
    use std::path::Path;

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
