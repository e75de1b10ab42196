//! The Linux backend: Landlock decides which files a confined program may read, execute or
//! write; seccomp refuses the system calls Landlock has no right for (processes, sockets, file
//! metadata, other processes, the kernel's attack surface); capabilities are dropped so a
//! confined root is a root without privileges.
//!
//! The refusal list is one table, [`rules::RULES`], read by the filter builder, the docs and the
//! tests. The built filters are plain data ([`filter::build`]) so they can be inspected and
//! evaluated without a kernel ([`eval`]). The `analysis` feature adds what the tests, the docs and
//! `sandbox-check --print-filters` need and a launch does not: the evaluator's analyses of partly
//! known calls and the decision tables (`decisions`).
//!
//! It is not a container: the program shares the file system view, the network namespace and the
//! process ID space of its parent; what it may do with them is what this crate restricts.
//!
//! On other systems the crate is empty, so an application can depend on it for Linux only.
//!
//! ```no_run
//! # #[cfg(target_os = "linux")]
//! fn main() {
//!     use sandbox_core::Backend;
//!     let backend = sandbox_linux::LinuxBackend;
//!     // First thing in main: a launcher run confines itself here and never returns.
//!     sandbox_core::handle_args(&backend);
//!     println!("{:?}", backend.support());
//! }
//! # #[cfg(not(target_os = "linux"))]
//! # fn main() {}
//! ```
#![deny(unsafe_code)]

#[cfg(target_os = "linux")]
pub mod allowed;
#[cfg(target_os = "linux")]
mod backend;
#[cfg(target_os = "linux")]
mod bpf;
#[cfg(target_os = "linux")]
mod broker;
#[cfg(target_os = "linux")]
pub mod caps;
#[cfg(all(target_os = "linux", feature = "analysis"))]
pub mod decisions;
#[cfg(target_os = "linux")]
pub mod elf;
#[cfg(target_os = "linux")]
mod error;
#[cfg(target_os = "linux")]
pub mod eval;
#[cfg(target_os = "linux")]
pub mod explain;
#[cfg(target_os = "linux")]
pub mod filter;
#[cfg(target_os = "linux")]
pub mod inherited;
#[cfg(target_os = "linux")]
pub mod landlock;
#[cfg(target_os = "linux")]
pub mod libraries;
#[cfg(target_os = "linux")]
pub mod limits;
#[cfg(target_os = "linux")]
mod namespace;
#[cfg(target_os = "linux")]
mod net;
#[cfg(target_os = "linux")]
pub mod notify;
#[cfg(target_os = "linux")]
mod opcodes;
#[cfg(target_os = "linux")]
pub mod rules;
#[cfg(target_os = "linux")]
mod sys;
#[cfg(target_os = "linux")]
pub mod syscalls;
#[cfg(target_os = "linux")]
pub mod workspace;

#[cfg(target_os = "linux")]
pub use backend::LinuxBackend;
#[cfg(target_os = "linux")]
pub use error::{LinuxError, LoaderProblem, ScratchProblem};
