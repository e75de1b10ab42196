//! The conformance suite (`sandbox_conformance`) with the macOS backend.
//!
//! On macOS every case runs (compiled for `aarch64-apple-darwin` and `x86_64-apple-darwin`; not
//! yet run on a Mac). Anywhere else the backend answers `NoBackend`, and the suite runs what
//! must hold there: no launch is built, and a launcher started by hand refuses with the
//! backend's reason. The profile imports Apple's `system.sb`, which grants the system's
//! libraries, so the suite grants no library folder.

fn main() -> std::process::ExitCode {
    sandbox_conformance::main(&sandbox_macos::MacosBackend, &[])
}
