//! A fact behind a backend's answer, and the facts every backend's answer starts with.

use std::fmt;

/// One fact behind a `Support` answer, such as `landlock ABI` = `7`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// What the fact is about.
    pub name: &'static str,
    /// What was found.
    pub value: String,
}

impl Fact {
    /// A fact named `name` with `value`.
    pub fn new(name: &'static str, value: impl Into<String>) -> Self {
        Self {
            name,
            value: value.into(),
        }
    }

    /// The two facts every backend's answer starts with: the operating system and the
    /// architecture this was built for, as Rust names them (`os: linux`, `arch: x86_64`).
    pub fn system() -> Vec<Fact> {
        vec![
            Fact::new("os", std::env::consts::OS),
            Fact::new("arch", std::env::consts::ARCH),
        ]
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.value)
    }
}
