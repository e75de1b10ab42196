//! Issue 24.9: a standard stream that is a pipe shared with other processes is relayed through a
//! pipe of the program's own, so reopening it through `/proc/self/fd` in the other direction
//! reaches `sandbox-check` alone: the program can neither read what another writer put into the
//! pipe its output goes to, nor put bytes into the pipe its input comes from for another reader.

mod common;

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

use common::*;

fn pipe() -> (std::fs::File, OwnedFd) {
    let (read, write) = nix::unistd::pipe().unwrap();
    (std::fs::File::from(read), write)
}

/// The program reopens its standard output for reading and says what it read in 1 s.
const READ_STDOUT: &str = r#"
import os, select, sys
fd = os.open("/proc/self/fd/1", os.O_RDONLY | os.O_NONBLOCK)
got = b""
ready, _, _ = select.select([fd], [], [], 1.0)
if ready:
    try:
        got = os.read(fd, 4096)
    except BlockingIOError:
        pass
sys.stderr.write("read=" + repr(got) + "\n")
"#;

#[test]
fn the_program_cannot_read_another_writers_bytes_from_the_pipe_its_output_goes_to() {
    let (mut consumer, shared) = pipe();
    // Another writer of the same pipe, writing while the program runs.
    let other = Command::new(PYTHON)
        .args([
            "-c",
            "import time; time.sleep(0.3); print('from-another-writer', flush=True)",
        ])
        .stdout(shared.try_clone().unwrap())
        .spawn()
        .unwrap();
    let output = sandbox_check()
        .args(["--read", "/usr", "--", PYTHON, "-I", "-c", READ_STDOUT])
        .stdin(Stdio::null())
        .stdout(shared)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let mut other = other;
    other.wait().unwrap();
    let mut seen = String::new();
    consumer.read_to_string(&mut seen).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(without_memory_note(&stderr), "read=b''\n");
    assert_eq!(seen, "from-another-writer\n");
}

/// The program reopens its standard input for writing and writes there.
const WRITE_STDIN: &str = r#"
import os, sys
fd = os.open("/proc/self/fd/0", os.O_WRONLY)
os.write(fd, b"forged-by-the-program\n")
sys.stderr.write("wrote\n")
"#;

#[test]
fn the_program_cannot_put_bytes_into_the_pipe_its_input_comes_from() {
    let (reader, shared) = pipe();
    let output = sandbox_check()
        .args(["--read", "/usr", "--", PYTHON, "-I", "-c", WRITE_STDIN])
        .stdin(Stdio::from(reader.try_clone().unwrap()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "wrote\n"
    );
    // Whoever else reads that pipe finds nothing the program wrote: close the last writer and
    // read to the end.
    drop(shared);
    let mut rest = String::new();
    let mut reader = reader;
    reader.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "");
}

#[test]
fn relayed_streams_carry_everything_both_ways_and_a_gone_reader_ends_the_program() {
    // Input through, output and error out, in full, with the exit status.
    let code = "import sys\ndata = sys.stdin.buffer.read()\nsys.stdout.buffer.write(data[::-1])\nsys.stderr.write(str(len(data)))\nsys.exit(3)";
    let mut child = sandbox_check()
        .args(["--read", "/usr", "--", PYTHON, "-I", "-c", code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut stdin = child.stdin.take().unwrap();
    let expected: Vec<u8> = input.iter().rev().copied().collect();
    let writer = std::thread::spawn(move || {
        std::io::Write::write_all(&mut stdin, &input).unwrap();
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(output.stdout, expected);
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "3000000"
    );

    // A reader that goes away: the program's next write fails, and it ends.
    let (consumer, shared) = pipe();
    drop(consumer);
    let output = sandbox_check()
        .args(["--read", "/usr", "--", PYTHON, "-I", "-c"])
        .arg("import sys, time\ntry:\n    while True: sys.stdout.write('x' * 65536); sys.stdout.flush()\nexcept BrokenPipeError:\n    sys.stderr.write('broken pipe')\n")
        .stdin(Stdio::null())
        .stdout(shared)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(
        without_memory_note(&String::from_utf8_lossy(&output.stderr)),
        "broken pipe"
    );
}

/// Issue 50.7: a closed standard output ends `sandbox-check` quietly (no panic): with the status
/// a shell shows for a program that SIGPIPE ended, 141, and nothing on standard error.
#[test]
fn a_closed_standard_output_ends_quietly() {
    for args in [
        &["--print-filters"][..],
        &["--print-policy", "--read", "/usr"],
    ] {
        let (read, write) = pipe();
        drop(read);
        let output = sandbox_check()
            .args(args)
            .stdin(Stdio::null())
            .stdout(write)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(141), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}
