//! Real programs keep working confined: the allow-lists and refusals must not break what an
//! ordinary program does (the C library's start, threads, terminals it only asks about,
//! compression, a JavaScript runtime). Each runs through the real binary with `--read /usr`
//! (and what it documents it needs), and its output is compared with what the program computes.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::process::Stdio;

use common::*;

/// Runs `program args` confined with `--read /usr` and the extra read paths, feeding `input`,
/// and returns its standard output; fails the test on any other exit than 0.
fn confined(extra: &[&str], program: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut command = sandbox_check();
    command.args(["--read", "/usr"]);
    for path in extra {
        command.args(["--read", path]);
    }
    command
        .arg("--")
        .arg(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn python_with_its_standard_library_threads_and_sqlite_in_memory() {
    let code = r#"
import bz2, collections, csv, datetime, decimal, fractions, functools, hashlib, io, itertools
import json, lzma, math, random, re, sqlite3, statistics, struct, textwrap, threading
import unicodedata, zlib, concurrent.futures
results = []
def work(n):
    results.append(sum(range(n)))
threads = [threading.Thread(target=work, args=(n,)) for n in (10, 100, 1000)]
for t in threads: t.start()
for t in threads: t.join()
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    squares = list(pool.map(lambda x: x * x, range(5)))
db = sqlite3.connect(":memory:")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(i,) for i in range(10)])
total = db.execute("select sum(x) from t").fetchone()[0]
data = b"spreadsheet" * 100
assert lzma.decompress(lzma.compress(data)) == data
assert bz2.decompress(bz2.compress(data)) == data
assert zlib.decompress(zlib.compress(data)) == data
print(sorted(results), squares, total, hashlib.sha256(b"x").hexdigest()[:8],
      json.dumps({"a": decimal.Decimal("1.5").as_integer_ratio()}), statistics.mean([1, 2, 3]))
"#;
    let out = text(confined(&[], PYTHON, &["-I", "-c", code], b""));
    assert_eq!(
        out,
        "[45, 4950, 499500] [0, 1, 4, 9, 16] 45 2d711642 {\"a\": [3, 2]} 2\n"
    );
}

#[test]
fn text_tools() {
    assert_eq!(
        text(confined(
            &[],
            "/usr/bin/perl",
            &["-ne", "print uc"],
            b"abc\n"
        )),
        "ABC\n"
    );
    assert_eq!(
        text(confined(
            &[],
            "/usr/bin/awk",
            &["{ s += $1 } END { print s }"],
            b"1\n2\n3\n"
        )),
        "6\n"
    );
    assert_eq!(
        text(confined(&[], "/usr/bin/sed", &["s/a/b/g"], b"banana\n")),
        "bbnbnb\n"
    );
    assert_eq!(
        text(confined(&[], "/usr/bin/sort", &["-n"], b"10\n9\n100\n")),
        "9\n10\n100\n"
    );
    assert_eq!(
        text(confined(
            &[],
            "/usr/bin/jq",
            &["-c", ".a + 1"],
            b"{\"a\": 41}"
        )),
        "42\n"
    );
    assert_eq!(
        text(confined(&[], "/usr/bin/bc", &["-q"], b"2^64\n")),
        "18446744073709551616\n"
    );
}

#[test]
fn compressors_round_trip() {
    let data = b"a confined program compresses what it is given\n".repeat(50);
    for (program, compress, decompress) in [
        ("/usr/bin/gzip", &["-c"][..], &["-dc"][..]),
        ("/usr/bin/xz", &["-c"], &["-dc"]),
        ("/usr/bin/zstd", &["-qc"], &["-qdc"]),
    ] {
        let packed = confined(&[], program, compress, &data);
        assert_ne!(packed, data, "{program}");
        assert_eq!(
            confined(&[], program, decompress, &packed),
            data,
            "{program}"
        );
    }
}

#[test]
fn tar_lists_what_it_packed() {
    let scratch = Scratch::new("compat-tar");
    std::fs::write(scratch.0.join("one"), b"1").unwrap();
    std::fs::write(scratch.0.join("two"), b"22").unwrap();
    let dir = scratch.0.to_str().unwrap();
    let archive = confined(
        &[dir],
        "/usr/bin/tar",
        &["-cf", "-", "-C", dir, "one", "two"],
        b"",
    );
    let listing = text(confined(&[], "/usr/bin/tar", &["-tvf", "-"], &archive));
    let names: Vec<&str> = listing
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(names, ["one", "two"], "{listing}");
}

/// Node reads OpenSSL's configuration, which Debian links from `/usr/lib/ssl` into `/etc/ssl`,
/// so it needs that folder too; with it, it starts workers and hashes.
#[test]
fn node_with_workers() {
    let code = r#"
const { Worker } = require("worker_threads");
const hash = require("crypto").createHash("sha256").update("x").digest("hex").slice(0, 8);
const w = new Worker("require('worker_threads').parentPort.postMessage(6 * 7)", { eval: true });
w.on("message", (m) => console.log(hash, m));
"#;
    let out = text(confined(&["/etc/ssl"], "/usr/bin/node", &["-e", code], b""));
    assert_eq!(out, "2d711642 42\n");
}
