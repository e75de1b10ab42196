//! Lines `sandbox-check` adds on standard error beside the program's own, each in one place so
//! that the tests compare against the same text (`tests/common` includes this file).

/// Once per launch, where the memory bound of the launch (the default 1G, or a profile's best
/// effort one) is not enforced because no cgroup memory controller may be written here. Not with
/// `--json`, whose report says it, and not after `--memory none`.
pub const MEMORY_NOT_ENFORCED: &str = "sandbox-check: the memory bound is not enforced here: no \
    cgroup memory controller this application may write, so only the resource limits bound \
    memory (see the self-test's cgroup fact); --memory none runs without one and says nothing";

/// After a program that exited non-zero, where standard error is a terminal and `--explain` was
/// not given: what the sandbox refused it is otherwise visible only as the program's own error.
pub const EXPLAIN_HINT: &str = "sandbox-check: the program exited non-zero; if the sandbox \
    refused it something, --explain shows what and which flag would allow it";
