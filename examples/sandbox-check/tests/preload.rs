//! A system-wide preload list (`/etc/ld.so.preload`, issue 55.3) through the real binary: the
//! loader cannot read it inside the sandbox unless the policy grants it, so its libraries do not
//! reach the program, and the report says so (`system_preload`) where that applies.
//!
//! The machine's own `/etc` is never touched, since tests running beside this one would see the
//! list: each case runs `sandbox-check` in a mount namespace of its own (`unshare`, with a user
//! namespace when not root) whose `/etc` is a folder of links to the real one's entries, plus the
//! case's list.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

/// Makes `$1/etc` a folder of links to the entries of `/etc` (reached through a bind mount at
/// `$1/orig`, since `/etc` itself is then covered), with the list `$2` as its `ld.so.preload`
/// (none for `-`), mounts it over `/etc` and executes the rest. The link to a list the machine may
/// have is removed first, so that the case's list is never written through it.
const IN_A_NAMESPACE: &str = r#"
set -e
work=$1; list=$2; shift 2
mkdir "$work/orig" "$work/etc"
mount --bind /etc "$work/orig"
for entry in "$work"/orig/* "$work"/orig/.[!.]*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    ln -s "$entry" "$work/etc/${entry##*/}"
done
rm -f "$work/etc/ld.so.preload"
if [ "$list" != - ]; then printf '%s' "$list" > "$work/etc/ld.so.preload"; fi
mount --bind "$work/etc" /etc
exec "$@"
"#;

/// A library the program does not load by itself: the C maths library, where this system keeps
/// it.
fn a_library() -> Option<PathBuf> {
    let found = std::fs::read_dir("/usr/lib")
        .ok()?
        .flatten()
        .map(|entry| entry.path().join("libm.so.6"))
        .chain([PathBuf::from("/usr/lib/libm.so.6")])
        .find(|path| path.is_file())?;
    std::fs::canonicalize(found).ok()
}

/// How a case went: whether the library was mapped into the program, and the report's
/// `system_preload` member.
#[derive(Debug, PartialEq)]
struct Seen {
    mapped: bool,
    note: Option<serde_json::Value>,
}

/// Runs `cat /proc/self/maps` under `sandbox-check --json --read /usr --read /proc [extra]`
/// with `list` (`None`: no list) as `/etc/ld.so.preload`; `None` where this user can make no mount
/// namespace.
fn case(list: Option<&str>, extra: &[&str], library: &Path) -> Option<Seen> {
    let work = Scratch::new("preload");
    // Root makes the namespace as itself; an ordinary user needs a user namespace for it.
    let unshare: &[&str] = if nix::unistd::geteuid().is_root() {
        &["-m"]
    } else {
        &["-r", "-m"]
    };
    let mut command = Command::new("/usr/bin/unshare");
    command
        .args(unshare)
        .args(["/bin/sh", "-c", IN_A_NAMESPACE, "sh"])
        .arg(&work.0)
        .arg(list.unwrap_or("-"))
        .arg(env!("CARGO_BIN_EXE_sandbox-check"))
        .args(["--json", "--read", "/usr", "--read", "/proc"])
        .args(extra)
        .args(["--", "/usr/bin/cat", "/proc/self/maps"])
        .env("TMPDIR", "/tmp")
        .stdin(Stdio::null());
    default_signals(&mut command);
    let output = command.output().expect("unshare starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.starts_with("unshare: ") {
        skipped(&format!(
            "no mount namespace for this user to put a preload list in: {}",
            stderr.trim_end()
        ));
        return None;
    }
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: serde_json::Value = serde_json::from_str(
        stderr
            .lines()
            .last()
            .unwrap_or_else(|| panic!("no report: {output:?}")),
    )
    .unwrap_or_else(|e| panic!("{e}: {output:?}"));
    assert_eq!(report["outcome"], "exited", "{report}");
    let maps = String::from_utf8_lossy(&output.stdout);
    assert!(maps.contains("libc.so.6"), "not the program's maps: {maps}");
    Some(Seen {
        mapped: maps.contains(&*library.to_string_lossy()),
        note: report.get("system_preload").cloned(),
    })
}

#[test]
fn a_system_wide_preload_list_reaches_a_confined_program_only_if_the_policy_grants_it() {
    let Some(library) = a_library() else {
        skipped("no libm.so.6 in /usr/lib/* to preload");
        return;
    };
    let named = format!("{}\n", library.display());
    let Some(ungranted) = case(Some(&named), &[], &library) else {
        return;
    };
    assert_eq!(
        ungranted,
        Seen {
            mapped: false,
            note: Some(serde_json::json!({
                "path": "/etc/ld.so.preload",
                "reason": sandbox_core::preload::SystemPreload::REASON,
            })),
        }
    );
    // Granted, the loader reads the list and loads what it names: the refusal was the sandbox's.
    let granted = case(Some(&named), &["--read", "/etc/ld.so.preload"], &library).unwrap();
    assert_eq!(
        granted,
        Seen {
            mapped: true,
            note: None
        }
    );
    // An empty list, or one of comments only, names nothing to miss; no list, neither.
    for list in [Some(""), Some("# nothing\n"), None] {
        let seen = case(list, &[], &library).unwrap();
        assert_eq!(
            seen,
            Seen {
                mapped: false,
                note: None
            },
            "{list:?}"
        );
    }
}
