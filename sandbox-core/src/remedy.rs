//! How a remedy that an error carries typed reads in that error's text.
//!
//! A refusal that one grant would cure (the program's loader lies outside every read path)
//! carries that grant as a [`Remedy`] (`BackendError::remedy`),
//! which crosses the launcher's status channel typed. Its text names it the way the reader
//! grants it: an application's user reads `add .read("/usr")`, the `Command` method (the
//! default); a command line's user reads `add --read /usr`, its flag, once the command line tool
//! has called [`set_phrasing`]`(`[`Phrasing::Flags`]`)` first thing in `main` (before
//! [`handle_args`](crate::handle_args), so that its own launcher's line says it the same way).
//! A caller that shows the remedy itself reads it from the error, typed, and needs neither.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

/// A grant (a `Policy` method, a flag of `sandbox-check`) that would allow part of what was
/// refused.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Remedy {
    /// `Policy::allow_read`, `--read PATH`.
    Read(PathBuf),
    /// `Policy::allow_exec`, `--exec PATH`.
    Exec(PathBuf),
}

impl Remedy {
    /// The flag.
    pub fn flag(&self) -> &'static str {
        match self {
            Remedy::Read(_) => "--read",
            Remedy::Exec(_) => "--exec",
        }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        match self {
            Remedy::Read(path) | Remedy::Exec(path) => path,
        }
    }

    /// The grant as an application writes it, for a remedy shown to a library's user rather
    /// than a shell's: `.read("/etc/ssl")` on a [`Command`](crate::Command) (the same name as
    /// on a `Policy`, `allow_read`, less its prefix).
    pub fn call(&self) -> String {
        let method = match self {
            Remedy::Read(_) => "read",
            Remedy::Exec(_) => "exec",
        };
        format!("{method}({:?})", self.path().display().to_string())
    }
}

impl fmt::Display for Remedy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.flag(), self.path().display())
    }
}

/// How this process's error texts name a remedy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Phrasing {
    /// As the application grants it: `.read("/usr")` on a [`Command`](crate::Command). The
    /// default.
    #[default]
    Calls,
    /// As `sandbox-check`'s flag: `--read /usr`.
    Flags,
}

static PHRASING: AtomicU8 = AtomicU8::new(0);

/// Makes this process's error texts name remedies as `phrasing` says: a command line tool's
/// `main` sets [`Phrasing::Flags`] before anything else. It changes text only, never what is
/// refused.
pub fn set_phrasing(phrasing: Phrasing) {
    let value = match phrasing {
        Phrasing::Calls => 0,
        Phrasing::Flags => 1,
    };
    PHRASING.store(value, Ordering::Relaxed);
}

/// How this process's error texts name remedies ([`set_phrasing`]).
pub fn phrasing() -> Phrasing {
    match PHRASING.load(Ordering::Relaxed) {
        1 => Phrasing::Flags,
        _ => Phrasing::Calls,
    }
}

/// `flag` or `call`, as this process names remedies ([`phrasing`]): for a remedy that is no
/// grant of a path (leaving an opt-in out), in a backend's error text too.
pub fn phrase<'a>(flag: &'a str, call: &'a str) -> &'a str {
    match phrasing() {
        Phrasing::Flags => flag,
        Phrasing::Calls => call,
    }
}

impl Remedy {
    /// The remedy as this process's texts name it ([`phrasing`]): `.read("/usr")`, or
    /// `--read /usr` where the command line tool asked for flags.
    pub fn phrased(&self) -> String {
        self.phrased_as(phrasing())
    }

    /// The remedy as `phrasing` names it.
    pub fn phrased_as(&self, phrasing: Phrasing) -> String {
        match phrasing {
            Phrasing::Calls => format!(".{}", self.call()),
            Phrasing::Flags => self.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_remedy_reads_as_a_call_or_as_a_flag() {
        let remedy = Remedy::Read(PathBuf::from("/usr"));
        assert_eq!(remedy.phrased_as(Phrasing::Calls), ".read(\"/usr\")");
        assert_eq!(remedy.phrased_as(Phrasing::Flags), "--read /usr");
        assert_eq!(Phrasing::default(), Phrasing::Calls);
    }
}
