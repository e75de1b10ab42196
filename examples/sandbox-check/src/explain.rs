//! `--explain`: runs the program as a plain run does, traced by `sandbox_linux::explain`, then
//! prints what the sandbox refused it and the command line that would allow what a policy can
//! allow.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitStatus};

use sandbox_core::Policy;

use crate::cli::Run;

cfg_if::cfg_if! {
    if #[cfg(target_os = "linux")] {
        use std::ffi::OsString;
        use std::path::PathBuf;

        use nix::sys::signal::{kill, SigSet, Signal};
        use nix::unistd::Pid;
        use sandbox_linux::explain::{Explainer, Explanation, Seen};

        /// Spawns `command` (the launch of `run`, under `policy`, of `program`) traced, passes
        /// on the signals a plain run passes on, and prints the report once it has ended.
        pub fn launch(
            run: &Run,
            policy: &Policy,
            program: &Path,
            command: Command,
            canary: &Path,
            env: &BTreeMap<String, String>,
        ) -> Result<ExitStatus, ExplainFailed> {
            let explainer = Explainer::new(policy, program)?;
            let signals = forwarded();
            signals.thread_block().map_err(ExplainFailed::Signals)?;
            let traced = explainer.spawn(command)?;
            let pid = Pid::from_raw(traced.id() as i32);
            std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || {
                    while let Ok(signal) = signals.wait() {
                        // The program may have ended already; nothing else to do then.
                        let _ = kill(pid, signal);
                    }
                })
                .map_err(ExplainFailed::SignalThread)?;
            let explained = traced.wait()?;
            let report = &explained.explanation;
            if run.json {
                for line in json_lines(run, report) {
                    eprintln!("{line}");
                }
            } else {
                eprint!("{report}");
                if let Some(argv) = suggested(run, report) {
                    let words: Vec<String> = argv.iter().map(quote).collect();
                    eprintln!("explain: suggested: {}", words.join(" "));
                }
            }
            if let Some(file) = &run.suggest {
                learn(run, policy, env, report, canary, file);
            }
            Ok(explained.status)
        }

        /// `--suggest FILE`: writes the learnt profile and says what went into it. The run's
        /// status stays the program's own: a file that could not be written is said on
        /// standard error.
        fn learn(
            run: &Run,
            policy: &Policy,
            env: &BTreeMap<String, String>,
            report: &Explanation,
            canary: &Path,
            file: &Path,
        ) {
            let kept = crate::profile::kept_clear(canary);
            let kept: Vec<&Path> = kept.iter().map(PathBuf::as_path).collect();
            let learnt = report.learnt(&kept);
            let mut words = vec![run.program.clone()];
            words.extend(run.args.iter().cloned());
            match crate::profile::write_learnt(file, policy, env, &learnt, &report.never(), &words) {
                Ok(grants) => {
                    for grant in &grants {
                        eprintln!("explain: learnt: {grant}");
                    }
                    eprintln!(
                        "explain: wrote {} ({} learnt); run it with: sandbox-check --policy {} -- ...",
                        file.display(),
                        grants.len(),
                        file.display()
                    );
                }
                Err(e) => eprintln!(
                    "sandbox-check: writing the learnt profile {}: {e}",
                    file.display()
                ),
            }
        }

        /// Why the traced run failed.
        #[derive(Debug, thiserror::Error)]
        #[non_exhaustive]
        pub enum ExplainFailed {
            /// Tracing the launch failed.
            #[error("explaining")]
            Explain(#[from] sandbox_linux::explain::ExplainError),
            /// The signals to forward could not be blocked.
            #[error("blocking signals to forward them")]
            Signals(#[source] nix::Error),
            /// The thread that forwards them could not start.
            #[error("starting the signal thread")]
            SignalThread(#[source] std::io::Error),
        }

        fn forwarded() -> SigSet {
            let mut set = SigSet::empty();
            for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
                set.add(signal);
            }
            set
        }

        /// The command line with the flags the report suggests added, or `None` when it suggests
        /// none.
        fn suggested(run: &Run, report: &Explanation) -> Option<Vec<OsString>> {
            let grants = report.grants();
            if grants.is_empty() {
                return None;
            }
            // The whole command that would run: every flag of this one, then the grants.
            let mut argv: Vec<OsString> = vec!["sandbox-check".into()];
            let settings = &run.settings;
            if let Some(file) = &settings.policy {
                argv.extend(["--policy".into(), file.clone().into_os_string()]);
            }
            if let Some(bytes) = settings.scratch {
                argv.push(format!("--scratch={bytes}").into());
            }
            if let Some(bytes) = settings.memory {
                argv.extend(["--memory".into(), bytes.to_string().into()]);
            }
            for (flag, bound) in [
                ("--tasks", settings.tasks),
                ("--open-files", settings.open_files),
                ("--cpu-seconds", settings.cpu_seconds),
            ] {
                if let Some(bound) = bound {
                    let value = bound.limit().map_or("none".to_owned(), |n| n.to_string());
                    argv.extend([flag.into(), value.into()]);
                }
            }
            for path in &run.read {
                argv.extend(["--read".into(), path.clone().into_os_string()]);
            }
            for path in &run.exec {
                argv.extend(["--exec".into(), path.clone().into_os_string()]);
            }
            for grant in grants {
                argv.extend([grant.flag().into(), grant.path().as_os_str().to_owned()]);
            }
            argv.push("--".into());
            argv.push(run.program.clone());
            argv.extend(run.args.iter().cloned());
            Some(argv)
        }

        fn json_lines(run: &Run, report: &Explanation) -> Vec<String> {
            let string = |text: &str| serde_json::Value::from(text).to_string();
            let path = |p: &Path| string(&p.to_string_lossy());
            let mut lines = Vec::new();
            for file in &report.files {
                let a = &file.access;
                lines.push(format!(
                    "{{\"explain\":\"file\",\"right\":{},\"named\":{},\"resolved\":{},\"call\":{},\"count\":{}}}",
                    string(a.right.name()),
                    path(&a.named),
                    path(&a.resolved),
                    string(&file.call),
                    file.count
                ));
            }
            for call in &report.calls {
                let list = |items: Vec<String>| {
                    let quoted: Vec<String> = items.iter().map(|i| string(i)).collect();
                    format!("[{}]", quoted.join(","))
                };
                let rules = call.rules.iter();
                lines.push(format!(
                    "{{\"explain\":\"call\",\"call\":{},\"answer\":{},\"rules\":{},\"reasons\":{},\"count\":{}}}",
                    string(&call.name),
                    string(&call.answer),
                    list(rules.clone().map(|r| r.rule.clone()).collect()),
                    list(rules.map(|r| r.reason.clone()).collect()),
                    call.count
                ));
            }
            for grant in report.grants() {
                lines.push(format!(
                    "{{\"explain\":\"allow\",\"flag\":{},\"path\":{}}}",
                    string(grant.flag()),
                    path(grant.path())
                ));
            }
            for never in report.never() {
                lines.push(format!(
                    "{{\"explain\":\"never\",\"what\":{},\"why\":{}}}",
                    string(&never.what),
                    string(&never.why)
                ));
            }
            if let Some(argv) = suggested(run, report) {
                let words: Vec<String> =
                    argv.iter().map(|a| string(&a.to_string_lossy())).collect();
                lines.push(format!(
                    "{{\"explain\":\"suggested\",\"argv\":[{}]}}",
                    words.join(",")
                ));
            }
            let seen = match report.seen {
                Seen::Everything => "everything",
                Seen::NotTraced => "nothing: not traced",
                Seen::NoProgram => "nothing: the program never started",
                Seen::NotEveryCall => "not every call",
                _ => "unknown",
            };
            lines.push(format!(
                "{{\"explain\":\"summary\",\"seen\":{},\"files\":{},\"calls\":{}}}",
                string(seen),
                report.files.len(),
                report.calls.len()
            ));
            lines
        }

        /// `word` as a POSIX shell reads it back.
        fn quote(word: &OsString) -> String {
            let text = word.to_string_lossy();
            let plain = !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
            if plain {
                text.into_owned()
            } else {
                format!("'{}'", text.replace('\'', r"'\''"))
            }
        }
    } else {
        /// Tracing the program needs ptrace, which only the Linux backend uses; the launch is
        /// refused rather than run without the report that was asked for.
        pub fn launch(
            run: &Run,
            _policy: &Policy,
            _program: &Path,
            _command: Command,
            _canary: &Path,
            _env: &BTreeMap<String, String>,
        ) -> Result<ExitStatus, ExplainFailed> {
            Err(ExplainFailed::Unsupported { json: run.json })
        }

        /// Why the traced run failed: there is no tracer here.
        #[derive(Debug, thiserror::Error)]
        #[non_exhaustive]
        pub enum ExplainFailed {
            /// `--explain` needs Linux's ptrace.
            #[error("--explain {}exists on Linux only", if *.json { "--json " } else { "" })]
            Unsupported {
                /// Whether `--json` was given too.
                json: bool,
            },
        }
    }
}
