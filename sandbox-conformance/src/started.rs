//! The backend under test, started another way: the launcher of a case that shows each
//! [`ProgramStart`] is this binary with [`START_VARIABLE`] set, and its `main` wraps the backend so
//! that `program_start` answers the way named there, everything else as the backend does.

use sandbox_core::backend::{
    check::{Context, Outcome},
    BackendError, Launch, ProgramStart, Provisions, RefusalCode, Support,
};
use sandbox_core::explain::{ExplainError, Tracer};
use sandbox_core::{Backend, Policy};

/// The variable naming the start of a case's launcher: `path`, `opened` or `spawn`.
pub(crate) const START_VARIABLE: &str = "SANDBOX_CONFORMANCE_START";

/// The way `value` of [`START_VARIABLE`] names.
pub(crate) fn named(value: &str) -> Option<ProgramStart> {
    match value {
        "path" => Some(ProgramStart::ExecByPath),
        "opened" => Some(ProgramStart::ExecOpenedBefore),
        "spawn" => Some(ProgramStart::SpawnAndWait),
        _ => None,
    }
}

/// `inner`, starting programs by `start`.
pub(crate) struct Started<'a> {
    pub(crate) inner: &'a dyn Backend,
    pub(crate) start: ProgramStart,
}

impl Backend for Started<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn support(&self) -> Support {
        self.inner.support()
    }
    fn confine(&self, launch: &Launch) -> Result<(), BackendError> {
        self.inner.confine(launch)
    }
    fn verify(&self, context: &Context) -> Vec<Outcome> {
        self.inner.verify(context)
    }
    fn confines_by_reexec(&self) -> bool {
        self.inner.confines_by_reexec()
    }
    fn confines_at_creation(&self) -> bool {
        self.inner.confines_at_creation()
    }
    fn prepare_launcher(
        &self,
        command: &mut std::process::Command,
        launch: &Launch,
    ) -> Result<(), BackendError> {
        self.inner.prepare_launcher(command, launch)
    }
    fn program_start(&self) -> ProgramStart {
        self.start
    }
    fn refusal_errors(&self) -> &'static [RefusalCode] {
        self.inner.refusal_errors()
    }
    fn provisions(&self) -> Provisions {
        self.inner.provisions()
    }
    fn tracer(
        &self,
        policy: &Policy,
        program: &std::path::Path,
        launcher: &std::path::Path,
        supervised: bool,
    ) -> Result<Box<dyn Tracer>, ExplainError> {
        self.inner.tracer(policy, program, launcher, supervised)
    }
}
