//! The program's scratch folder: made before the launch, and after it, said full if it was, then
//! removed.

use sandbox_core::scratch::{Bound, Scratch, ScratchError};

/// A scratch folder of `bytes` and the default number of entries.
pub fn create(bytes: u64) -> Result<Scratch, ScratchError> {
    Scratch::create(Bound {
        bytes,
        entries: Bound::DEFAULT.entries,
    })
}

/// Says on standard error when the folder is full, so a program's `ENOSPC` is explained, and
/// removes it. Only a unix launch has a program whose folder to report on.
#[cfg(unix)]
pub fn report(scratch: Option<Scratch>) {
    let Some(scratch) = scratch else { return };
    if let Ok(usage) = scratch.usage() {
        if usage.full {
            eprintln!(
                "sandbox-check: the scratch folder was full ({} bytes and {} entries used of {}): writes past it failed with ENOSPC",
                usage.bytes, usage.entries, usage.bound
            );
        }
    }
}
