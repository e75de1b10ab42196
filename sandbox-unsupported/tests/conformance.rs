//! The conformance suite (`sandbox_conformance`) with the backend for systems without a
//! sandbox: it answers `NoBackend`, so the suite runs what must hold there. No launch is built,
//! a launcher started by hand refuses with the backend's reason on one line and status 97, and
//! nothing after the `confine` phase is ever reached.

fn main() -> std::process::ExitCode {
    // Nothing is confined, so nothing needs granting to start.
    sandbox_conformance::main(&sandbox_unsupported::UnsupportedBackend, &[])
}
