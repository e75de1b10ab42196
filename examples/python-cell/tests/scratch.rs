//! A cell's scratch folder, through the real binary: `tempfile` works cold and warm, the folder
//! is gone after the cell, a cell that fills it sees `ENOSPC` and the next cell is unharmed, and
//! one workbook's runner cannot reach another's folder.
//!
//! Making the folder mounts a tmpfs in a namespace of its own: as root a mount namespace, as
//! anyone else a user namespace too, so every test runs as any user; where no user namespace may
//! be made the cell is refused by name (`#BLOCKED!`, nothing run), which one test checks.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;

use common::{bound_lines, cell_notes, python_cell, run, Run};

/// The snippet of the issue: a named temporary file, written and flushed.
const TEMPFILE: &str =
    "import tempfile; f = tempfile.NamedTemporaryFile(); f.write(b'x'); f.flush(); 1";

/// A cell that writes 2 MiB into an unnamed temporary file: past a 1 MiB folder.
const FILL: &str =
    "import tempfile; f = tempfile.TemporaryFile(); f.write(b'x' * (2 << 20)); f.flush()";

/// What a cell shows when the folder is full.
const ENOSPC: &str = "OSError: [Errno 28] No space left on device";

/// The scratch folders in the temporary folder, and the scratch mounts of this mount namespace.
fn leftovers() -> (Vec<PathBuf>, Vec<String>) {
    let folders = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("sandbox-scratch-")
        })
        .map(|entry| entry.path())
        .collect();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|line| line.contains("sandbox-scratch"))
        .map(str::to_owned)
        .collect();
    (folders, mounts)
}

/// Whether `folder` (one a cell reported as its own) is still in the temporary folder, and still
/// mounted. Tests run in parallel, so another test's folder may be there: only this one counts.
fn left(folder: &str) -> (bool, bool) {
    let (folders, mounts) = leftovers();
    (
        folders.iter().any(|f| f.to_str() == Some(folder)),
        mounts.iter().any(|m| m.contains(folder)),
    )
}

#[test]
fn a_cold_cell_may_use_tempfile_and_its_folder_is_gone_after() {
    let got = run(python_cell(&["--scratch", TEMPFILE]), None);
    assert_eq!(got.stdout, "1\n");
    assert_eq!(got.stderr, bound_lines(None));
    assert_eq!(got.code, Some(0));

    let got = run(
        python_cell(&[
            "--scratch",
            "import tempfile\nprint(tempfile.gettempdir())\n1",
        ]),
        None,
    );
    assert_eq!(got.stdout, "1\n");
    let folder = got.stderr.trim_end().to_owned();
    let temp = std::env::temp_dir().canonicalize().unwrap();
    assert!(
        folder.starts_with(&format!("{}/sandbox-scratch-", temp.display())),
        "{folder}"
    );
    assert_eq!(left(&folder), (false, false), "{folder} was left behind");
}

/// The variables a cell sees, with `LANG` set and nothing else of the parent's.
fn environment(args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.push("import os\nsorted(os.environ)");
    let mut command = python_cell(&all);
    command
        .env("LANG", "C.UTF-8")
        .env("HOME", "/root")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("TZ");
    run(command, None)
}

#[test]
fn by_default_a_cell_has_no_scratch_folder_and_with_one_only_tmpdir_is_new() {
    let got = environment(&[]);
    assert_eq!(got.stdout, "['LANG', 'PATH']\n");
    let got = run(python_cell(&[TEMPFILE]), None);
    // Refused by the sandbox, and said so: the temporary folders it tried are named.
    assert_eq!(got.stdout, "#BLOCKED!\n");
    let tmp = std::fs::canonicalize("/tmp").unwrap();
    assert!(
        got.note()
            .starts_with(&format!("python-cell: creating {}/", tmp.display()))
            && got.note().contains(
                " was refused (the cell failed: FileNotFoundError: [Errno 2] No usable temporary \
                 directory"
            ),
        "{}",
        got.note()
    );
    let got = environment(&["--scratch"]);
    // Not HOME: the driver needs none.
    assert_eq!(got.stdout, "['LANG', 'PATH', 'TMPDIR']\n");
}

#[test]
fn a_cold_cell_that_fills_its_folder_sees_enospc_and_the_next_cell_works() {
    let got = run(python_cell(&["--scratch=1M", FILL]), None);
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(got.note(), format!("python-cell: {ENOSPC}"));
    assert_eq!(got.code, Some(1));
    let got = run(python_cell(&["--scratch=1M", TEMPFILE]), None);
    assert_eq!(got.stdout, "1\n");
    assert_eq!(got.code, Some(0));
}

#[test]
fn a_warm_runner_may_use_tempfile_and_its_folder_is_gone_after() {
    let input = format!(
        "{TEMPFILE}\nimport tempfile; open(tempfile.gettempdir() + '/kept', 'w').write('a')\n\
         import tempfile; open(tempfile.gettempdir() + '/kept').read()\n\
         import tempfile; tempfile.gettempdir()\n"
    );
    let got = run(python_cell(&["--warm", "--scratch"]), Some(&input));
    let lines: Vec<&str> = got.stdout.lines().collect();
    // The cells of one runner share its folder, as they share its interpreter.
    assert_eq!(lines[..3], ["1", "1", "a"], "{}", got.stdout);
    assert_eq!(got.code, Some(0));
    let folder = lines[3];
    assert!(folder.contains("/sandbox-scratch-"), "{folder}");
    assert_eq!(left(folder), (false, false), "{folder} was left behind");
}

#[test]
fn a_warm_cell_that_fills_the_folder_sees_enospc_and_the_next_cell_works() {
    let input = format!("{FILL}\n{TEMPFILE}\n1+1\n");
    let got = run(python_cell(&["--warm", "--scratch=1M"]), Some(&input));
    assert_eq!(got.stdout, "#PYTHON!\n1\n2\n");
    assert_eq!(
        got.stderr.lines().last(),
        Some(format!("python-cell: cell 1: {ENOSPC}").as_str())
    );
    assert_eq!(got.code, Some(0));
}

#[test]
fn a_cell_cannot_reach_another_workbooks_scratch_folder() {
    // Workbook A's runner leaves a file in its folder, and stays up while workbook B runs.
    let mut a = python_cell(&["--warm", "--scratch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut a_in = a.stdin.take().unwrap();
    let mut a_out = BufReader::new(a.stdout.take().unwrap());
    writeln!(
        a_in,
        "import tempfile; d = tempfile.gettempdir(); open(d + '/secret', 'w').write('hunter2'); d"
    )
    .unwrap();
    let mut answer = String::new();
    a_out.read_line(&mut answer).unwrap();
    let a_folder = answer.trim_end().to_owned();
    assert!(a_folder.contains("/sandbox-scratch-"), "{a_folder}");

    let got = run(
        python_cell(&["--warm", "--scratch"]),
        Some(&format!(
            "open('{a_folder}/secret').read()\n\
             import os; os.listdir('{a_folder}')\n\
             open('{a_folder}/planted', 'w')\n\
             import tempfile; tempfile.gettempdir() != '{a_folder}'\n"
        )),
    );
    assert_eq!(got.stdout, "#PYTHON!\n#PYTHON!\n#PYTHON!\nTrue\n");
    let notes = cell_notes(&got.stderr);
    assert_eq!(
        notes,
        [
            // A's folder is mounted in A's namespace alone: B finds an empty folder there,
            // which it may not list either.
            format!(
                "python-cell: cell 1: FileNotFoundError: [Errno 2] No such file or directory: '{a_folder}/secret'"
            ),
            format!(
                "python-cell: cell 2: PermissionError: [Errno 13] Permission denied: '{a_folder}'"
            ),
            format!(
                "python-cell: cell 3: PermissionError: [Errno 13] Permission denied: '{a_folder}/planted'"
            ),
        ]
    );

    // A still has its file, and nothing was planted.
    writeln!(a_in, "import os; sorted(os.listdir('{a_folder}'))").unwrap();
    drop(a_in);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut a_out, &mut rest).unwrap();
    assert_eq!(a.wait().unwrap().code(), Some(0));
    assert_eq!(rest, "['secret']\n");
    assert_eq!(
        left(&a_folder),
        (false, false),
        "{a_folder} was left behind"
    );
}

/// A cell that writes 20 MiB into an unnamed temporary file, a megabyte at a time.
const TWENTY: &str = "import tempfile; f = tempfile.TemporaryFile(); \
                      [f.write(b'x' * (1 << 20)) for _ in range(20)]; f.flush()";

#[test]
fn an_ordinary_user_gets_a_folder_and_twenty_mib_into_sixteen_is_enospc() {
    // Root runs python-cell as `nobody`; anyone else runs it as themselves.
    let cell = |warm: bool| {
        let mut command = if warm {
            python_cell(&["--warm", "--scratch=16M"])
        } else {
            python_cell(&["--scratch=16M", TWENTY])
        };
        if nix::unistd::geteuid().is_root() {
            std::os::unix::process::CommandExt::uid(&mut command, 65534);
            std::os::unix::process::CommandExt::gid(&mut command, 65534);
        }
        command.env("TMPDIR", "/tmp");
        let input = format!("{TWENTY}\nimport os; os.getuid() != 0\n");
        run(command, warm.then_some(input.as_str()))
    };
    let got = cell(false);
    assert_eq!(got.stdout, "#PYTHON!\n");
    assert_eq!(got.note(), format!("python-cell: {ENOSPC}"));
    assert_eq!(got.code, Some(1));
    let got = cell(true);
    assert_eq!(got.stdout, "#PYTHON!\nTrue\n");
    assert_eq!(
        got.stderr.lines().last(),
        Some(format!("python-cell: cell 1: {ENOSPC}").as_str())
    );
}

#[test]
fn where_no_user_namespace_may_be_made_a_cell_is_refused_by_name_and_nothing_runs() {
    // In a user namespace whose limit on further ones is 0, with no capability left, neither a
    // mount namespace nor a user namespace can be made for the folder.
    let shown = |warm: bool| {
        let script = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"";
        let mut command = std::process::Command::new("/usr/bin/unshare");
        command
            .args([
                "--user",
                "--map-root-user",
                "--",
                "/bin/sh",
                "-c",
                script,
                "sh",
            ])
            .args([
                "/usr/bin/setpriv",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--",
            ])
            .arg(env!("CARGO_BIN_EXE_python-cell"));
        if warm {
            command.args(["--warm", "--scratch"]);
        } else {
            command.args(["--scratch", "print('ran')\n1"]);
        }
        command.env("TMPDIR", "/tmp");
        run(command, warm.then_some("print('ran'); 1\n"))
    };
    let reason = "the cell's scratch folder cannot be made: no scratch folder can be made here: \
                  without CAP_SYS_ADMIN it needs a user namespace, and none may be made \
                  (user.max_user_namespaces is 0, or its count is reached): raise \
                  user.max_user_namespaces, or give the application CAP_SYS_ADMIN: No space left \
                  on device (os error 28)";
    let got = shown(false);
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(got.stderr, format!("python-cell: {reason}\n"));
    assert_eq!(got.code, Some(3));
    let got = shown(true);
    assert_eq!(got.stdout, "#BLOCKED!\n");
    assert_eq!(got.stderr, format!("python-cell: cell 1: {reason}\n"));
    assert_eq!(got.code, Some(3));
}
