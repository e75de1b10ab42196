//! The suite with a backend that answers honestly that it does not confine yet
//! ([`Support::Unavailable`]) and whose programs would start beside the launcher
//! ([`ProgramStart::SpawnAndWait`], as on Windows): every launch is refused with the reason
//! `support()` gave, not with the launch sequence's refusal of that start method, and the cases
//! for a refusing backend pass without the backend pretending to start programs another way.

use sandbox_core::backend::{BackendError, Fact, Launch, ProgramStart, Support};
use sandbox_core::Backend;

/// The reason every launch is refused with.
const NOT_YET: &str = "the honest test backend does not confine yet; use a backend that does";

/// Refuses every launch with [`NOT_YET`], and starts programs by spawning them.
struct NotYet;

impl Backend for NotYet {
    fn name(&self) -> &'static str {
        "not-yet"
    }
    fn support(&self) -> Support {
        Support::Unavailable {
            facts: vec![Fact::new("os", std::env::consts::OS)],
            reason: BackendError::new(std::io::Error::other(NOT_YET)),
        }
    }
    fn confine(&self, _: &Launch) -> Result<(), BackendError> {
        Err(BackendError::new(std::io::Error::other(NOT_YET)))
    }
    fn program_start(&self) -> ProgramStart {
        ProgramStart::SpawnAndWait
    }
}

fn main() -> std::process::ExitCode {
    sandbox_conformance::main(&NotYet, &["/usr", "/lib", "/lib64", "/lib32"])
}
