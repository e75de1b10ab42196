//! The backend the core's own tests launch with where no launch may get as far as confining.

use crate::backend::{Backend, BackendError, Launch, Support};

/// A backend that says it confines and never gets the chance: a test that reaches `confine`
/// has failed already (nothing may fork, no server may start).
pub(crate) struct NeverReached;

impl Backend for NeverReached {
    fn name(&self) -> &'static str {
        "never reached"
    }
    fn support(&self) -> Support {
        Support::Supported { facts: Vec::new() }
    }
    fn confine(&self, _: &Launch) -> Result<(), BackendError> {
        Err(BackendError::new(std::io::Error::other("never reached")))
    }
}
