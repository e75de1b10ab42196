//! The FreeBSD backend, planned on Capsicum, and not yet able to confine: it refuses every
//! launch, and says why.
//!
//! What the contract already carries for it: Capsicum's capability mode (`cap_enter`) confines a
//! process in place, but a process in it can look up no path at all, `exec` included, so this
//! backend asks for [`ProgramStart::ExecOpenedBefore`] (the program opened before `confine`,
//! executed with `fexecve`), and it counts capability mode's own refusals, `ECAPMODE` and
//! `ENOTCAPABLE`, as refusals in the enforcement check ([`Backend::refusal_errors`]). What is
//! missing: the confinement itself (the policy's paths opened as descriptors before `cap_enter`,
//! and programs that look nothing up by path), and a FreeBSD machine that has run the
//! conformance suite. Until then a launch here would be a confinement nobody has seen hold, so
//! [`FreebsdBackend::support`] answers [`Support::Unavailable`] on FreeBSD (a launch is built,
//! and the launcher refuses it with the reason) and [`Support::NoBackend`] anywhere else.
//!
//! ```
//! use sandbox_core::Backend;
//! let backend = sandbox_freebsd::FreebsdBackend;
//! assert!(!backend.support().is_supported());
//! ```
#![forbid(unsafe_code)]

use sandbox_core::{
    backend::{BackendError, Fact, Launch, ProgramStart, RefusalCode, Support, WrongSystem},
    Backend,
};

/// Capability mode's refusal of a call it forbids (`sys/errno.h`).
pub const ECAPMODE: i32 = 94;
/// Capability mode's refusal of a descriptor used beyond its rights (`sys/errno.h`).
pub const ENOTCAPABLE: i32 = 93;

/// Why this backend does not confine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FreebsdError {
    /// On FreeBSD: the Capsicum confinement is not built and proven yet.
    #[error(
        "the FreeBSD backend cannot confine yet: its Capsicum confinement is not built, and no \
         FreeBSD machine has run the conformance suite; every launch is refused"
    )]
    NotProven,
}

/// The FreeBSD backend: it confines nothing yet and refuses every launch.
#[derive(Debug, Clone, Copy, Default)]
pub struct FreebsdBackend;

impl Backend for FreebsdBackend {
    fn name(&self) -> &'static str {
        "freebsd"
    }

    fn support(&self) -> Support {
        if !cfg!(target_os = "freebsd") {
            return Support::wrong_system(self.name(), "FreeBSD");
        }
        let mut facts = Fact::system();
        facts.push(Fact::new("mechanism", "Capsicum (planned, not built)"));
        Support::Unavailable {
            facts,
            reason: BackendError::new(FreebsdError::NotProven),
        }
    }

    fn confine(&self, _launch: &Launch) -> Result<(), BackendError> {
        if !cfg!(target_os = "freebsd") {
            return Err(BackendError::new(WrongSystem::new(self.name(), "FreeBSD")));
        }
        Err(BackendError::new(FreebsdError::NotProven))
    }

    fn program_start(&self) -> ProgramStart {
        ProgramStart::ExecOpenedBefore
    }

    fn refusal_errors(&self) -> &'static [RefusalCode] {
        const REFUSALS: &[RefusalCode] = &[
            RefusalCode::from_raw(ECAPMODE),
            RefusalCode::from_raw(ENOTCAPABLE),
        ];
        REFUSALS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On FreeBSD it would be `Unavailable` with the reason that nothing is proven; the text is
    /// checked everywhere, since no FreeBSD machine runs these tests.
    #[test]
    fn the_freebsd_reason_says_nothing_is_proven_and_every_launch_is_refused() {
        let text = FreebsdError::NotProven.to_string();
        assert!(
            text.starts_with("the FreeBSD backend cannot confine yet: "),
            "{text}"
        );
        assert!(text.ends_with("every launch is refused"), "{text}");
    }
}
