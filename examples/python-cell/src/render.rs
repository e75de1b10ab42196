//! What the cell shows, and the exit status that goes with it.

use cell::Outcome;
use sandbox_core::explain::Explanation;

/// The value was printed.
pub const EXIT_VALUE: u8 = 0;
/// The cell failed: `#PYTHON!`, `#TIMEOUT!`, `#CAPPED!`, `#CRASHED!`.
pub const EXIT_FAILED: u8 = 1;
/// The command line was wrong.
pub const EXIT_USAGE: u8 = 2;
/// `#BLOCKED!`: no sandbox here, or the launcher refused, and nothing ran; or the cell failed
/// and the sandbox had refused it something (a file, a system call), which the note names.
pub const EXIT_BLOCKED: u8 = 3;
/// The cell could not be set up: no interpreter, or the system refused to start it.
pub const EXIT_SETUP: u8 = 4;

/// The most bytes shown of what a `#CAPPED!` cell printed: enough to see what flooded, and no
/// more of the output that was too much.
pub const CAPPED_SHOWN: usize = 200;

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
/// | past the output cap | `#CAPPED!`, the note saying how much of its output was cut |
/// | another end (a signal), or a runner that broke its protocol | `#CRASHED!` |
/// | no sandbox, or refused | `#BLOCKED!` |
///
/// A failed cell the sandbox refused something shows `#BLOCKED!` too, once an explained run has
/// said what ([`refused`]).
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
        Outcome::OutputCapped { cap, .. } => {
            // It printed more than the cap, and no more than `shown` of it is shown.
            let cut = cap.saturating_sub(diagnostics(outcome).len());
            let note = format!("{outcome}; more than {cut} bytes of its output were cut");
            error("#CAPPED!", note, EXIT_FAILED)
        }
        Outcome::Crashed { .. } | Outcome::Garbled { .. } => {
            error("#CRASHED!", outcome.to_string(), EXIT_FAILED)
        }
        Outcome::Blocked(blocked) => error("#BLOCKED!", blocked.to_string(), EXIT_BLOCKED),
        other => error("#UNKNOWN!", other.to_string(), EXIT_FAILED),
    }
}

/// Whether a cell that came to `outcome` may have failed because the sandbox refused it
/// something, so that running it again explained can say what: an exception or a crash. A
/// value, a timeout or the cap is the cell's own doing.
pub fn may_be_refused(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Error { .. } | Outcome::Crashed { .. })
}

/// How a failed cell is shown once an explained run of it has said what the sandbox refused:
/// `#BLOCKED!`, the note naming each refusal (`reading /etc/ssl/openssl.cnf was refused`) and
/// then how the cell failed (`failed`, as [`show`] shows it). What `baseline`, the explanation
/// of an empty cell, was refused too is the interpreter's own start (the loader's cache, the
/// locale aliases it looks for and does without), not the cell's, and is left out. `None` when
/// the sandbox refused the cell nothing else, and its failure is its own.
pub fn refused(failed: &Shown, explanation: &Explanation, baseline: &Explanation) -> Option<Shown> {
    let mut own = explanation.clone();
    own.files
        .retain(|f| !baseline.files.iter().any(|b| b.access == f.access));
    own.calls.retain(|c| {
        !baseline
            .calls
            .iter()
            .any(|b| b.name == c.name && b.answer == c.answer)
    });
    let sentences = own.sentences();
    if sentences.is_empty() {
        return None;
    }
    let mut note = sentences.join("; ");
    if let Some(why) = &failed.note {
        note.push_str(&format!(" (the cell failed: {why})"));
    }
    Some(Shown {
        cell: "#BLOCKED!".to_owned(),
        note: Some(note),
        exit: EXIT_BLOCKED,
    })
}

/// What of the cell's diagnostics to show with it: all of them, but for a cell past its output
/// cap, whose output is the very thing that was too much (a megabyte of it, by default): of that,
/// the first [`CAPPED_SHOWN`] bytes at most (cut where a character ends), and its note says how
/// much was cut.
pub fn diagnostics(outcome: &Outcome) -> &str {
    let all = outcome.diagnostics();
    match outcome {
        Outcome::OutputCapped { .. } => {
            let end = (0..=CAPPED_SHOWN.min(all.len()))
                .rev()
                .find(|&at| all.is_char_boundary(at))
                .unwrap_or(0);
            &all[..end]
        }
        _ => all,
    }
}

/// A bound the cell ran without, in one line: which, and why this machine does not enforce it.
pub fn unenforced(missing: &sandbox_core::Unenforced) -> String {
    let what = match missing.bound {
        "tasks" => "the number of tasks (threads)",
        other => other,
    };
    format!("{what} was not bounded for this cell: {}", missing.reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_core::explain::{PathRight, Right, Seen};

    fn read(path: &str) -> PathRight {
        PathRight {
            named: path.into(),
            resolved: path.into(),
            right: Right::Read,
        }
    }

    /// What an empty cell is refused too is the interpreter's start, not the cell's.
    #[test]
    fn a_refused_cell_names_only_what_an_empty_cell_is_not_refused() {
        let failed = show(&Outcome::Error {
            message: "PermissionError: denied".to_owned(),
            diagnostics: String::new(),
        });
        let mut baseline = Explanation::new(Seen::Everything);
        baseline.add_file(read("/etc/ld.so.cache"), "openat");
        let mut explanation = baseline.clone();
        assert_eq!(refused(&failed, &explanation, &baseline), None);
        explanation.add_file(read("/etc/ssl/openssl.cnf"), "openat");
        explanation.add_call("socket".into(), "EPERM".into(), Vec::new());
        let shown = refused(&failed, &explanation, &baseline).unwrap();
        assert_eq!(shown.cell, "#BLOCKED!");
        assert_eq!(shown.exit, EXIT_BLOCKED);
        assert_eq!(
            shown.note.as_deref(),
            Some(
                "reading /etc/ssl/openssl.cnf was refused; the system call socket was refused \
                 (the cell failed: PermissionError: denied)"
            )
        );
    }

    #[test]
    fn a_capped_cell_shows_the_head_of_its_output_and_says_how_much_was_cut() {
        let capped = |diagnostics: &str| Outcome::OutputCapped {
            cap: 1000,
            diagnostics: diagnostics.to_owned(),
        };
        let long = capped(&format!("a{}", "é".repeat(500)));
        // 200 bytes would end inside a character: 199 do not.
        assert_eq!(diagnostics(&long), format!("a{}", "é".repeat(99)));
        assert_eq!(
            show(&long).note.as_deref(),
            Some(
                "the cell printed more than 1000 bytes and was killed; \
                 more than 801 bytes of its output were cut"
            )
        );
        let short = capped("e\n");
        assert_eq!(diagnostics(&short), "e\n");
        let none = capped("");
        assert_eq!(
            show(&none).note.as_deref(),
            Some(
                "the cell printed more than 1000 bytes and was killed; \
                 more than 1000 bytes of its output were cut"
            )
        );
    }
}
