//! Closing inherited descriptors. Confinement does not revoke what is already open, so a
//! descriptor the parent leaked (a file, a socket) would carry its rights past every rule.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use nix::dir::Dir;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use crate::error::refusal::Refusal;

/// Where the process's open descriptors are listed.
const LISTINGS: &[&str] = &["/proc/self/fd", "/dev/fd"];

/// Closes every descriptor above standard error but each of `keep` (the status descriptor, which
/// is close-on-exec by the time the program runs, and in a forked launch the program's own
/// standard streams, which become 0, 1 and 2 only at `exec`), then checks that none is left.
pub fn close_inherited_but(keep: &[RawFd]) -> Result<(), Refusal> {
    let others = |fd: &RawFd| !keep.contains(fd);
    match open_descriptors() {
        Ok(fds) => {
            for fd in fds.into_iter().filter(others) {
                close(fd)?;
            }
        }
        // Without a listing (no /proc in an initramfs, say), every number the limit allows.
        Err(_) => {
            for fd in (3..descriptor_limit()).filter(others) {
                close(fd)?;
            }
        }
    }
    match remaining(|fd| others(&fd))?.first() {
        Some(&fd) => Err(Refusal::DescriptorOpen { fd }),
        None => Ok(()),
    }
}

/// Checks that no descriptor above standard error would survive `exec`, that is, every one left
/// is close-on-exec. A confined copy of the launcher uses this: the system's libraries may hold
/// close-on-exec descriptors of their own by then, which the program never sees.
pub fn check_none_inheritable() -> Result<(), Refusal> {
    let inheritable = |fd: RawFd| crate::sys::close_on_exec(fd) == Some(false);
    match remaining(inheritable)?.first() {
        Some(&fd) => Err(Refusal::DescriptorOpen { fd }),
        None => Ok(()),
    }
}

fn close(fd: RawFd) -> Result<(), Refusal> {
    match nix::unistd::close(fd) {
        Ok(()) | Err(nix::errno::Errno::EBADF) => Ok(()),
        Err(e) => Err(Refusal::Descriptors(e.into())),
    }
}

/// The descriptors above standard error that are open and match `keep`.
fn remaining(keep: impl Fn(RawFd) -> bool) -> Result<Vec<RawFd>, Refusal> {
    let fds = match open_descriptors() {
        Ok(fds) => fds,
        Err(_) => (3..descriptor_limit())
            .filter(|&fd| crate::sys::close_on_exec(fd).is_some())
            .collect(),
    };
    Ok(fds.into_iter().filter(|&fd| keep(fd)).collect())
}

/// The open descriptors above standard error, from the system's listing, without the one the
/// listing itself uses.
fn open_descriptors() -> io::Result<Vec<RawFd>> {
    let mut last = io::Error::from(io::ErrorKind::NotFound);
    for listing in LISTINGS {
        match Dir::open(
            *listing,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(mut dir) => {
                let own = dir.as_raw_fd();
                let mut fds = Vec::new();
                for entry in dir.iter() {
                    let entry = entry?;
                    let name = entry.file_name().to_bytes();
                    let Some(fd) = std::str::from_utf8(name)
                        .ok()
                        .and_then(|n| n.parse::<RawFd>().ok())
                    else {
                        continue;
                    };
                    if fd > 2 && fd != own {
                        fds.push(fd);
                    }
                }
                return Ok(fds);
            }
            Err(e) => last = e.into(),
        }
    }
    Err(last)
}

/// The highest descriptor number to try when the system lists none: the open-file limit, but no
/// more than Linux's default ceiling (`fs.nr_open`, 2^20), so an unlimited limit (macOS allows
/// one) does not mean two billion calls.
fn descriptor_limit() -> RawFd {
    const CEILING: RawFd = 1 << 20;
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .ok()
        .and_then(|(soft, _hard)| RawFd::try_from(soft).ok())
        .map_or(CEILING, |soft| soft.clamp(0, CEILING))
}
