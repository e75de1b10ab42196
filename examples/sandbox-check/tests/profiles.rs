//! The profiles shipped in `examples/sandbox-check/profiles` (issue 30.2): each runs its
//! program's typical work through the real `sandbox-check --policy`, and none is wider than that
//! work needs: a file beside what it grants (`/etc/passwd`, `/etc/ssl/private`) stays refused.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::*;

fn profile(name: &str) -> String {
    format!("{}/profiles/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

/// `sandbox-check --policy PROFILE -- ARGS`, with `input` on standard input.
fn under(name: &str, args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = sandbox_check()
        .arg("--policy")
        .arg(profile(name))
        .arg("--")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    eprintln!(
        "{name}: {:?}\n{}\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn python3_sets_its_locale_and_reads_nothing_else_of_etc() {
    let code = "import locale, json, tempfile\nprint(locale.setlocale(locale.LC_ALL, 'C.UTF-8'))\ntry: open('/etc/passwd')\nexcept OSError as e: print(e.strerror)";
    let (code, out, _) = under("python3", &["/usr/bin/python3", "-I", "-c", code], "");
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "C.UTF-8\nPermission denied\n")
    );
}

/// An event loop needs its socket pair, which only the opt-in allows, and the opt-in allows
/// nothing that reaches past the pair.
#[test]
fn asyncio_runs_under_its_opt_in_and_nothing_past_the_pair_is_allowed() {
    let code = r#"
import asyncio, errno, socket
async def main():
    await asyncio.sleep(0)
    return "loop ran"
try:
    print(asyncio.run(main()))
except OSError as e:
    print("loop", errno.errorcode[e.errno])
def attempt(name, f):
    try:
        f()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
attempt("stream pair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("seqpacket pair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
attempt("datagram pair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
attempt("unix socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
a, b = socket.socketpair()
attempt("sendto past the pair", lambda: a.sendto(b"x", "/dev/log"))
attempt("connect the pair", lambda: a.connect("/dev/log"))
a.send(b"through")
print(b.recv(16).decode())
"#;
    let (status, out, _) = under(
        "python3-asyncio",
        &["/usr/bin/python3", "-I", "-c", code],
        "",
    );
    assert_eq!(
        (status, out.as_str()),
        (
            Some(0),
            "loop ran\nstream pair ok\nseqpacket pair ok\ndatagram pair EPERM\nunix socket EPERM\n\
             sendto past the pair EISCONN\nconnect the pair EPERM\nthrough\n"
        )
    );
    // Without the opt-in, the loop cannot start: its first socket pair is refused.
    let plain = "import asyncio, errno\ntry: asyncio.run(asyncio.sleep(0))\nexcept OSError as e: print(errno.errorcode[e.errno])";
    let (status, out, _) = under("python3", &["/usr/bin/python3", "-I", "-c", plain], "");
    assert_eq!((status, out.as_str()), (Some(0), "EPERM\n"));
}

/// A profile's `env` reaches the program, over the locale and time zone the launcher keeps, and
/// nothing of `sandbox-check`'s own environment comes with it.
#[test]
fn a_profiles_env_is_the_programs_and_nothing_else_of_the_callers_is() {
    let dir = std::env::temp_dir().join(format!("sandbox-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("env.toml");
    std::fs::write(
        &file,
        format!(
            "include = [\"{}\"]\nenv = {{ APP_MODE = \"test\", LANG = \"C.UTF-8\" }}\n",
            profile("python3")
        ),
    )
    .unwrap();
    let code = "import os; print(sorted(k for k in os.environ if k not in ('PATH', 'TZ', 'LC_ALL')), os.environ['APP_MODE'])";
    let out = sandbox_check()
        .env("CALLERS_SECRET", "x")
        .env("LANG", "en_US.UTF-8")
        .arg("--policy")
        .arg(&file)
        .args(["--", "/usr/bin/python3", "-I", "-c", code])
        .output()
        .unwrap();
    eprintln!("{out:?}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"['APP_MODE', 'LANG'] test\n");
    let printed = sandbox_check()
        .arg("--policy")
        .arg(&file)
        .arg("--print-policy")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&printed.stdout);
    assert!(
        printed.contains("[env]\nAPP_MODE = \"test\"\nLANG = \"C.UTF-8\"\n"),
        "{printed}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn node_has_its_tls_certificates_and_not_the_private_keys_beside_them() {
    if !std::path::Path::new("/usr/bin/node").exists() {
        let _ = writeln!(std::io::stderr(), "SKIPPED: /usr/bin/node is not installed");
        return;
    }
    let code = "const https = require('https'); const tls = require('tls'); console.log(tls.rootCertificates.length > 0, require('fs').readdirSync('/etc/ssl/certs').length > 0); try { require('fs').readdirSync('/etc/ssl/private') } catch (e) { console.log(e.code) }";
    let (code, out, _) = under("node", &["/usr/bin/node", "-e", code], "");
    assert_eq!((code, out.as_str()), (Some(0), "true true\nEACCES\n"));
}

#[test]
fn sqlite3_queries_the_database_it_is_given_and_opens_no_other() {
    let dir =
        std::path::Path::new("/var/tmp").join(format!("sandbox-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (given, beside) = (dir.join("given"), dir.join("beside"));
    std::fs::create_dir_all(&given).unwrap();
    std::fs::create_dir_all(&beside).unwrap();
    let (db, other) = (given.join("t.db"), beside.join("other.db"));
    for (file, sql) in [
        (&db, "create table t(x); insert into t values (1), (2);"),
        (&other, "create table u(y);"),
    ] {
        let made = Command::new("/usr/bin/sqlite3")
            .arg(file)
            .arg(sql)
            .status()
            .unwrap();
        assert!(made.success(), "{file:?}");
    }
    let before = (std::fs::read(&db).unwrap(), file_state(&db));
    let read = given.display().to_string();
    let query = |file: &std::path::Path, sql: &str| {
        let file = file.display().to_string();
        let args = [
            "--read",
            &read,
            "--",
            "/usr/bin/sqlite3",
            "-readonly",
            &file,
            sql,
        ];
        let mut command = sandbox_check();
        command.arg("--policy").arg(profile("sqlite3")).args(args);
        let out = command.output().unwrap();
        eprintln!("{out:?}");
        out
    };
    let out = query(&db, "select sum(x) from t;");
    assert_eq!(
        (out.status.code(), out.stdout.as_slice()),
        (Some(0), b"3\n".as_slice())
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("Error"));
    assert_eq!(
        (std::fs::read(&db).unwrap(), file_state(&db)),
        before,
        "the database changed"
    );
    let out = query(&other, "select 1;");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).ends_with(&format!(
            "Error: unable to open database \"{}\": unable to open database file\n",
            other.display()
        )),
        "{out:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn jq_filters_its_input_and_reads_no_file_of_etc() {
    let (code, out, _) = under(
        "jq",
        &["/usr/bin/jq", "-c", ".a | add"],
        "{\"a\": [1, 2]}\n",
    );
    assert_eq!((code, out.as_str()), (Some(0), "3\n"));
    let (code, _, err) = under("jq", &["/usr/bin/jq", "-R", ".", "/etc/passwd"], "");
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "jq: error: Could not open file /etc/passwd: Permission denied\n"
    );
}

#[test]
fn perl_loads_posix_and_reads_nothing_else_of_etc() {
    let code = "use POSIX; print POSIX::floor(2.5), \"\\n\"; open(my $f, '<', '/etc/passwd') or print \"$!\\n\";";
    let (code, out, _) = under("perl", &["/usr/bin/perl", "-e", code], "");
    assert_eq!((code, out.as_str()), (Some(0), "2\nPermission denied\n"));
}

#[test]
fn coreutils_sort_their_input_and_read_no_file_of_etc() {
    let (code, out, _) = under("coreutils", &["/usr/bin/sort"], "b\na\n");
    assert_eq!((code, out.as_str()), (Some(0), "a\nb\n"));
    let (code, _, err) = under("coreutils", &["/usr/bin/cat", "/etc/passwd"], "");
    assert_eq!(code, Some(1));
    assert_eq!(err, "/usr/bin/cat: /etc/passwd: Permission denied\n");
}

#[test]
fn print_policy_shows_the_profile_and_the_flags_and_a_bad_profile_is_named_at_its_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_sandbox-check"))
        .args(["--print-policy", "--policy"])
        .arg(profile("python3"))
        .args(["--tasks", "64", "--open-files", "none"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // Paths as the policy holds them: canonical, so /etc/localtime is the zone file it names.
    let zone = std::fs::canonicalize("/etc/localtime").unwrap();
    let expected = format!(
        r#"read = ["/usr", "/etc/ld.so.cache", "{}", "/etc/locale.alias"]"#,
        zone.display()
    );
    assert!(text.starts_with(&expected), "{text}");
    assert!(
        text.contains("\ntasks = 64\n") && text.contains("\nopen_files = \"none\"\n"),
        "{text}"
    );
    let dir = std::env::temp_dir().join(format!("sandbox-profiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "read = [\"/usr\"]\n[limits]\nmemroy = \"1G\"\n").unwrap();
    let out = sandbox_check()
        .arg("--policy")
        .arg(&bad)
        .args(["--", "/usr/bin/true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(97));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "sandbox: refused: {}:3:1: unknown field `memroy`",
            bad.display()
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
