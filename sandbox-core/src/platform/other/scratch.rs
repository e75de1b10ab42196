//! Scratch folders elsewhere: no size-limited file system the application can mount, so none
//! is made.

use std::io;
use std::path::Path;

use crate::scratch::{Bound, Scratch, ScratchError, Usage};

/// Nothing holds a folder here: none is ever made.
#[derive(Debug)]
pub(crate) struct Held;

pub(crate) fn create(_dir: &Path, _bound: Bound) -> Result<Scratch, ScratchError> {
    Err(ScratchError::NoBound {
        reason: "this system has no size-limited file system the application can mount",
        source: None,
    })
}

pub(crate) fn usage(_path: &Path, _bound: Bound) -> io::Result<Usage> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

pub(crate) fn remove(path: &Path) {
    let _ignored = std::fs::remove_dir_all(path);
}

pub(crate) fn alive(_maker: (u32, u64)) -> bool {
    true
}

pub(crate) fn ours(_path: &Path) -> bool {
    false
}

/// Whether `fd` is a file system that holds no more than `bound`: none is, here.
#[cfg(unix)]
pub fn check_bound(_fd: std::os::fd::BorrowedFd<'_>, _bound: Bound) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// The scratch folders this system makes.
pub(crate) const KINDS: &[crate::provisions::ScratchKind] = &[];
