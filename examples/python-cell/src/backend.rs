//! The backend this build confines with: `sandbox-platform`'s, the one place that names a
//! platform's sandbox. Everything else takes a `&dyn Backend`; where there is no sandbox, every
//! cell shows `#BLOCKED!`.

pub use sandbox_platform::backend;
