//! [`RefusalCode`]: an error number that means "refused" under a backend's confinement, in a
//! type of its own rather than a Unix `errno`, since a Windows backend's are Win32 error codes.
//! A file of its own, depending on nothing, because the contract names it and the check uses it.

/// An error code that means "refused" under a backend's confinement
/// ([`Backend::refusal_errors`](crate::Backend::refusal_errors)): the number the system gives for
/// a failed call, as [`std::io::Error::raw_os_error`] reports it — an `errno` on Unix (FreeBSD's
/// `ECAPMODE`), a Win32 error code on Windows (`ERROR_ACCESS_DENIED` is already counted, as
/// every system's permission error is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefusalCode(i32);

impl RefusalCode {
    /// The code the system reports as `raw` ([`std::io::Error::raw_os_error`]).
    pub const fn from_raw(raw: i32) -> Self {
        RefusalCode(raw)
    }

    /// A Unix `errno`, such as `libc::ECAPMODE`.
    #[cfg(unix)]
    pub const fn errno(errno: i32) -> Self {
        RefusalCode(errno)
    }

    /// The number as the system reports it.
    pub const fn raw(self) -> i32 {
        self.0
    }

    /// Whether `error` is this code.
    pub fn is(self, error: &std::io::Error) -> bool {
        error.raw_os_error() == Some(self.0)
    }
}

#[cfg(unix)]
impl From<nix::errno::Errno> for RefusalCode {
    fn from(errno: nix::errno::Errno) -> Self {
        RefusalCode(errno as i32)
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::io::Error::from_raw_os_error(self.0).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_the_number_the_system_reports() {
        let code = RefusalCode::from_raw(94);
        assert!(code.is(&std::io::Error::from_raw_os_error(94)));
        assert!(!code.is(&std::io::Error::from_raw_os_error(2)));
        assert!(!code.is(&std::io::Error::other("no number")));
        assert_eq!(code.raw(), 94);
    }

    #[cfg(unix)]
    #[test]
    fn unix_conversions_keep_the_errno() {
        assert_eq!(
            RefusalCode::from(nix::errno::Errno::EACCES).raw(),
            libc::EACCES
        );
        assert_eq!(RefusalCode::errno(libc::EPERM).raw(), libc::EPERM);
    }
}
