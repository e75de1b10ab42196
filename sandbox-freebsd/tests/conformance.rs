//! The conformance suite (`sandbox_conformance`) with the FreeBSD backend. Off
//! FreeBSD it answers `NoBackend` and the suite runs what must hold there; on FreeBSD it would
//! answer `Unavailable` and the suite would check that every launch is refused with its reason
//! (not run: no FreeBSD machine here).

fn main() -> std::process::ExitCode {
    // Nothing is confined, so nothing needs granting to start.
    sandbox_conformance::main(&sandbox_freebsd::FreebsdBackend, &[])
}
