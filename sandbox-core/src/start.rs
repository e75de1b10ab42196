//! How the program is started once the launcher is confined ([`ProgramStart`]), as the backend
//! contract states it. A file of its own, depending on nothing, because the contract names it, the
//! launch sequence honours it and a refusal reports it.

/// How the launch sequence starts the program once the launcher is confined and the enforcement
/// check has passed.
///
/// A path-based confinement (Landlock, Seatbelt) lets the confined launcher look the program up by
/// its path. A capability system does not: in FreeBSD's capability mode no path can be looked up,
/// so the program must be opened before `confine` and executed from that descriptor. A system
/// with no `exec` that replaces a process (Windows) would start the program beside the launcher
/// and wait for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgramStart {
    /// `exec` of the program's path, after the check (the default; Linux, macOS).
    ExecByPath,
    /// The program's file is opened before `confine` (close-on-exec, so the program never holds
    /// it), and executed from that descriptor after the check (`fexecve`). A program that is a
    /// script cannot start this way: its interpreter would be handed a descriptor already closed.
    ExecOpenedBefore,
    /// The launcher starts the program as its child and waits for it, passing its exit status
    /// on. No Unix launch sequence does this: on Unix a launch asking for it is refused before
    /// `confine` with [`Refusal::ProgramStart`](crate::Refusal::ProgramStart), and nothing runs.
    SpawnAndWait,
}

impl ProgramStart {
    /// The way in words, for refusals and reports.
    pub fn describe(self) -> &'static str {
        match self {
            ProgramStart::ExecByPath => "exec by path",
            ProgramStart::ExecOpenedBefore => "exec of a descriptor opened before confinement",
            ProgramStart::SpawnAndWait => "spawn and wait",
        }
    }
}
