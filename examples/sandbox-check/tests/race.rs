//! Another local user racing the launcher (issue 20, escape 1), through the real binary: a read
//! grant on a folder that sits in a folder another user can write must never become a grant on
//! whatever that user swaps in for it. The swapper runs as `nobody` and exchanges the granted
//! folder with a symbolic link to `/etc` in a tight loop (`renameat2(RENAME_EXCHANGE)`, so the
//! name always exists); 1,000 launches of `cat <folder>/shadow` must never print `/etc/shadow`.
//! Run by an ordinary user, who can neither start a process as another user nor read
//! `/etc/shadow` (so reading it would prove nothing), the swapper is that user and the link leads
//! to a folder of its own, outside the grant, whose `shadow` it could read but for the sandbox.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::{chown, symlink};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

/// The user the swapper runs as: not root, not the user who grants the folder.
const NOBODY: u32 = 65534;

const LAUNCHES: usize = 1000;
const IN_PARALLEL: usize = 4;

/// What the granted folder holds under the name the program reads.
const HARMLESS: &[u8] = b"harmless\n";

/// Exchanges `granted` and `link` in the folder `argv[1]` until the file `argv[2]` exists, then
/// prints how many exchanges it made. Exits 1 with the errno if an exchange fails.
const SWAPPER: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
folder = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
count = 0
while not os.path.exists(sys.argv[2]):
    for _ in range(1000):
        if libc.renameat2(folder, b"granted", folder, b"link", RENAME_EXCHANGE) != 0:
            print("renameat2:", os.strerror(ctypes.get_errno()), flush=True)
            sys.exit(1)
    count += 1000
print(count, flush=True)
"#;

/// One launch's outcome, in words; the contents of a file the program should not have read are
/// never shown.
fn outcome(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) if output.stdout == HARMLESS => "read the granted folder's own file".to_owned(),
        Some(0) => "WIN: read something else through the grant".to_owned(),
        Some(1) if stderr.ends_with(": Permission denied\n") => {
            "cat: Permission denied (the name led to the link's folder)".to_owned()
        }
        // The link is seen when sandbox-check resolves the --read path: a mistake of the
        // command line (64), before any launch.
        Some(64) if stderr.contains("is a symbolic link to the folder ") => {
            "refused: a symbolic link to a folder".to_owned()
        }
        Some(97) if stderr.contains("is not what the application resolved") => {
            "refused: not the object the application resolved".to_owned()
        }
        code => format!("other: exit {code:?}: {}", stderr.trim_end()),
    }
}

#[test]
fn a_swapper_of_another_user_never_widens_a_read_grant() {
    let scratch = Scratch::new("race");
    let shared = scratch.0.join("shared");
    std::fs::create_dir(&shared).unwrap();
    let root = nix::unistd::geteuid().is_root();
    let (swapper_user, target) = if root {
        chown(&shared, Some(NOBODY), Some(NOBODY)).unwrap();
        (Some(NOBODY), std::path::PathBuf::from("/etc"))
    } else {
        let decoy = scratch.0.join("decoy");
        std::fs::create_dir(&decoy).unwrap();
        std::fs::write(decoy.join("shadow"), b"not granted\n").unwrap();
        (None, decoy)
    };
    let granted = shared.join("granted");
    std::fs::create_dir(&granted).unwrap();
    std::fs::write(granted.join("shadow"), HARMLESS).unwrap();
    symlink(&target, shared.join("link")).unwrap();
    let stop = scratch.0.join("stop");
    let tmp = Scratch::new("race-tmp");

    let mut swapper = Command::new(PYTHON);
    swapper
        .args(["-I", "-c", SWAPPER])
        .arg(&shared)
        .arg(&stop)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if let Some(user) = swapper_user {
        swapper.uid(user).gid(user);
    }
    let swapper = swapper.spawn().unwrap();

    let launch = |tmp: &Path| {
        let mut command = sandbox_check_in(tmp);
        command
            .arg("--read")
            .arg("/usr")
            .arg("--read")
            .arg(&granted)
            .arg("--")
            .arg("/usr/bin/cat")
            .arg(granted.join("shadow"));
        outcome(&command.output().unwrap())
    };
    let counts: BTreeMap<String, usize> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..IN_PARALLEL)
            .map(|_| {
                scope.spawn(|| {
                    (0..LAUNCHES / IN_PARALLEL)
                        .map(|_| launch(&tmp.0))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut counts = BTreeMap::new();
        for worker in workers {
            for outcome in worker.join().unwrap() {
                *counts.entry(outcome).or_insert(0) += 1;
            }
        }
        counts
    });
    std::fs::write(&stop, b"").unwrap();
    let swapped = swapper.wait_with_output().unwrap();
    let swaps = String::from_utf8_lossy(&swapped.stdout).trim().to_owned();

    let who = swapper_user.map_or_else(|| "this user".to_owned(), |uid| format!("uid {uid}"));
    println!(
        "{LAUNCHES} launches against a swapper running as {who}, linking to {} ({swaps} exchanges):",
        target.display()
    );
    for (outcome, count) in &counts {
        println!("  {count:5}  {outcome}");
    }
    assert_eq!(
        swapped.status.code(),
        Some(0),
        "the swapper failed: {swaps}"
    );
    let wins = counts
        .iter()
        .filter(|(outcome, _)| outcome.starts_with("WIN"))
        .map(|(_, count)| count)
        .sum::<usize>();
    assert_eq!(wins, 0, "{counts:#?}");
    let others: Vec<_> = counts.keys().filter(|o| o.starts_with("other")).collect();
    assert!(others.is_empty(), "{others:#?}");
    // The race was run: some launches met the link, some the folder.
    let met_link = counts
        .iter()
        .filter(|(outcome, _)| !outcome.starts_with("read the granted"))
        .map(|(_, count)| count)
        .sum::<usize>();
    assert!(met_link > 0, "no launch met the link: {counts:#?}");
    assert_eq!(counts.values().sum::<usize>(), LAUNCHES);
    assert_eq!(entries(&tmp.0), Vec::<String>::new(), "a canary was left");
}
