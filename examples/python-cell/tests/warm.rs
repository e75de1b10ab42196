//! `python-cell --warm`: many cells of one workbook in one confined interpreter, through the real
//! binary and the Linux backend. Each test of `cells.rs` is here again through a warm runner,
//! which is confined exactly as a cold cell; then what is the runner's own: order, recovery after
//! a cell that costs the runner, and workbooks kept apart.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

use common::{bound_lines, cell_notes, python_cell, run, unenforced_json, Run, PROCESS_STARTS};

/// `python-cell --warm ARGS...` with `lines` on standard input, one cell a line.
fn warm(args: &[&str], lines: &[&str]) -> Run {
    let mut all = vec!["--warm"];
    all.extend_from_slice(args);
    let mut input = lines.join("\n");
    input.push('\n');
    run(python_cell(&all), Some(&input))
}

/// A JSON line for `code` with `inputs` (JSON texts).
fn json_line(code: &str, inputs: &[(&str, &str)]) -> String {
    let inputs: serde_json::Map<String, serde_json::Value> = inputs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), serde_json::from_str(value).unwrap()))
        .collect();
    serde_json::json!({ "code": code, "inputs": inputs }).to_string()
}

/// The results of a `--json` run, each as (cell, note, diagnostics).
fn results(stdout: &str) -> Vec<(String, Option<String>, String)> {
    stdout
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                value["cell"].as_str().unwrap().to_owned(),
                value["note"].as_str().map(str::to_owned),
                value["diagnostics"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

// The tests of cells.rs, each through a warm runner.

#[test]
fn warm_arithmetic_shows_its_value() {
    let got = warm(&[], &["1+1"]);
    assert_eq!(got.stdout, "2\n");
    assert_eq!(got.stderr, bound_lines(Some(1)));
    assert_eq!(got.code, Some(0));
}

#[test]
fn warm_a_snippet_of_several_lines_comes_as_json() {
    let got = warm(&["--json"], &[&json_line("x = 6\nx * 7\n", &[])]);
    assert_eq!(
        got.stdout,
        format!(
            "{{\"cell\":\"42\",\"diagnostics\":\"\",\"note\":null,\"unenforced\":{}}}\n",
            unenforced_json()
        )
    );
    assert_eq!(got.code, Some(0));
}

#[test]
fn warm_inputs_are_names_in_the_snippet() {
    let args = [
        "--input", "n=3", "--input", "s=\"ab\"", "--input", "xs=[1,2]",
    ];
    let got = warm(&args, &["s * n + str(sum(xs))", "n"]);
    assert_eq!(got.stdout, "ababab3\n3\n");
    assert_eq!(got.code, Some(0));
}

#[test]
fn warm_what_the_snippet_prints_is_diagnostics_not_the_value() {
    let got = warm(&[], &["print('hello'); None"]);
    assert_eq!(got.stdout, "\n");
    assert_eq!(got.stderr, format!("hello\n{}", bound_lines(Some(1))));
    let got = warm(&["--json"], &[&json_line("print('hello')\nNone", &[])]);
    assert_eq!(
        results(&got.stdout),
        [(String::new(), None, "hello\n".to_owned())]
    );
    assert_eq!(got.code, Some(0));
}

#[test]
fn warm_writing_a_file_is_refused_and_reported() {
    let target =
        std::env::temp_dir().join(format!("python-cell-warm-escape-{}", std::process::id()));
    let _ignored = std::fs::remove_file(&target);
    let snippet = format!("open({:?}, 'w').write('escaped')", target.to_str().unwrap());
    let got = warm(&[], &[&snippet]);
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(
        got.note(),
        format!(
            "python-cell: cell 1: PermissionError: [Errno 13] Permission denied: '{}'",
            target.display()
        )
    );
    assert!(
        got.stderr
            .starts_with("Traceback (most recent call last):\n  File \"<cell>\", line 1"),
        "the traceback shows the cell's own line"
    );
    assert!(!target.exists(), "the file was created");
}

#[test]
fn warm_a_loop_that_never_ends_is_killed_at_the_timeout() {
    let got = warm(&["--timeout", "1"], &["while True: pass"]);
    assert_eq!(got.stdout, "#TIMEOUT!\n");
    assert_eq!(
        got.stderr,
        format!(
            "{}python-cell: cell 1: the cell ran longer than 1s and was killed\n",
            bound_lines(Some(1))
        )
    );
    assert_eq!(got.code, Some(0));
    assert!(got.took >= Duration::from_secs(1), "{:?}", got.took);
}

#[test]
fn warm_printing_100_mb_is_capped_and_only_its_head_is_shown() {
    let got = warm(&["--timeout", "60"], &["print('x' * 100_000_000)"]);
    assert_eq!(got.stdout, "#CAPPED!\n");
    assert_eq!(
        got.stderr,
        format!(
            "{}\n{}python-cell: cell 1: the cell printed more than 1048576 bytes and was killed; \
             more than 1048376 bytes of its output were cut\n",
            "x".repeat(200),
            bound_lines(Some(1))
        )
    );
    let got = warm(
        &["--timeout", "60", "--json"],
        &[&json_line("print('x' * 100_000_000)", &[])],
    );
    assert_eq!(
        results(&got.stdout),
        [(
            "#CAPPED!".to_owned(),
            Some(
                "the cell printed more than 1048576 bytes and was killed; \
                 more than 1048376 bytes of its output were cut"
                    .to_owned()
            ),
            "x".repeat(200)
        )]
    );
    assert!(got.stdout.len() < 1000, "{} bytes", got.stdout.len());
}

#[test]
fn warm_a_cap_counts_both_streams_together() {
    let snippet = "print('e' * 600); 'v' * 600";
    let got = warm(&["--output-cap", "1000"], &[snippet]);
    assert_eq!(got.stdout, "#CAPPED!\n");
    let got = warm(&["--output-cap", "1300"], &[snippet]);
    assert_eq!(got.stdout, format!("{}\n", "v".repeat(600)));
}

#[test]
fn warm_memory_beyond_the_limit_is_refused_for_the_runners_whole_life() {
    // Each cell may take far longer than the default 10 s: filling 512 MiB took more than that
    // on a busy machine (two cores, a load of 30), and the cell ended #TIMEOUT!.
    let got = warm(
        &["--memory-limit", "256", "--timeout", "120"],
        &["len(bytearray(512 * 1024 * 1024))"],
    );
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(got.note(), "python-cell: cell 1: MemoryError");
    // A long timeout: touching 512 MiB on a busy machine (CI's stress step) took past the
    // default 10 s, and the timeout would then be the machine's verdict, not the limit's.
    let got = warm(
        &["--memory-limit", "1024", "--timeout", "120"],
        &["len(bytearray(512 * 1024 * 1024))"],
    );
    assert_eq!(got.stdout, "536870912\n");
    // What one cell keeps counts against the next: the limit is the runner's, not the cell's.
    let got = warm(
        &["--memory-limit", "256", "--timeout", "120"],
        &[
            "import builtins; builtins.kept = bytearray(150 << 20); len(kept)",
            "len(bytearray(150 << 20))",
        ],
    );
    assert_eq!(got.stdout, "157286400\n#PYTHON!\n");
    assert_eq!(got.note(), "python-cell: cell 2: MemoryError");
}

#[test]
fn warm_an_exception_shows_python_error_with_its_message() {
    let got = warm(&[], &["1/0", "1+"]);
    assert_eq!(got.stdout, "#PYTHON!\n#PYTHON!\n");
    assert!(
        got.stderr.starts_with(&format!(
            "Traceback (most recent call last):\n  File \"<cell>\", line 1, in <module>\n\
             ZeroDivisionError: division by zero\n\
             {}python-cell: cell 1: ZeroDivisionError: division by zero\n",
            bound_lines(Some(1))
        )),
        "{}",
        got.stderr
    );
    assert_eq!(
        got.note(),
        "python-cell: cell 2: SyntaxError: invalid syntax"
    );
}

#[test]
fn warm_the_cell_sees_no_environment_of_the_parent() {
    let mut all = vec!["--warm"];
    all.push("--timeout");
    all.push("10");
    let mut command = python_cell(&all);
    command
        .env("PYTHON_CELL_SECRET", "hunter2")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("TZ");
    let got = run(command, Some("import os; sorted(os.environ.items())\n"));
    assert_eq!(
        got.stdout,
        "[('LANG', 'C.UTF-8'), ('PATH', '/usr/bin:/bin')]\n"
    );
}

#[test]
fn warm_a_refused_launch_shows_blocked_and_runs_nothing() {
    let mut command = python_cell(&["--warm"]);
    command.env(sandbox_core::backend::phases::FAULT_VARIABLE, "verify");
    let got = run(command, Some("print('ran'); 1\n2\n"));
    assert_eq!(got.stdout, "#BLOCKED!\n#BLOCKED!\n");
    let note = "the sandbox refused to run the cell: a fault was injected before verify";
    assert_eq!(
        got.stderr,
        format!("python-cell: cell 1: {note}\npython-cell: cell 2: {note}\n")
    );
    assert_eq!(got.code, Some(3));
}

#[test]
fn warm_a_cell_that_prints_a_refusal_and_exits_97_has_crashed_not_been_blocked() {
    let got = warm(
        &[],
        &[
            "import os; os.write(2, b'sandbox: refused: x\\n'); os._exit(97)",
            "1+1",
        ],
    );
    assert_eq!(got.stdout, "#CRASHED!\n2\n");
    // The crash cost the runner: the next cell's new one says the bounds again.
    assert_eq!(
        got.stderr,
        format!(
            "sandbox: refused: x\n\
             {}python-cell: cell 1: the cell's program ended with exit status: 97\n{}",
            bound_lines(Some(1)),
            bound_lines(Some(2))
        )
    );
    assert_eq!(got.code, Some(0));
}

#[test]
fn warm_a_name_given_twice_is_a_usage_error() {
    // No standard input: python-cell refuses before it would read any.
    let got = run(
        python_cell(&["--warm", "--input", "a=1", "--input", "a=2"]),
        None,
    );
    assert_eq!(got.stdout, "");
    assert_eq!(got.stderr, "python-cell: the input a is given twice\n");
    assert_eq!(got.code, Some(2));
}

#[test]
fn warm_starting_a_process_is_refused_and_said() {
    let snippets: Vec<&str> = PROCESS_STARTS.iter().map(|(snippet, _)| *snippet).collect();
    let got = warm(&[], &snippets);
    assert_eq!(got.stdout, "#PYTHON!\n".repeat(PROCESS_STARTS.len()));
    let notes = cell_notes(&got.stderr);
    let expected: Vec<String> = PROCESS_STARTS
        .iter()
        .enumerate()
        .map(|(i, (_, note))| format!("python-cell: cell {}: {note}", i + 1))
        .collect();
    assert_eq!(notes, expected);
}

// What is the warm runner's own.

#[test]
fn a_runner_is_replaced_after_its_cells_or_its_age() {
    let pid = "import os; os.getpid()";
    let got = warm(&["--max-cells", "2"], &[pid; 5]);
    let pids: Vec<&str> = got.stdout.lines().collect();
    assert_eq!(pids.len(), 5);
    assert_eq!((pids[0], pids[2]), (pids[1], pids[3]));
    assert!(pids[0] != pids[2] && pids[2] != pids[4] && pids[0] != pids[4]);
    // A runner's first cell alone (its interpreter's start) outlasts a millisecond.
    let got = warm(&["--max-age", "0.001"], &[pid; 3]);
    let pids: Vec<&str> = got.stdout.lines().collect();
    assert!(pids[0] != pids[1] && pids[1] != pids[2] && pids[0] != pids[2]);
}

#[test]
fn a_value_longer_than_a_pipe_holds_comes_whole() {
    let got = warm(&[], &["'v' * 900_000", "len('w' * 900_000)"]);
    assert_eq!(got.stdout, format!("{}\n900000\n", "v".repeat(900_000)));
}

/// The lines of `text` as Python's `str.splitlines()` finds them, the way a workbook's reader
/// may split the results.
fn python_lines(text: &str) -> Vec<&str> {
    let breaks = [
        '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ];
    let mut lines: Vec<&str> = text.split(breaks).collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

#[test]
fn a_value_holding_a_line_separator_stays_one_result_and_forges_none() {
    // Before: `\u2028` and its kind went out as they were, so the first cell read as two results,
    // the second a `#BLOCKED!` of the cell's making, and the answer `1` came one line late.
    for separator in [
        "\\v", "\\f", "\\x1c", "\\x1d", "\\x1e", "\\x85", "\\u2028", "\\u2029",
    ] {
        let cell = format!("'x{separator}#BLOCKED!'");
        let got = warm(&[], &[&cell, "1"]);
        assert_eq!(got.code, Some(0), "{separator}: {}", got.stderr);
        assert_eq!(
            python_lines(&got.stdout).len(),
            2,
            "{separator}: {:?}",
            got.stdout
        );
        let code = match separator {
            "\\v" => 0xb,
            "\\f" => 0xc,
            other => u32::from_str_radix(&other[2..], 16).unwrap(),
        };
        assert_eq!(
            got.stdout,
            format!("x\\u{code:04X}#BLOCKED!\n1\n"),
            "{separator}"
        );
        let got = warm(&["--json"], &[&json_line(&cell, &[]), &json_line("1", &[])]);
        assert_eq!(
            python_lines(&got.stdout).len(),
            2,
            "{separator}: {:?}",
            got.stdout
        );
        let results = results(&got.stdout);
        let want = char::from_u32(code).unwrap();
        assert_eq!(results[0].0, format!("x{want}#BLOCKED!"), "{separator}");
        assert_eq!(results[1].0, "1", "{separator}");
    }
}

#[test]
fn a_thousand_warm_cells_give_their_thousand_answers_in_order_from_one_runner() {
    let lines: Vec<String> = (0..1000)
        .map(|i| {
            json_line(
                "import os; f'{x * 2} {os.getpid()}'",
                &[("x", &i.to_string())],
            )
        })
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let got = warm(&["--json"], &lines);
    assert_eq!(got.code, Some(0));
    let results = results(&got.stdout);
    assert_eq!(results.len(), 1000);
    let runner = results[0].0.split(' ').nth(1).unwrap().to_owned();
    for (i, (cell, note, diagnostics)) in results.iter().enumerate() {
        assert_eq!(cell, &format!("{} {runner}", i * 2), "cell {i}");
        assert_eq!((note, diagnostics.as_str()), (&None, ""), "cell {i}");
    }
}

#[test]
fn a_timeout_a_cap_a_crash_and_an_exception_do_not_disturb_the_cells_after_them() {
    let pid = "import os; os.getpid()";
    let got = warm(
        &["--timeout", "1", "--output-cap", "100000"],
        &[
            pid,
            "1+1",
            "while True: pass",
            pid,
            "2+2",
            "print('x' * 1_000_000)",
            "3+3",
            "1/0",
            "4+4",
            pid,
            "import os; os._exit(3)",
            "5+5",
        ],
    );
    assert_eq!(got.code, Some(0));
    let lines: Vec<&str> = got.stdout.lines().collect();
    assert_eq!(lines.len(), 12, "{}", got.stdout);
    let shown: Vec<&str> = [1, 2, 4, 5, 6, 7, 8, 10, 11].map(|i| lines[i]).into();
    assert_eq!(
        shown,
        [
            "2",
            "#TIMEOUT!",
            "4",
            "#CAPPED!",
            "6",
            "#PYTHON!",
            "8",
            "#CRASHED!",
            "10"
        ]
    );
    // A timeout costs the runner; an exception does not.
    assert_ne!(
        lines[0], lines[3],
        "the runner was not replaced after the timeout"
    );
    assert_ne!(
        lines[3], lines[9],
        "the runner was not replaced after the cap"
    );
    let notes: String = got
        .stderr
        .lines()
        .filter(|line| line.starts_with("python-cell: "))
        .map(|line| format!("{line}\n"))
        .collect();
    // The bounds are said with the first cell of each program: cells 1, 4 (after the timeout),
    // 7 (after the cap) and 12 (after the crash).
    assert_eq!(
        notes,
        [
            bound_lines(Some(1)),
            "python-cell: cell 3: the cell ran longer than 1s and was killed\n".to_owned(),
            bound_lines(Some(4)),
            "python-cell: cell 6: the cell printed more than 100000 bytes and was killed; \
             more than 99800 bytes of its output were cut\n"
                .to_owned(),
            bound_lines(Some(7)),
            "python-cell: cell 8: ZeroDivisionError: division by zero\n".to_owned(),
            "python-cell: cell 11: the cell's program ended with exit status: 3\n".to_owned(),
            bound_lines(Some(12)),
        ]
        .concat()
    );
}

#[test]
fn a_cell_that_writes_on_the_answer_stream_costs_the_runner_not_the_next_cell() {
    // The driver's answers go on a descriptor of their own, 3 (0, 1 and 2 are taken when it is
    // made); a cell can find it, and a garbled answer gets the runner killed.
    let got = warm(
        &[],
        &[
            "import os; os.getpid()",
            "import os; os.write(3, b'x y\\n'); 1",
            "import os; os.getpid()",
            "2+2",
        ],
    );
    let lines: Vec<&str> = got.stdout.lines().collect();
    assert_eq!(lines[1..], ["#CRASHED!", lines[2], "4"]);
    assert_ne!(lines[0], lines[2], "the runner was not replaced");
    assert_eq!(
        cell_notes(&got.stderr),
        ["python-cell: cell 2: the cell's runner answered outside its protocol and was killed"]
    );
}

#[test]
fn each_cell_has_a_fresh_namespace_and_its_own_inputs() {
    let got = warm(
        &["--json"],
        &[
            &json_line("secret", &[("secret", "\"hunter2\"")]),
            &json_line("y = 1\nsecret", &[]),
            &json_line("y", &[]),
            &json_line("secret", &[("secret", "\"other\"")]),
        ],
    );
    let cells: Vec<String> = results(&got.stdout).into_iter().map(|r| r.0).collect();
    assert_eq!(cells, ["hunter2", "#PYTHON!", "#PYTHON!", "other"]);
    assert!(got.stderr.is_empty());
    let notes: Vec<Option<String>> = results(&got.stdout).into_iter().map(|r| r.1).collect();
    assert_eq!(
        notes[1..3],
        [
            Some("NameError: name 'secret' is not defined".to_owned()),
            Some("NameError: name 'y' is not defined".to_owned())
        ]
    );
}

#[test]
fn a_cell_cannot_read_another_workbooks_inputs() {
    // Workbook A's runner holds a secret input, and stays up while workbook B runs.
    let mut a = python_cell(&["--warm", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut a_in = a.stdin.take().unwrap();
    let mut a_out = BufReader::new(a.stdout.take().unwrap());
    let line = json_line(
        "import os; kept = secret; os.getpid()",
        &[("secret", "\"hunter2\"")],
    );
    writeln!(a_in, "{line}").unwrap();
    let mut answer = String::new();
    a_out.read_line(&mut answer).unwrap();
    let a_pid: u32 = results(&answer)[0].0.parse().expect("A's runner's pid");

    let got = warm(
        &[],
        &[
            "secret",
            &format!("open('/proc/{a_pid}/environ', 'rb').read()"),
            &format!("open('/proc/{a_pid}/mem', 'rb').read(1)"),
            &format!("open('/proc/{a_pid}/cmdline', 'rb').read()"),
            "import os; os.listdir('/proc')",
            &format!("import os; os.kill({a_pid}, 0)"),
        ],
    );
    assert_eq!(got.stdout, "#PYTHON!\n".repeat(6));
    let notes = cell_notes(&got.stderr);
    assert_eq!(
        notes,
        [
            "python-cell: cell 1: NameError: name 'secret' is not defined".to_owned(),
            format!(
                "python-cell: cell 2: PermissionError: [Errno 13] Permission denied: '/proc/{a_pid}/environ'"
            ),
            format!(
                "python-cell: cell 3: PermissionError: [Errno 13] Permission denied: '/proc/{a_pid}/mem'"
            ),
            format!(
                "python-cell: cell 4: PermissionError: [Errno 13] Permission denied: '/proc/{a_pid}/cmdline'"
            ),
            "python-cell: cell 5: PermissionError: [Errno 13] Permission denied: '/proc'".to_owned(),
            "python-cell: cell 6: PermissionError: [Errno 1] Operation not permitted".to_owned(),
        ]
    );

    // A is still up and still has its secret, for its own cells only.
    writeln!(a_in, "{}", json_line("secret", &[])).unwrap();
    writeln!(
        a_in,
        "{}",
        json_line("import builtins; len(dir(builtins))", &[])
    )
    .unwrap();
    drop(a_in);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut a_out, &mut rest).unwrap();
    let status = a.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let rest = results(&rest);
    assert_eq!(rest[0].0, "#PYTHON!");
    assert_eq!(
        rest[0].1.as_deref(),
        Some("NameError: name 'secret' is not defined")
    );
}
