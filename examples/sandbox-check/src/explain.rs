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
        use sandbox_core::explain::{Last, Learnt, Outcome};
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
            // One suggestion for the printed report, its command line and the learnt profile.
            let kept = crate::profile::kept_clear(canary);
            let kept: Vec<&Path> = kept.iter().map(PathBuf::as_path).collect();
            let learnt = report.suggestion(&kept, run.explain_all);
            if run.json {
                for line in json_lines(run, report, &learnt, &kept) {
                    eprintln!("{line}");
                }
            } else {
                eprint!("{}", report.report(&kept, run.explain_all));
                if let Some(argv) = suggested(run, &learnt) {
                    let words: Vec<String> = argv.iter().map(quote).collect();
                    eprintln!("explain: suggested: {}", words.join(" "));
                }
            }
            if let Some(file) = &run.suggest {
                learn(run, policy, env, report, &learnt, &kept, file);
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
            learnt: &Learnt,
            kept: &[&Path],
            file: &Path,
        ) {
            let mut words = vec![run.program.clone()];
            words.extend(run.args.iter().cloned());
            let refused = crate::profile::Refused {
                never: report.never_beside(kept),
                opt_ins: report.opt_ins(kept),
            };
            match crate::profile::write_learnt(file, policy, env, learnt, &refused, &words) {
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
        fn suggested(run: &Run, learnt: &Learnt) -> Option<Vec<OsString>> {
            let grants = &learnt.grants;
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

        fn json_lines(
            run: &Run,
            report: &Explanation,
            learnt: &Learnt,
            kept: &[&Path],
        ) -> Vec<String> {
            let string = |text: &str| serde_json::Value::from(text).to_string();
            let path = |p: &Path| string(&p.to_string_lossy());
            let mut lines = Vec::new();
            // Every file, routine ones too: `routine` tells them apart.
            for file in &report.files {
                let a = &file.access;
                lines.push(format!(
                    "{{\"explain\":\"file\",\"right\":{},\"named\":{},\"resolved\":{},\"call\":{},\"count\":{},\"routine\":{}}}",
                    string(a.right.name()),
                    path(&a.named),
                    path(&a.resolved),
                    string(&file.call),
                    file.count,
                    Explanation::is_routine(file)
                ));
            }
            for call in &report.calls {
                let list = |items: Vec<String>| {
                    let quoted: Vec<String> = items.iter().map(|i| string(i)).collect();
                    format!("[{}]", quoted.join(","))
                };
                let rules = call.rules.iter();
                lines.push(format!(
                    "{{\"explain\":\"call\",\"call\":{},\"answer\":{},\"rules\":{},\"reasons\":{},\"count\":{},\"routine\":{}}}",
                    string(&call.name),
                    string(&call.answer),
                    list(rules.clone().map(|r| r.rule.clone()).collect()),
                    list(rules.map(|r| r.reason.clone()).collect()),
                    call.count,
                    Explanation::is_routine_call(call)
                ));
            }
            // Only where the program failed: the last refusal that is not routine.
            match (report.likeliest_cause(), report.last_sentence()) {
                (Some(Last::File(i)), Some(sentence)) => {
                    let a = &report.files[i].access;
                    lines.push(format!(
                        "{{\"explain\":\"cause\",\"kind\":\"file\",\"right\":{},\"resolved\":{},\"sentence\":{}}}",
                        string(a.right.name()),
                        path(&a.resolved),
                        string(&sentence)
                    ));
                }
                (Some(Last::Call(i)), Some(sentence)) => lines.push(format!(
                    "{{\"explain\":\"cause\",\"kind\":\"call\",\"call\":{},\"sentence\":{}}}",
                    string(&report.calls[i].name),
                    string(&sentence)
                )),
                _ => {}
            }
            for grant in &learnt.grants {
                lines.push(format!(
                    "{{\"explain\":\"allow\",\"flag\":{},\"path\":{}}}",
                    string(grant.flag()),
                    path(grant.path())
                ));
            }
            for withheld in &learnt.withheld {
                let because = match withheld.because {
                    sandbox_core::explain::Because::Covers(_) => "covers",
                    sandbox_core::explain::Because::NotAPath => "not a path",
                    sandbox_core::explain::Because::Routine => "routine",
                    sandbox_core::explain::Because::Secret => "secret",
                    sandbox_core::explain::Because::TooWide => "too wide",
                    sandbox_core::explain::Because::Listed => "listed",
                    sandbox_core::explain::Because::NotTheCause => "not the cause",
                    _ => "other",
                };
                lines.push(format!(
                    "{{\"explain\":\"withheld\",\"flag\":{},\"path\":{},\"because\":{},\"why\":{}}}",
                    string(withheld.grant.flag()),
                    path(withheld.grant.path()),
                    string(because),
                    string(&withheld.because.to_string())
                ));
            }
            for never in report.never_beside(kept) {
                lines.push(format!(
                    "{{\"explain\":\"never\",\"what\":{},\"why\":{}}}",
                    string(&never.what),
                    string(&never.why)
                ));
            }
            // Named, never suggested: only the application chooses an opt-in.
            for allows in report.opt_ins(kept) {
                lines.push(format!(
                    "{{\"explain\":\"opt-in\",\"what\":{},\"opt_in\":{},\"why\":{}}}",
                    string(&allows.what),
                    string(&allows.opt_in.flag()),
                    string(&allows.why)
                ));
            }
            if let Some(argv) = suggested(run, learnt) {
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
            let program = match report.outcome {
                Some(Outcome::Succeeded) => "succeeded",
                Some(Outcome::Failed) => "failed",
                _ => "unknown",
            };
            let routine = report
                .files
                .iter()
                .filter(|f| Explanation::is_routine(f))
                .count();
            lines.push(format!(
                "{{\"explain\":\"summary\",\"seen\":{},\"files\":{},\"calls\":{},\"routine\":{},\"program\":{}}}",
                string(seen),
                report.files.len(),
                report.calls.len(),
                routine,
                string(program)
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

/// The proxy's log as `--explain` reads it back: a copy of the file's descriptor and where this
/// launch's lines begin.
#[derive(Debug)]
pub struct ProxyLog {
    file: std::fs::File,
    from: u64,
}

/// For a launch that names hosts: the log `--explain` reads the proxy's refusals from, the
/// `--net-log` file (its lines from its present end) or, without one, an unnamed file of this
/// run's own, which `policy` then logs to. `None` for a launch without hosts.
#[cfg(unix)]
pub fn proxy_log(policy: &mut Policy, net_log: Option<&Path>) -> std::io::Result<Option<ProxyLog>> {
    use std::io::Seek;
    if policy.hosts().is_empty() {
        return Ok(None);
    }
    if let (Some(path), Some(fd)) = (net_log, policy.net_log()) {
        let mut file = std::fs::File::from(fd.try_clone_to_owned()?);
        let from = file.seek(std::io::SeekFrom::End(0)).map_err(|e| {
            std::io::Error::new(e.kind(), format!("--net-log {}: {e}", path.display()))
        })?;
        return Ok(Some(ProxyLog { file, from }));
    }
    let file = tempfile_unnamed()?;
    *policy = policy.clone().with_net_log(file.try_clone()?)?;
    Ok(Some(ProxyLog { file, from: 0 }))
}

/// Nothing to read back where there is no proxy.
#[cfg(not(unix))]
pub fn proxy_log(_: &mut Policy, _: Option<&Path>) -> std::io::Result<Option<ProxyLog>> {
    Ok(None)
}

/// A file in the temporary folder that no name leads to: made with a name no other process
/// can have chosen (`create_new`), readable by this user alone, and unlinked at once.
#[cfg(unix)]
fn tempfile_unnamed() -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::env::temp_dir();
    for attempt in 0..100u32 {
        let path = dir.join(format!(
            "sandbox-check-net-{}-{attempt}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "no unused name in the temporary folder",
    ))
}

/// Says each destination the proxy refused this launch, and the flag that would allow it where
/// one would: `explain: the proxy refused 127.0.0.1:8081 (not allowed); --allow-host
/// 127.0.0.1:8081 would allow it`. With `--json`, one `{"explain":"host",...}` line each.
pub fn proxy_refusals(run: &Run, mut log: ProxyLog) {
    use std::io::{Read, Seek};
    let mut text = String::new();
    let read = log
        .file
        .seek(std::io::SeekFrom::Start(log.from))
        .and_then(|_| log.file.read_to_string(&mut text));
    if read.is_err() {
        return;
    }
    let mut seen = std::collections::BTreeSet::new();
    for line in text.lines() {
        let Ok(decision) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if decision["decision"] != "refused" {
            continue;
        }
        let destination = decision["destination"].as_str().unwrap_or_default();
        let reason = decision["reason"].as_str().unwrap_or_default();
        if !seen.insert((destination.to_owned(), reason.to_owned())) {
            continue;
        }
        // Only a destination off the list is allowed by a flag; a bound or a name leading
        // inside is the application's own decision to change.
        let flag = (reason == "not allowed").then(|| format!("--allow-host {destination}"));
        if run.json {
            eprintln!(
                "{{\"explain\":\"host\",\"destination\":{},\"reason\":{},\"allow\":{}}}",
                serde_json::Value::from(destination),
                serde_json::Value::from(reason),
                flag.as_deref()
                    .map_or(serde_json::Value::Null, serde_json::Value::from)
            );
        } else {
            match flag {
                Some(flag) => eprintln!(
                    "explain: the proxy refused {destination} ({reason}); {flag} would allow it"
                ),
                None => eprintln!("explain: the proxy refused {destination} ({reason})"),
            }
        }
    }
}
