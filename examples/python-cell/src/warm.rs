//! `python-cell --warm`: the cells on standard input, one a line, served by one warm runner, and
//! one result a line on standard output, in order.

use std::io::{BufRead, Write};

use cell::Outcome;
#[cfg(unix)]
use cell::{Recycle, Runner};
use python_cell::{render, request};
use sandbox_core::one_line;

#[cfg(unix)]
use crate::cli::{limits, with_scratch};
use crate::cli::{setup_failed, Cli};

/// One line's request, or why it is none.
fn parse_line(cli: &Cli, line: &str) -> Result<Vec<u8>, String> {
    if !cli.json {
        return Ok(request::encode(line, &cli.inputs));
    }
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let object = value.as_object().ok_or("not a JSON object")?;
    if let Some(key) = object.keys().find(|k| *k != "code" && *k != "inputs") {
        return Err(format!("unknown key {key:?}"));
    }
    let code = object
        .get("code")
        .and_then(|code| code.as_str())
        .ok_or("\"code\" is not a string")?;
    let mut inputs = Vec::new();
    match object.get("inputs") {
        None => {}
        Some(serde_json::Value::Object(given)) => {
            for (name, value) in given {
                inputs.push((name.clone(), value.to_string()));
            }
        }
        Some(_) => return Err("\"inputs\" is not an object".into()),
    }
    Ok(request::encode(code, &inputs))
}

/// A result on one line, for a reader that splits lines as Python's `str.splitlines()` does (at
/// `\v`, `\f`, U+001C to U+001E, U+0085, U+2028 and U+2029 besides `\n` and `\r`): a line break
/// is written `\n`, a carriage return `\r`, a backslash `\\`, and every other control character
/// but the tab, and the line and paragraph separators, as `\uXXXX`. Without this a value holding
/// U+2028 became two results, the second one of the cell's choosing (a forged `#BLOCKED!`) and
/// every later result one line off.
fn one_line_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if splits_a_line(c) => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// Whether a reader might end a line at `c`: every control character but the tab (C0, DEL and
/// C1, which hold `\v`, `\f`, the separators U+001C to U+001E and NEL), and the Unicode line and
/// paragraph separators.
fn splits_a_line(c: char) -> bool {
    (c.is_control() && c != '\t') || c == '\u{2028}' || c == '\u{2029}'
}

/// A JSON result on one line for the same readers: JSON escapes every C0 control already, but
/// leaves NEL, U+2028 and U+2029 as they are, which are valid only inside a string and so may be
/// written `\uXXXX` there without changing the value.
fn json_line_of(value: &serde_json::Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{85}' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04X}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// What serves the cells.
enum Serving<'a> {
    /// Nothing: there is no sandbox here.
    Blocked(cell::Blocked),
    /// The workbook's runner.
    #[cfg(unix)]
    Runner(Box<Runner<'a>>),
    /// Only a runner borrows the backend.
    #[cfg(not(unix))]
    #[allow(dead_code)]
    Never(std::marker::PhantomData<&'a ()>),
}

impl Serving<'_> {
    /// How many programs have been started, and what the last one runs without.
    fn started(&self) -> (usize, Vec<sandbox_core::Unenforced>) {
        match self {
            #[cfg(unix)]
            Serving::Runner(runner) => (runner.started(), runner.unenforced().to_vec()),
            _ => (0, Vec::new()),
        }
    }

    fn run(&mut self, input: &[u8]) -> Result<Outcome, cell::CellError> {
        match self {
            Serving::Blocked(blocked) => Ok(Outcome::Blocked(blocked.clone())),
            #[cfg(unix)]
            Serving::Runner(runner) => runner.run(input),
            #[cfg(not(unix))]
            Serving::Never(_) => {
                let _ = input;
                unreachable!("never made")
            }
        }
    }
}

/// The workbook's runner, or why there is none.
#[cfg(unix)]
fn runner<'a>(backend: &'a dyn sandbox_core::Backend, cli: &Cli) -> Result<Serving<'a>, String> {
    let program = with_scratch(python_cell::warm_program().map_err(|e| one_line(&e))?, cli);
    let recycle = Recycle {
        cells: usize::try_from(cli.max_cells).unwrap_or(usize::MAX),
        age: cli.max_age,
    };
    Ok(Serving::Runner(Box::new(Runner::new(
        backend,
        program,
        limits(cli),
        recycle,
    ))))
}

/// A warm runner needs unix pipes to poll; where there is a sandbox but no unix, there is none.
#[cfg(not(unix))]
fn runner<'a>(_backend: &'a dyn sandbox_core::Backend, _cli: &Cli) -> Result<Serving<'a>, String> {
    Err("a warm runner needs a unix system".into())
}

/// Serves every line of standard input and returns the exit status.
pub fn serve(cli: &Cli) -> u8 {
    let backend = crate::backend::backend();
    // Where there is no sandbox, every cell shows #BLOCKED!, and no Python is looked for.
    let mut serving = match cell::blocked(&backend) {
        Some(blocked) => Serving::Blocked(blocked),
        None => match runner(&backend, cli) {
            Ok(serving) => serving,
            Err(why) => return setup_failed(&why),
        },
    };
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut exit = render::EXIT_VALUE;
    let mut told = 0;
    for (index, line) in stdin.lines().enumerate() {
        let number = index + 1;
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                return setup_failed(&format!("reading line {number}: {e}"));
            }
        };
        let (shown, diagnostics) = match parse_line(cli, &line) {
            Ok(input) => match serving.run(&input) {
                Ok(outcome) => {
                    if matches!(outcome, Outcome::Blocked(_)) {
                        exit = render::EXIT_BLOCKED;
                    }
                    let diagnostics = render::diagnostics(&outcome).to_owned();
                    (render::show(&outcome), diagnostics)
                }
                Err(e) => return setup_failed(&one_line(&e)),
            },
            Err(why) => {
                exit = exit.max(render::EXIT_USAGE);
                let shown = render::Shown {
                    cell: "#REQUEST!".into(),
                    note: Some(format!("not a request: {why}")),
                    exit: render::EXIT_USAGE,
                };
                (shown, String::new())
            }
        };
        // Said with the first cell each new program serves, and on every JSON line.
        let (started, unenforced) = serving.started();
        let new_program = started != told;
        told = started;
        let written = if cli.json {
            let unenforced: Vec<_> = unenforced
                .iter()
                .map(|m| serde_json::json!({"bound": m.bound, "reason": m.reason}))
                .collect();
            let result = serde_json::json!({
                "cell": shown.cell,
                "note": shown.note,
                "diagnostics": diagnostics,
                "unenforced": unenforced,
            });
            writeln!(stdout, "{}", json_line_of(&result))
        } else {
            let mut stderr = std::io::stderr().lock();
            // Nowhere else to report a failure to write to the terminal.
            let _ignored = stderr.write_all(diagnostics.as_bytes());
            if !diagnostics.is_empty() && !diagnostics.ends_with('\n') {
                let _ignored = stderr.write_all(b"\n");
            }
            if new_program {
                for missing in &unenforced {
                    let line = render::unenforced(missing);
                    let _ignored = writeln!(stderr, "python-cell: cell {number}: {line}");
                }
            }
            if let Some(note) = &shown.note {
                let _ignored = writeln!(stderr, "python-cell: cell {number}: {note}");
            }
            writeln!(stdout, "{}", one_line_of(&shown.cell))
        };
        // The reader is gone: no later result can be delivered either.
        if written.and_then(|()| stdout.flush()).is_err() {
            return render::EXIT_FAILED;
        }
    }
    exit
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn a_result_stays_on_its_line() {
        assert_eq!(one_line_of("a\nb\\n\r"), "a\\nb\\\\n\\r");
        let every = "a\u{b}\u{c}\u{1c}\u{1d}\u{1e}\u{85}\u{2028}\u{2029}\u{7f}\u{0}\tz";
        assert_eq!(
            one_line_of(every),
            "a\\u000B\\u000C\\u001C\\u001D\\u001E\\u0085\\u2028\\u2029\\u007F\\u0000\tz"
        );
        let json = json_line_of(&serde_json::json!({ "cell": every }));
        assert_eq!(json.lines().count(), 1);
        assert!(!json.contains(['\u{85}', '\u{2028}', '\u{2029}']), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["cell"], every);
    }

    #[test]
    fn a_json_line_is_a_snippet_and_its_inputs() {
        let cli = Cli::try_parse_from(["python-cell", "--warm", "--json"]).unwrap();
        assert_eq!(
            parse_line(&cli, r#"{"code": "x*2", "inputs": {"x": 21, "s": "a\nb"}}"#).unwrap(),
            request::encode(
                "x*2",
                // In the order of their names.
                &[("s".into(), "\"a\\nb\"".into()), ("x".into(), "21".into())]
            )
        );
        assert_eq!(
            parse_line(&cli, r#"{"code": "1"}"#).unwrap(),
            request::encode("1", &[])
        );
        for bad in ["1+1", "[]", r#"{"code": 1}"#, r#"{"code": "1", "x": 2}"#] {
            assert!(parse_line(&cli, bad).is_err(), "{bad}");
        }
    }
}
