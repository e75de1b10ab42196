// Code that only launches compiles against sandbox-core alone, generic or through `dyn`.
use sandbox_core::{raw::{launch_command, Canary}, Backend, Policy};

fn command<B: Backend>(backend: &B, canary: &Canary) -> Option<std::process::Command> {
    launch_command(backend, &Policy::new(), canary, "/bin/true", ["x"]).ok()
}

fn dynamic(backend: &dyn Backend) -> bool {
    backend.support().is_supported()
}

fn main() {
    let _unused = (dynamic as fn(&dyn Backend) -> bool, command::<NoBackend>);
}

struct NoBackend;

impl Backend for NoBackend {
    fn name(&self) -> &'static str {
        "none"
    }
    fn support(&self) -> sandbox_core::backend::Support {
        sandbox_core::backend::Support::NoBackend {
            facts: Vec::new(),
            reason: sandbox_core::backend::BackendError::new(std::io::Error::other("a test backend")),
        }
    }
    fn confine(&self, _: &sandbox_core::backend::Launch) -> Result<(), sandbox_core::backend::BackendError> {
        Err(sandbox_core::backend::BackendError::new(std::io::Error::other("a test backend")))
    }
}
