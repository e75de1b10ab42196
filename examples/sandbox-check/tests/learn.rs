//! `sandbox-check --explain --suggest FILE` (issue 30.4): a profile learnt from a run, through the
//! real binary. Refused, learnt, run again under `--policy FILE`: the program runs, and what it
//! did not ask for stays refused.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;

/// A folder of this test's own, outside the temporary folder (which the learnt profile keeps
/// clear), with `etc`- and `opt`-style folders of files in it.
struct Tree(PathBuf);

impl Tree {
    fn new(name: &str) -> Self {
        let root =
            Path::new("/var/tmp").join(format!("sandbox-learn-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (file, text) in [
            ("etc/app.conf", "conf\n"),
            ("opt/app/share/a.txt", "a\n"),
            ("opt/app/share/b.txt", "b\n"),
            ("opt/app/share/c.txt", "c\n"),
            ("opt/other/secret.txt", "secret\n"),
            ("tmp/x", "x\n"),
            ("tmp/y", "y\n"),
            ("home/.netrc", "netrc\n"),
            ("home/notes", "notes\n"),
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        // Readable by an ordinary user too: the tests run as whoever runs them.
        Self(root.canonicalize().unwrap())
    }

    fn path(&self, file: &str) -> String {
        self.0.join(file).display().to_string()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn check(tree: &Tree, args: &[&str]) -> Output {
    check_as(None, tree, args)
}

/// [`check`], as `user` (`None`: this one).
fn check_as(user: Option<u32>, tree: &Tree, args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut command = sandbox_check();
    if let Some(id) = user {
        command.uid(id).gid(id);
    }
    let out = command
        .env("TMPDIR", tree.path("tmp"))
        .env("HOME", tree.path("home"))
        .args(args)
        .output()
        .unwrap();
    eprintln!("{args:?}: {out:?}");
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn refused_then_learnt_then_run_and_nothing_beside_it_is_granted() {
    for user in users() {
        learn_loop(user);
    }
}

fn learn_loop(user: Option<u32>) {
    let tree = Tree::new(&format!("loop-{}", user.unwrap_or(0)));
    // A folder anyone may write the learnt file into, for a run as another user.
    let out_dir = tree.0.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::set_permissions(
        &out_dir,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    std::fs::set_permissions(
        tree.0.join("tmp"),
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let learnt = tree.path("out/learnt.toml");
    let check = |tree: &Tree, args: &[&str]| check_as(user, tree, args);
    let files = [
        tree.path("etc/app.conf"),
        tree.path("opt/app/share/a.txt"),
        tree.path("opt/app/share/b.txt"),
    ];
    let mut cat = vec!["/usr/bin/cat"];
    cat.extend(files.iter().map(String::as_str));
    // Refused: cat says so for each file and goes on, as it would for any unreadable file.
    let mut first = vec!["--explain", "--suggest", &learnt, "--read", "/usr", "--"];
    first.extend(&cat);
    let out = check(&tree, &first);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    let stderr = text(&out.stderr);
    for file in &files {
        assert!(stderr.contains(&format!("/usr/bin/cat: {file}: Permission denied\n")));
    }
    let profile = std::fs::read_to_string(&learnt).unwrap();
    // The file read alone as itself, the folder two of whose files were read as the folder; the
    // routine files the C library looked for are not granted; /usr came from the flag.
    let read = format!(
        "read = [\"/usr\", \"{}\", \"{}\"]\n",
        tree.path("etc/app.conf"),
        tree.path("opt/app/share")
    );
    assert!(profile.contains(&read), "{profile}");
    assert!(!profile.contains("\"/etc/ld.so.cache\""), "{profile}");
    assert!(stderr.contains(&format!(
        "explain: wrote {learnt} (2 learnt); run it with: sandbox-check --policy {learnt} -- ...\n"
    )));
    // Run again under the learnt profile: everything it read is there.
    let mut again = vec!["--policy", &learnt, "--"];
    again.extend(&cat);
    let out = check(&tree, &again);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "conf\na\nb\n".to_owned())
    );
    assert_eq!(without_memory_note_as(&text(&out.stderr), user), "");
    // And nothing beside it: a file of the folder next door.
    let secret = tree.path("opt/other/secret.txt");
    let out = check(&tree, &["--policy", &learnt, "--", "/usr/bin/cat", &secret]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        without_memory_note_as(&text(&out.stderr), user),
        format!("/usr/bin/cat: {secret}: Permission denied\n")
    );
}

#[test]
fn a_program_that_stops_at_its_first_refusal_is_learnt_in_rounds() {
    let tree = Tree::new("rounds");
    let learnt = tree.path("learnt.toml");
    let code = "import sys\nfor f in sys.argv[1:]:\n    print(open(f).read(), end='')";
    let (conf, a) = (tree.path("etc/app.conf"), tree.path("opt/app/share/a.txt"));
    let program = ["/usr/bin/python3", "-I", "-c", code, &conf, &a];
    let start = ["--explain", "--suggest", &learnt, "--read", "/usr", "--"];
    let again = ["--explain", "--suggest", &learnt, "--policy", &learnt, "--"];
    let mut rounds = 0;
    let mut args: Vec<&str> = start.iter().chain(&program).copied().collect();
    loop {
        rounds += 1;
        let out = check(&tree, &args);
        if out.status.code() == Some(0) {
            assert_eq!(text(&out.stdout), "conf\na\n");
            break;
        }
        assert_eq!(out.status.code(), Some(1), "round {rounds}");
        assert!(
            text(&out.stderr).contains("PermissionError"),
            "round {rounds}"
        );
        assert!(rounds < 3, "not learnt in two rounds");
        args = again.iter().chain(&program).copied().collect();
    }
    // One refusal a round: the first file, then the second.
    assert_eq!(rounds, 3);
    let profile = std::fs::read_to_string(&learnt).unwrap();
    assert!(
        profile.contains(&format!("\"{conf}\", \"{a}\"]")),
        "{profile}"
    );
}

#[test]
fn the_temporary_folder_and_the_home_are_never_suggested_whole() {
    let tree = Tree::new("clear");
    let learnt = tree.path("learnt.toml");
    // Two files of the temporary folder (where the canary lies) and two of the home, and the
    // home listed: their folders would cover both as a whole.
    let code = "import os, sys\nfor f in sys.argv[1:-1]:\n    try: open(f).read()\n    except OSError: pass\ntry: os.listdir(sys.argv[-1])\nexcept OSError: pass";
    let (x, y) = (tree.path("tmp/x"), tree.path("tmp/y"));
    let (netrc, notes) = (tree.path("home/.netrc"), tree.path("home/notes"));
    let home = tree.path("home");
    let out = sandbox_check()
        .env("TMPDIR", tree.path("tmp"))
        .env("HOME", &home)
        .args(["--explain", "--suggest", &learnt, "--read", "/usr", "--"])
        .args([
            "/usr/bin/python3",
            "-I",
            "-c",
            code,
            &x,
            &y,
            &netrc,
            &notes,
            &home,
        ])
        .output()
        .unwrap();
    eprintln!("{out:?}");
    let profile = std::fs::read_to_string(&learnt).unwrap();
    let tmp = tree.path("tmp");
    assert!(!profile.contains(&format!("\"{tmp}\"")), "{profile}");
    assert!(!profile.contains(&format!("\"{home}\"")), "{profile}");
    for file in [&x, &y, &notes] {
        assert!(
            profile.contains(&format!("\"{file}\"")),
            "{file}: {profile}"
        );
    }
    // .netrc holds passwords: named, never suggested.
    assert!(!profile.contains(&format!("\"{netrc}\"")), "{profile}");
    assert!(
        profile.contains(&format!("# Not suggested: {netrc}: it looks like a secret")),
        "{profile}"
    );
    assert!(
        profile.contains(&format!(
            "# Not suggested: {home}: the program only listed it, and a read grant of a folder \
             gives every file beneath"
        )),
        "{profile}"
    );
    same_suggestion(&out, &profile);
}

/// The paths `read = [...]` or `exec = [...]` of a profile lists.
fn listed(profile: &str, key: &str) -> Vec<String> {
    profile
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = [")))
        .map(|list| {
            list.trim_end_matches(']')
                .split(", ")
                .filter(|p| !p.is_empty())
                .map(|p| p.trim_matches('"').to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// What the report printed as grants, and what it said it would not suggest.
fn printed(out: &Output) -> (Vec<String>, Vec<String>) {
    let stderr = text(&out.stderr);
    let allowed = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("explain: a policy can allow: "))
        .map(str::to_owned)
        .collect();
    let withheld = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("explain: not suggested: "))
        .map(str::to_owned)
        .collect();
    (allowed, withheld)
}

/// The printed suggestion and the learnt profile say the same thing (issue 45.8): the grants
/// printed are the ones the profile adds to `/usr`, and each path the report would not suggest
/// is named in the profile's comments with the same reason.
fn same_suggestion(out: &Output, profile: &str) {
    let (allowed, withheld) = printed(out);
    let mut learnt: Vec<String> = listed(profile, "read")
        .into_iter()
        .filter(|p| p != "/usr")
        .map(|p| format!("--read {p}"))
        .collect();
    learnt.extend(
        listed(profile, "exec")
            .into_iter()
            .map(|p| format!("--exec {p}")),
    );
    let mut allowed = allowed;
    allowed.sort();
    learnt.sort();
    assert_eq!(allowed, learnt, "{profile}");
    for line in withheld {
        assert!(
            profile.contains(&format!("# Not suggested: {line}\n")),
            "{line}: {profile}"
        );
    }
}

/// Issue 45.8: one listing of a folder is a listing, not a read of every file beneath. The
/// program lists /etc, /proc and a folder of its own, then reads one file of that folder; the
/// file is suggested, no folder is, and each is named as not suggested. On main the profile
/// held `read = ["/usr", "/etc", "/proc", ...]`.
#[test]
fn a_listing_is_never_learnt_as_reading_the_folder() {
    for user in users() {
        let tree = Tree::new(&format!("listing-{}", user.unwrap_or(0)));
        let learnt = tree.path("out/learnt.toml");
        writable_out(&tree);
        let share = tree.path("opt/app/share");
        let a = tree.path("opt/app/share/a.txt");
        let code = "import os, sys\nfor d in sys.argv[1:4]:\n    try: os.listdir(d)\n    \
                    except OSError: pass\nopen(sys.argv[4]).read()";
        let out = check_as(
            user,
            &tree,
            &[
                "--explain",
                "--suggest",
                &learnt,
                "--read",
                "/usr",
                "--",
                PYTHON,
                "-I",
                "-c",
                code,
                "/etc",
                "/proc",
                &share,
                &a,
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let profile = std::fs::read_to_string(&learnt).unwrap();
        for folder in ["/etc", "/proc", share.as_str()] {
            assert!(!profile.contains(&format!("\"{folder}\"")), "{profile}");
            assert!(
                text(&out.stderr).contains(&format!(
                    "explain: not suggested: {folder}: the program only listed it, and a read \
                     grant of a folder gives every file beneath; add it yourself if the program \
                     must list it\n"
                )),
                "{out:?}"
            );
        }
        assert_eq!(listed(&profile, "read"), ["/usr", a.as_str()], "{profile}");
        same_suggestion(&out, &profile);
    }
}

/// Issue 45.8: an `execve` of a folder, or of a file no one may execute, fails with `EACCES`
/// unconfined too: it is not the sandbox's refusal, and nothing is learnt from it. On main the
/// report said "refused execute of /usr/bin" and the profile held `exec = ["/usr/bin"]`.
#[test]
fn an_exec_that_fails_unconfined_too_is_not_blamed_on_the_sandbox() {
    for user in users() {
        let tree = Tree::new(&format!("exec-{}", user.unwrap_or(0)));
        let learnt = tree.path("out/learnt.toml");
        writable_out(&tree);
        let plain = tree.path("etc/app.conf");
        let code = "import os, sys\nfor p in sys.argv[1:]:\n    try: os.execv(p, [p])\n    \
                    except OSError as e: print(p, e.errno)";
        let args = [PYTHON, "-I", "-S", "-c", code, "/usr/bin", "/etc", &plain];
        // Unconfined, each is refused the same way.
        let bare = std::process::Command::new(PYTHON)
            .args(&args[1..])
            .output()
            .unwrap();
        let expected = format!("/usr/bin 13\n/etc 13\n{plain} 13\n");
        if user.is_none() {
            assert_eq!(text(&bare.stdout), expected);
        }
        let mut flags = vec!["--explain", "--suggest", &learnt, "--read", "/usr", "--"];
        flags.extend(args);
        let out = check_as(user, &tree, &flags);
        assert_eq!(
            (out.status.code(), text(&out.stdout)),
            (Some(0), expected),
            "{out:?}"
        );
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("refused execute"), "{stderr}");
        assert!(!stderr.contains("--exec"), "{stderr}");
        let profile = std::fs::read_to_string(&learnt).unwrap();
        assert_eq!(listed(&profile, "exec"), Vec::<String>::new(), "{profile}");
        same_suggestion(&out, &profile);
    }
}

/// Issue 45.8: a secret the program reached for is named, never suggested, printed or learnt.
/// On main `--explain` suggested `--read ~/.ssh` for the key it had just caught.
#[test]
fn a_secret_is_named_and_never_suggested() {
    let tree = Tree::new("secret");
    let learnt = tree.path("learnt.toml");
    let ssh = tree.0.join("home/.ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    for key in ["id_ed25519", "id_rsa"] {
        std::fs::write(ssh.join(key), "key\n").unwrap();
    }
    let env = tree.path("opt/app/.env");
    std::fs::write(&env, "TOKEN=x\n").unwrap();
    let keys = [
        tree.path("home/.ssh/id_ed25519"),
        tree.path("home/.ssh/id_rsa"),
    ];
    let code = "import sys\nfor f in sys.argv[1:]:\n    try: open(f).read()\n    \
                except OSError: pass\nsys.exit(1)";
    let out = check(
        &tree,
        &[
            "--explain",
            "--suggest",
            &learnt,
            "--read",
            "/usr",
            "--",
            PYTHON,
            "-I",
            "-c",
            code,
            &keys[0],
            &keys[1],
            &env,
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = text(&out.stderr);
    for secret in [&keys[0], &keys[1], &env] {
        assert!(
            stderr.contains(&format!(
                "explain: not suggested: {secret}: it looks like a secret (keys, credentials, a \
                 keyring, an .env file); add it yourself if this program must read it\n"
            )),
            "{stderr}"
        );
    }
    assert!(!stderr.contains("--read /var"), "{stderr}");
    assert!(!stderr.contains("explain: suggested:"), "{stderr}");
    let profile = std::fs::read_to_string(&learnt).unwrap();
    assert_eq!(listed(&profile, "read"), ["/usr"], "{profile}");
    same_suggestion(&out, &profile);
}

/// `out/` of `tree`, writable by anyone, for a learnt file written as another user.
fn writable_out(tree: &Tree) {
    use std::os::unix::fs::PermissionsExt;
    let out = tree.0.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(tree.0.join("tmp"), std::fs::Permissions::from_mode(0o1777)).unwrap();
}

/// What the `--policy` profile set beyond paths (its variables, its opt-ins) is in the learnt
/// profile too, so that running under it runs the same program the same way.
#[test]
fn the_learnt_profile_keeps_the_profiles_variables_and_opt_ins() {
    let tree = Tree::new("keeps");
    let start = tree.path("start.toml");
    std::fs::write(
        &start,
        "read = [\"/usr\"]\nenv = { APP_MODE = \"learn\" }\n[allow]\nlocal_socket_pairs = true\n",
    )
    .unwrap();
    let learnt = tree.path("learnt.toml");
    let conf = tree.path("etc/app.conf");
    let out = check(
        &tree,
        &[
            "--explain",
            "--suggest",
            &learnt,
            "--policy",
            &start,
            "--",
            "/usr/bin/cat",
            &conf,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let profile = std::fs::read_to_string(&learnt).unwrap();
    assert!(
        profile.contains("[env]\nAPP_MODE = \"learn\"\n"),
        "{profile}"
    );
    assert!(
        profile.contains("[allow]\nlocal_socket_pairs = true\n"),
        "{profile}"
    );
    let code = "import os, socket; socket.socketpair(); print(os.environ['APP_MODE'], open(os.sys.argv[1]).read(), end='')";
    let out = check(
        &tree,
        &[
            "--policy",
            &learnt,
            "--",
            "/usr/bin/python3",
            "-I",
            "-c",
            code,
            &conf,
        ],
    );
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "learn conf\n".to_owned())
    );
}
