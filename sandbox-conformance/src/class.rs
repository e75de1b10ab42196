//! What a backend answers on this machine, and the classes a case applies to.

use sandbox_core::backend::Support;

/// What a backend answers on this machine, which decides the cases that apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// [`Support::Supported`]: every case applies.
    Confines,
    /// [`Support::Unavailable`]: launches are built, and the launcher refuses them.
    Unavailable,
    /// [`Support::NoBackend`]: no launch is built, and a launcher started by hand refuses.
    NoBackend,
}

impl Class {
    /// The class of `support`.
    pub fn of(support: &Support) -> Self {
        match support {
            Support::Supported { .. } => Class::Confines,
            Support::Unavailable { .. } => Class::Unavailable,
            Support::NoBackend { .. } => Class::NoBackend,
            // An answer newer than this suite: the fewest promises, so that every case about
            // launches a backend of that kind builds fails until the suite knows it.
            _ => Class::NoBackend,
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Class::Confines => "Supported",
            Class::Unavailable => "Unavailable",
            Class::NoBackend => "NoBackend",
        })
    }
}

/// Every class.
pub(crate) const ALL: &[Class] = &[Class::Confines, Class::Unavailable, Class::NoBackend];
/// Where launches are built.
pub(crate) const BUILT: &[Class] = &[Class::Confines, Class::Unavailable];
/// Where the launcher refuses every launch.
pub(crate) const REFUSING: &[Class] = &[Class::Unavailable, Class::NoBackend];
/// Where programs run confined.
pub(crate) const CONFINED: &[Class] = &[Class::Confines];

/// Where the launch server runs its cases: a backend that confines, on Linux (the server is
/// Linux's: it needs the parent-death signal).
pub(crate) const SERVED: &[Class] = if cfg!(target_os = "linux") {
    CONFINED
} else {
    &[]
};
