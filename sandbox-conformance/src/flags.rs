//! The names the runs of the suite's binary agree on: the first arguments that make a run the
//! probe or one of the cases' helper runs, and the variable a launch must not pass on.

/// The first argument of a run as the confined program; the rest name the probe.
pub const PROBE_FLAG: &str = "--sandbox-conformance-probe";

/// The first argument of a run of the suite's binary that starts a launch server, launches the
/// `ran` probe through it once, and prints how that went: the launch server's fault case runs
/// it once per phase with a fault injected.
#[cfg(target_os = "linux")]
pub(crate) const SERVER_ONCE_FLAG: &str = "--sandbox-conformance-server-once";

/// The first argument of a run of the suite's binary that starts a launch server, launches the
/// `sleep` probe, forks a copy of itself that drops its copy of the server and exits, and prints
/// whether the program still runs.
#[cfg(target_os = "linux")]
pub(crate) const SERVER_FORKED_FLAG: &str = "--sandbox-conformance-server-forked";

/// The first argument of a run of the suite's binary, as root, that starts a launch server,
/// becomes the user `nobody`, launches `id -u` through the server, and prints how that went.
#[cfg(target_os = "linux")]
pub(crate) const SERVER_SETUID_FLAG: &str = "--sandbox-conformance-server-setuid";

/// The first argument of a run of the suite's binary that closes its standard input and output,
/// starts a launch server (whose socket pair then takes descriptors 0 and 1), gives its output
/// back, launches the `ran` probe through the server, and prints how that went.
#[cfg(target_os = "linux")]
pub(crate) const SERVER_NO_STREAMS_FLAG: &str = "--sandbox-conformance-server-no-streams";

/// The first argument of a run of the suite's binary that closes its standard input and output,
/// launches the `ran` probe under a policy that covers the canary (without a server), gives its
/// output back, and prints how that went.
#[cfg(unix)]
pub(crate) const NO_STREAMS_REFUSAL_FLAG: &str = "--sandbox-conformance-no-streams-refusal";

/// A variable the parent sets on the launch, which the program must not see.
#[cfg(unix)]
pub(crate) const SECRET_VARIABLE: &str = "SANDBOX_CONFORMANCE_SECRET";
