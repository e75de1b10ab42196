//! [`InheritedHandle`]: how the launcher finds a channel its parent left open in it, in a type of
//! its own rather than a Unix descriptor number, since a Windows backend's would be a `HANDLE`.
//! A file of its own, depending on nothing, because the wire, the parent's half of a launch and a
//! backend all name it.

/// A channel the parent leaves open in the launcher it starts (the status pipe, the supervisor's
/// socket), named by the number the launcher finds it by: on Unix a file descriptor the launcher
/// inherits at that number. A Windows backend would carry an inheritable `HANDLE`'s value here,
/// which has 32 significant bits (`docs/backends.md`, "Where a Windows backend puts a HANDLE").
/// The launcher's arguments (`backend::wire`) carry the number in decimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InheritedHandle(i32);

impl InheritedHandle {
    /// The descriptor `fd`, open in the launcher at that number.
    #[cfg(unix)]
    pub const fn from_raw_fd(fd: std::os::fd::RawFd) -> Self {
        InheritedHandle(fd)
    }

    /// The descriptor number the launcher finds the channel at.
    #[cfg(unix)]
    pub const fn as_raw_fd(self) -> std::os::fd::RawFd {
        self.0
    }

    /// The number as the launcher's arguments carry it, parsed: only the wire makes one from text.
    pub(crate) const fn from_wire(number: i32) -> Self {
        InheritedHandle(number)
    }
}

/// The number, in decimal, as the launcher's arguments carry it.
impl std::fmt::Display for InheritedHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_handle_is_the_descriptor_number_and_reads_as_it() {
        let handle = InheritedHandle::from_raw_fd(3);
        assert_eq!(handle.as_raw_fd(), 3);
        assert_eq!(handle.to_string(), "3");
        assert_eq!(
            InheritedHandle::from_wire(4),
            InheritedHandle::from_raw_fd(4)
        );
    }
}
