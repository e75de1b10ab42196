//! The conformance suite (`sandbox_conformance`) with the Linux backend: on a kernel with
//! Landlock ABI 3 or later every case runs; on an older one the launcher must refuse, and the
//! cases that need confinement are reported as skipped.

/// The folders a dynamically linked test binary's libraries come from. Where `/lib` is a link
/// into `/usr` (merged `/usr`), the suite leaves the link out and `/usr` covers it.
#[cfg(target_os = "linux")]
const LIBRARIES: &[&str] = &["/usr", "/lib", "/lib64", "/lib32"];

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    sandbox_conformance::main(&sandbox_linux::LinuxBackend, LIBRARIES)
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!(
        "conformance: the Linux backend exists on Linux only, and this is {}; nothing ran",
        std::env::consts::OS
    );
}
