//! The raw launch, for experts: the launcher's command ([`launch_command`]) and the canary it
//! needs, which [`Sandbox`](crate::Sandbox) builds, spawns and waits for on an application's
//! behalf. It is here for a caller that must choose the program's standard streams itself (a
//! command-line tool passing on its terminal) or drive the launcher by hand (tests, benchmarks).
//! A single-threaded command-line tool can also run the launch sequence in a forked child
//! ([`fork_launch`]), as `sandbox-check` does: one `exec` fewer.
//!
//! Its pitfalls, each of which [`Sandbox`](crate::Sandbox) removes:
//!
//! - **The spawning thread:** on Linux the program gets SIGKILL when the *thread* that spawned it
//!   exits. Spawn and wait from one thread that outlives the child.
//! - **Refusals are text:** a refusal is exit status [`REFUSED_EXIT_CODE`] and a
//!   [`REFUSED_PREFIX`] line, both of which the program can produce itself.
//!   [`launch_command_reporting`] adds the launcher's typed report channel.
//! - **The [`Canary`] must outlive the child:** drop it only once the child has been waited for.
//! - **The command is the launcher's:** `.env` is dropped (the launcher clears the environment),
//!   `.process_group` gets the launch refused, `.arg` appends to the program's arguments, and a
//!   file as standard output stays the program's to truncate and seek.
//! - **Limits are the caller's:** the launcher sets the policy's [`Limits`](crate::Limits); time
//!   and output are for the caller to bound.

pub use crate::canary::{temporary_folders, Canary};
pub use crate::error::policy::CanaryError;
pub use crate::error::report::MalformedReport;
pub use crate::error::report::ReportedError;
#[cfg(unix)]
pub use crate::fork::{
    fork_launch, fork_launch_on_open, fork_launch_with_env, fork_launch_with_streams, Forked,
};
pub use crate::launch::parent::launch_command;
pub use crate::launch::refuse::refuse;
pub use crate::launch::{REFUSED_EXIT_CODE, REFUSED_PREFIX};
#[cfg(unix)]
pub use crate::status_channel::{
    launch_command_reporting, launch_command_reporting_with_env, StatusChannel,
};
