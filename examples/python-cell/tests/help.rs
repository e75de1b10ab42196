//! Issue 50.11: `python-cell --help` says what `#BLOCKED!` and `#PYTHON!` mean and what warm
//! cells share, and the real binary does what it says.
#![cfg(target_os = "linux")]

mod common;

use common::{python_cell, run};

fn help() -> String {
    let done = run(python_cell(&["--help"]), None);
    assert_eq!(done.code, Some(0));
    // clap wraps nothing without a terminal, but a paragraph is compared as one line anyway.
    done.stdout.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn blocked_is_said_to_cover_a_refused_access_of_a_cell_that_ran_and_it_does() {
    let help = help();
    assert!(
        help.contains(
            "#BLOCKED! means the sandbox stopped the cell: either nothing ran (no sandbox here, or \
             the launcher refused), or the cell ran, failed, and a second, explained run showed \
             that the sandbox refused it something (a file, a folder's listing, a system call)"
        ),
        "{help}"
    );
    for (cell, refused) in [
        ("import os; os.listdir('/')", "listing / was refused"),
        (
            "open('/etc/passwd').read()",
            "reading /etc/passwd was refused",
        ),
    ] {
        let done = run(python_cell(&[cell]), None);
        if done.stderr.contains("cannot be told here") {
            eprintln!(
                "SKIPPED: this system cannot trace the explained run: {}",
                done.note()
            );
            return;
        }
        assert_eq!(done.stdout, "#BLOCKED!\n", "{cell}");
        assert_eq!(done.code, Some(3), "{cell}");
        assert!(
            done.note()
                .starts_with(&format!("python-cell: {refused} (the cell failed: ")),
            "{cell}: {}",
            done.note()
        );
    }
}

#[test]
fn warm_cells_are_said_to_share_no_variables_and_a_refusal_there_is_python() {
    let help = help();
    assert!(
        help.contains(
            "Cells share no variables: each sees only its inputs, never a name an earlier cell \
             set. What the runner itself keeps does carry over, as in one interpreter: modules \
             once imported (and anything set on them) and its scratch folder's files. A refused \
             access shows #PYTHON! here"
        ),
        "{help}"
    );
    let done = run(
        python_cell(&["--warm"]),
        Some("x = 5\nx\nimport sys; sys.kept = 7\nimport sys; sys.kept\nimport os; os.listdir('/')\n"),
    );
    assert_eq!(done.code, Some(0));
    assert_eq!(done.stdout, "\n#PYTHON!\n\n7\n#PYTHON!\n");
    assert!(
        done.stderr
            .contains("python-cell: cell 2: NameError: name 'x' is not defined"),
        "{}",
        done.stderr
    );
    assert!(
        done.stderr
            .contains("python-cell: cell 5: PermissionError: [Errno 13] Permission denied: '/'"),
        "{}",
        done.stderr
    );
}
