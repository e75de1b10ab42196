//! What an attempt of the enforcement check did, when that was not what it had to do: a value
//! both the check (`backend::check`, where it is named and shown) and the error of a failed
//! check (`error::backend`) hold, so it sits below both.

use std::io;

/// What an attempt did, when that was not what it had to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Observed {
    /// A denied action worked.
    Worked,
    /// A denied action failed, but not with a permission error, so nothing was proved.
    OtherError(io::Error),
    /// An action that must work was refused or failed.
    Failed(io::Error),
}
