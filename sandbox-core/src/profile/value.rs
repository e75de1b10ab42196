//! The profile value and the limits on reading one: the bottom of `profile`, which reading,
//! parsing, merging and the library all build on.

use std::collections::BTreeMap;

use crate::policy::Policy;
use crate::scratch::Bound;

/// How deep includes may nest.
pub const MAX_DEPTH: usize = 8;
/// How many files one profile may read, itself and its includes together: a fan-out of
/// includes stops here instead of keeping the program busy.
pub const MAX_FILES: usize = 64;
/// How large one profile file may be.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;

/// A profile: a policy, the variables its program gets, and a scratch folder to make for it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Profile {
    /// What the program may read and execute, and its bounds.
    pub policy: Policy,
    /// Variables set for the program.
    pub env: BTreeMap<String, String>,
    /// A scratch folder to make for each launch: its bound, and whether it is `HOME` too.
    pub scratch: Option<(Bound, bool)>,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            policy: Policy::new(),
            env: BTreeMap::new(),
            scratch: None,
        }
    }
}
