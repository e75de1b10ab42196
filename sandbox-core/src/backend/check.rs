//! The enforcement check: actions a confined launcher tries before it runs the program.
//!
//! Each attempt is a row of a table, so the launcher, `sandbox-check` and the tests run the same
//! list. An attempt that must be denied passes only when the system refuses it with a permission
//! error (`EACCES` or `EPERM`): an attempt that works, or fails for another reason (a missing
//! file, a refused connection), proves nothing about the confinement and fails the check.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What an attempt must do under confinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Refused by the system with `EACCES` or `EPERM`.
    Denied,
    /// Works as it would unconfined.
    Works,
    /// Refused by the system with `EACCES` or `EPERM`, or with `EXDEV` where the objects are on
    /// two file systems and the kernel refuses before any confinement is asked (a link or a
    /// rename out of the scratch folder, which is a file system of its own).
    DeniedOrCrossDevice,
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expect::Denied => "denied",
            Expect::Works => "works",
            Expect::DeniedOrCrossDevice => "denied",
        })
    }
}

/// What an attempt needs to know about the launch.
#[derive(Debug, Clone)]
pub struct Context {
    /// The canary file, outside every allowed path.
    pub canary: PathBuf,
    /// The launcher's parent, as recorded before confinement.
    pub parent: u32,
    /// The launcher's own executable, which is in the exec list.
    pub launcher: PathBuf,
    /// The temporary directory, as it was before the environment was cleared.
    pub temp_dir: PathBuf,
}

/// One action to try, and what it must do.
#[derive(Debug, Clone, Copy)]
pub struct Attempt {
    /// What is tried, in words (`read the canary`).
    pub name: &'static str,
    /// What it must do.
    pub expect: Expect,
    /// Tries it. `Ok` means the action worked.
    pub run: fn(&Context) -> io::Result<()>,
}

// A value the errors carry too, so it sits below them and this module.
pub use crate::observed::Observed;

/// The first argument of a launcher copy that exits at once with status 0. The enforcement check
/// tries to start one; it must be refused.
pub const EXIT_FLAG: &str = "--sandbox-exit";

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Worked => f.write_str("it worked"),
            Observed::OtherError(e) => {
                write!(f, "failed with {}, not a permission error", describe(e))
            }
            Observed::Failed(e) => write!(f, "failed with {}", describe(e)),
        }
    }
}

/// An attempt and its result.
#[derive(Debug)]
pub struct Outcome {
    /// The attempt's name.
    pub name: &'static str,
    /// What it had to do.
    pub expect: Expect,
    /// What it did: `Ok` if the action worked.
    pub result: io::Result<()>,
}

impl Outcome {
    /// Whether the attempt did what it had to.
    pub fn passed(&self) -> bool {
        self.observed().is_none()
    }

    /// What went wrong, or `None` if the attempt passed.
    pub fn observed(&self) -> Option<Observed> {
        self.observed_counting(&[])
    }

    /// [`Outcome::observed`], counting the error numbers `refusals` as refused too, as a
    /// backend's [`refusal_errors`](crate::Backend::refusal_errors) asks.
    pub fn observed_counting(
        &self,
        refusals: &[super::refusal_code::RefusalCode],
    ) -> Option<Observed> {
        let refused =
            |e: &io::Error| is_permission_error(e) || refusals.iter().any(|code| code.is(e));
        match (self.expect, &self.result) {
            (Expect::Denied | Expect::DeniedOrCrossDevice, Ok(())) => Some(Observed::Worked),
            (Expect::Denied | Expect::DeniedOrCrossDevice, Err(e)) if refused(e) => None,
            (Expect::DeniedOrCrossDevice, Err(e)) if is_cross_device(e) => None,
            (Expect::Denied | Expect::DeniedOrCrossDevice, Err(e)) => {
                Some(Observed::OtherError(copy(e)))
            }
            (Expect::Works, Ok(())) => None,
            (Expect::Works, Err(e)) => Some(Observed::Failed(copy(e))),
        }
    }

    /// What happened, in words: `worked`, or `EACCES (Permission denied)`.
    pub fn happened(&self) -> String {
        match &self.result {
            Ok(()) => "worked".to_owned(),
            Err(e) => describe(e),
        }
    }
}

fn copy(e: &io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}

/// Whether `e` is the refusal a confinement gives: `EACCES` or `EPERM`.
pub fn is_permission_error(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(
            e.raw_os_error(),
            Some(libc_codes::EACCES | libc_codes::EPERM)
        )
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::PermissionDenied
    }
}

/// Whether `e` is `EXDEV`: the two objects are on different file systems.
pub fn is_cross_device(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::CrossesDevices
}

/// An error as its symbolic name and text, such as `EACCES (Permission denied)`.
pub fn describe(e: &io::Error) -> String {
    #[cfg(unix)]
    if let Some(code) = e.raw_os_error() {
        let name = format!("{:?}", nix::errno::Errno::from_raw(code));
        let text = e.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text);
        return format!("{name} ({text})");
    }
    e.to_string()
}

#[cfg(unix)]
mod libc_codes {
    pub const EACCES: i32 = nix::errno::Errno::EACCES as i32;
    pub const EPERM: i32 = nix::errno::Errno::EPERM as i32;
}

/// Runs each attempt of `table` in order.
pub fn run(table: &[Attempt], context: &Context) -> Vec<Outcome> {
    table
        .iter()
        .map(|attempt| Outcome {
            name: attempt.name,
            expect: attempt.expect,
            result: (attempt.run)(context),
        })
        .collect()
}

/// The first attempt that did not do what it had to, as an error.
pub fn first_failure(outcomes: &[Outcome]) -> Option<crate::error::backend::CheckFailure> {
    first_failure_counting(outcomes, &[])
}

/// [`first_failure`], counting the error numbers `refusals` as refused too.
pub fn first_failure_counting(
    outcomes: &[Outcome],
    refusals: &[super::refusal_code::RefusalCode],
) -> Option<crate::error::backend::CheckFailure> {
    outcomes.iter().find_map(|o| {
        o.observed_counting(refusals)
            .map(|observed| crate::error::backend::CheckFailure {
                attempt: o.name,
                observed,
            })
    })
}

#[cfg(unix)]
pub use attempts::ENFORCEMENT;
#[cfg(unix)]
pub use scratch::SCRATCH;

/// One action to try in the scratch folder, and what it must do.
#[derive(Debug, Clone, Copy)]
pub struct ScratchAttempt {
    /// What is tried, in words.
    pub name: &'static str,
    /// What it must do.
    pub expect: Expect,
    /// Tries it in the scratch folder (the first path), with the canary (the second) as the
    /// file outside. `Ok` means the action worked.
    pub run: fn(&std::path::Path, &std::path::Path) -> io::Result<()>,
}

/// Runs each attempt of `table` in the scratch folder `scratch`, with `canary` outside it.
pub fn run_scratch(
    table: &[ScratchAttempt],
    scratch: &std::path::Path,
    canary: &std::path::Path,
) -> Vec<Outcome> {
    table
        .iter()
        .map(|attempt| Outcome {
            name: attempt.name,
            expect: attempt.expect,
            result: (attempt.run)(scratch, canary),
        })
        .collect()
}

/// There is no scratch folder without a platform to make it on.
#[cfg(not(unix))]
pub const SCRATCH: &[ScratchAttempt] = &[];

#[cfg(unix)]
mod scratch {
    use std::fs::{self, OpenOptions};
    use std::io::{self, Read, Write};
    use std::path::Path;

    use nix::sys::stat::{mknod, Mode, SFlag};

    use super::{Expect, ScratchAttempt};

    /// The attempts a launch with a scratch folder makes after the common ones: writing inside
    /// works; nothing made there reaches outside, and nothing but files and folders is made.
    /// Each leaves the folder as empty as it found it.
    pub const SCRATCH: &[ScratchAttempt] = &[
        ScratchAttempt {
            name: "write, rename and remove in the scratch folder",
            expect: Expect::Works,
            run: write_inside,
        },
        ScratchAttempt {
            name: "create a symbolic link in the scratch folder",
            expect: Expect::Denied,
            run: symlink_inside,
        },
        ScratchAttempt {
            name: "hard-link the canary into the scratch folder",
            expect: Expect::DeniedOrCrossDevice,
            run: link_canary,
        },
        ScratchAttempt {
            name: "rename a file out of the scratch folder",
            expect: Expect::DeniedOrCrossDevice,
            run: rename_out,
        },
        ScratchAttempt {
            name: "create a FIFO in the scratch folder",
            expect: Expect::Denied,
            run: |scratch, _| make_node(scratch, SFlag::S_IFIFO, 0),
        },
        ScratchAttempt {
            name: "create a device in the scratch folder",
            expect: Expect::Denied,
            // 1:3 is /dev/null: harmless should it ever be made.
            run: |scratch, _| make_node(scratch, SFlag::S_IFCHR, libc::makedev(1, 3)),
        },
    ];

    fn name(scratch: &Path, what: &str) -> std::path::PathBuf {
        scratch.join(format!(".sandbox-check-{what}-{}", std::process::id()))
    }

    // One entry at a time and one page, so the smallest bound a caller can choose passes.
    fn write_inside(scratch: &Path, _: &Path) -> io::Result<()> {
        let (first, second) = (name(scratch, "a"), name(scratch, "b"));
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&first)?
            .write_all(b"scratch")?;
        fs::rename(&first, &second)?;
        OpenOptions::new().write(true).open(&second)?.set_len(3)?;
        let mut found = String::new();
        fs::File::open(&second)?.read_to_string(&mut found)?;
        if found != "scr" {
            return Err(io::Error::other(format!("read back {found:?}")));
        }
        fs::remove_file(&second)?;
        let dir = name(scratch, "dir");
        fs::create_dir(&dir)?;
        fs::remove_dir(&dir)
    }

    fn symlink_inside(scratch: &Path, canary: &Path) -> io::Result<()> {
        let link = name(scratch, "symlink");
        std::os::unix::fs::symlink(canary, &link)?;
        fs::remove_file(&link)
    }

    fn link_canary(scratch: &Path, canary: &Path) -> io::Result<()> {
        let link = name(scratch, "link");
        fs::hard_link(canary, &link)?;
        fs::remove_file(&link)
    }

    fn rename_out(scratch: &Path, canary: &Path) -> io::Result<()> {
        let inside = name(scratch, "rename");
        fs::write(&inside, b"x")?;
        let outside = canary
            .parent()
            .unwrap_or(Path::new("/"))
            .join(inside.file_name().unwrap_or_default());
        let result = fs::rename(&inside, &outside);
        match result {
            // It worked, so nothing confines us and removing it is possible.
            Ok(()) => fs::remove_file(&outside),
            Err(e) => {
                fs::remove_file(&inside)?;
                Err(e)
            }
        }
    }

    fn make_node(scratch: &Path, kind: SFlag, device: nix::libc::dev_t) -> io::Result<()> {
        let node = name(scratch, "node");
        mknod(&node, kind, Mode::S_IRUSR | Mode::S_IWUSR, device)?;
        fs::remove_file(&node)
    }
}

/// There is no check without a platform to run it on; a backend for such a system brings its own.
#[cfg(not(unix))]
pub const ENFORCEMENT: &[Attempt] = &[];

#[cfg(unix)]
mod attempts {
    use std::fs::{self, File, OpenOptions};
    use std::io::{self, Read};
    use std::net::{SocketAddr, TcpStream};
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::Duration;

    use super::{Attempt, Context, Expect};

    /// The attempts every launch makes after confining itself. Each must be denied.
    pub const ENFORCEMENT: &[Attempt] = &[
        Attempt {
            name: "read the canary",
            expect: Expect::Denied,
            run: read_canary,
        },
        Attempt {
            name: "change the canary's permissions",
            expect: Expect::Denied,
            run: chmod_canary,
        },
        Attempt {
            name: "truncate the canary",
            expect: Expect::Denied,
            run: truncate_canary,
        },
        Attempt {
            name: "create a file beside the canary",
            expect: Expect::Denied,
            run: create_beside_canary,
        },
        Attempt {
            name: "create a file in the temporary directory",
            expect: Expect::Denied,
            run: create_in_temp_dir,
        },
        Attempt {
            name: "connect to 127.0.0.1 over TCP",
            expect: Expect::Denied,
            run: connect_loopback,
        },
        Attempt {
            name: "start a process",
            expect: Expect::Denied,
            run: start_process,
        },
        Attempt {
            name: "send signal 0 to the parent",
            expect: Expect::Denied,
            run: signal_parent,
        },
    ];

    fn read_canary(c: &Context) -> io::Result<()> {
        File::open(&c.canary)?.read(&mut [0u8; 1]).map(drop)
    }

    // The canary's own mode and length: nothing changes if the attempt works.
    fn chmod_canary(c: &Context) -> io::Result<()> {
        let permissions = fs::metadata(&c.canary)?.permissions();
        fs::set_permissions(&c.canary, permissions)
    }

    fn truncate_canary(c: &Context) -> io::Result<()> {
        let length = fs::metadata(&c.canary)?.len();
        let length = nix::libc::off_t::try_from(length).map_err(io::Error::other)?;
        nix::unistd::truncate(&c.canary, length).map_err(io::Error::from)
    }

    fn create_beside_canary(c: &Context) -> io::Result<()> {
        let dir = c.canary.parent().unwrap_or(Path::new("/"));
        create_in(dir)
    }

    fn create_in_temp_dir(c: &Context) -> io::Result<()> {
        create_in(&c.temp_dir)
    }

    fn create_in(dir: &Path) -> io::Result<()> {
        let path = dir.join(format!("sandbox-check-{}", std::process::id()));
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        // It worked, so nothing confines us and removing it is possible.
        fs::remove_file(&path)
    }

    fn connect_loopback(_: &Context) -> io::Result<()> {
        let address = SocketAddr::from(([127, 0, 0, 1], 9));
        TcpStream::connect_timeout(&address, Duration::from_secs(2)).map(drop)
    }

    fn start_process(c: &Context) -> io::Result<()> {
        Command::new(&c.launcher)
            .arg(crate::backend::check::EXIT_FLAG)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?
            .wait()
            .map(drop)
    }

    fn signal_parent(c: &Context) -> io::Result<()> {
        let now = nix::unistd::getppid().as_raw();
        if u32::try_from(now).ok() != Some(c.parent) {
            return Err(io::Error::other(format!(
                "the parent changed from process {} to {now}",
                c.parent
            )));
        }
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(now), None).map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend's own refusal errors count as refused, and only for the check that is told
    /// of them; any other error still proves nothing.
    #[cfg(unix)]
    #[test]
    fn a_backend_s_refusal_error_counts_only_where_it_is_named() {
        const ECAPMODE: super::super::RefusalCode = super::super::RefusalCode::from_raw(94);
        let refused = outcome(
            Expect::Denied,
            Err(io::Error::from_raw_os_error(ECAPMODE.raw())),
        );
        assert!(matches!(refused.observed(), Some(Observed::OtherError(_))));
        assert!(refused.observed_counting(&[ECAPMODE]).is_none());
        let missing = outcome(
            Expect::Denied,
            Err(io::Error::from_raw_os_error(libc::ENOENT)),
        );
        assert!(missing.observed_counting(&[ECAPMODE]).is_some());
        assert!(first_failure_counting(&[refused], &[ECAPMODE]).is_none());
    }

    fn outcome(expect: Expect, result: io::Result<()>) -> Outcome {
        Outcome {
            name: "x",
            expect,
            result,
        }
    }

    #[cfg(unix)]
    #[test]
    fn only_a_permission_error_counts_as_denied() {
        use nix::errno::Errno;
        let denied = |code: Errno| {
            outcome(
                Expect::Denied,
                Err(io::Error::from_raw_os_error(code as i32)),
            )
        };
        assert!(denied(Errno::EACCES).passed());
        assert!(denied(Errno::EPERM).passed());
        assert!(!denied(Errno::ENOENT).passed());
        assert!(!denied(Errno::ECONNREFUSED).passed());
        assert!(!outcome(Expect::Denied, Ok(())).passed());
        assert_eq!(
            denied(Errno::ENOENT).observed().unwrap().to_string(),
            "failed with ENOENT (No such file or directory), not a permission error"
        );
    }

    #[test]
    fn what_must_work_passes_only_when_it_works() {
        assert!(outcome(Expect::Works, Ok(())).passed());
        assert!(!outcome(Expect::Works, Err(io::Error::other("no"))).passed());
    }

    #[cfg(unix)]
    #[test]
    fn unconfined_every_attempt_fails_the_check() {
        let canary = crate::canary::Canary::create().unwrap();
        let context = Context {
            canary: canary.path().to_path_buf(),
            parent: nix::unistd::getppid().as_raw() as u32,
            launcher: std::path::PathBuf::from("/bin/true"),
            temp_dir: std::env::temp_dir(),
        };
        let outcomes = run(ENFORCEMENT, &context);
        assert_eq!(outcomes.len(), ENFORCEMENT.len());
        for o in &outcomes {
            assert!(
                !o.passed(),
                "{} passed unconfined: {}",
                o.name,
                o.happened()
            );
        }
        assert_eq!(std::fs::read(canary.path()).unwrap(), b"canary\n");
    }

    #[cfg(unix)]
    #[test]
    fn unconfined_every_scratch_attempt_that_must_be_refused_works_and_the_folder_is_left_empty() {
        let canary = crate::canary::Canary::create().unwrap();
        let scratch =
            std::env::temp_dir().join(format!("sandbox-check-scratch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir(&scratch).unwrap();
        let outcomes = run_scratch(SCRATCH, &scratch, canary.path());
        assert_eq!(outcomes.len(), SCRATCH.len());
        for o in &outcomes {
            match o.expect {
                Expect::Works => assert!(o.passed(), "{}: {}", o.name, o.happened()),
                // Root may make a device; anyone else is refused one even unconfined.
                _ if o.name.contains("device") => {}
                _ => assert!(
                    !o.passed(),
                    "{} passed unconfined: {}",
                    o.name,
                    o.happened()
                ),
            }
        }
        assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
        assert_eq!(std::fs::read(canary.path()).unwrap(), b"canary\n");
        std::fs::remove_dir(&scratch).unwrap();
    }

    #[test]
    fn a_cross_device_error_counts_only_where_it_is_expected() {
        let exdev = || Err(io::Error::from(io::ErrorKind::CrossesDevices));
        assert!(outcome(Expect::DeniedOrCrossDevice, exdev()).passed());
        assert!(!outcome(Expect::Denied, exdev()).passed());
        assert!(!outcome(Expect::DeniedOrCrossDevice, Ok(())).passed());
    }
}
