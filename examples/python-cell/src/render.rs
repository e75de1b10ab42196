//! What the cell shows, and the exit status that goes with it.

use cell::Outcome;

/// The value was printed.
pub const EXIT_VALUE: u8 = 0;
/// The cell failed: `#PYTHON!`, `#TIMEOUT!`, `#CAPPED!`, `#CRASHED!`.
pub const EXIT_FAILED: u8 = 1;
/// The command line was wrong.
pub const EXIT_USAGE: u8 = 2;
/// `#BLOCKED!`: no sandbox here, or the launcher refused; nothing ran.
pub const EXIT_BLOCKED: u8 = 3;
/// The cell could not be set up: no interpreter, or the system refused to start it.
pub const EXIT_SETUP: u8 = 4;

/// A cell as shown: its text, a note saying why when it is an error, and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// What the cell shows: the value, or an error code such as `#TIMEOUT!`.
    pub cell: String,
    /// Why, for an error.
    pub note: Option<String>,
    /// The exit status.
    pub exit: u8,
}

/// How `outcome` is shown.
///
/// | outcome | cell |
/// | --- | --- |
/// | a value | the value, as `str()` gives it (nothing for `None`) |
/// | an exception | `#PYTHON!`, the note `Type: message` |
/// | past the timeout | `#TIMEOUT!` |
/// | past the output cap | `#CAPPED!` |
/// | another end (a signal), or a runner that broke its protocol | `#CRASHED!` |
/// | no sandbox, or refused | `#BLOCKED!` |
pub fn show(outcome: &Outcome) -> Shown {
    let error = |code: &str, note: String, exit: u8| Shown {
        cell: code.to_owned(),
        note: Some(note),
        exit,
    };
    match outcome {
        Outcome::Value { value, .. } => Shown {
            cell: value.clone(),
            note: None,
            exit: EXIT_VALUE,
        },
        Outcome::Error { message, .. } => error("#PYTHON!", message.clone(), EXIT_FAILED),
        Outcome::TimedOut { .. } => error("#TIMEOUT!", outcome.to_string(), EXIT_FAILED),
        Outcome::OutputCapped { .. } => error("#CAPPED!", outcome.to_string(), EXIT_FAILED),
        Outcome::Crashed { .. } | Outcome::Garbled { .. } => {
            error("#CRASHED!", outcome.to_string(), EXIT_FAILED)
        }
        Outcome::Blocked(blocked) => error("#BLOCKED!", blocked.to_string(), EXIT_BLOCKED),
        other => error("#UNKNOWN!", other.to_string(), EXIT_FAILED),
    }
}

/// What of the cell's diagnostics to show with it: all of them, but for a cell past its output
/// cap, whose output is the very thing that was too much (a megabyte of it, by default), and
/// whose note says so.
pub fn diagnostics(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::OutputCapped { .. } => "",
        other => other.diagnostics(),
    }
}
