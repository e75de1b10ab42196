//! The shipped profiles' typical work, run in the x86_64 guests (issue 30's acceptance): each
//! program under `sandbox-check --policy` with its profile, and unconfined as its control.
//!
//! The guest has no distribution, so the host's own programs go in, with exactly the files
//! their work opens: each work is traced here with `strace` (the program alone, and the whole
//! `sandbox-check` launch with the guest's static build), and every path a call reached is
//! packed at its own path, symbolic links as links, with the ELF interpreter of every program
//! executed. A folder the work lists is packed with its entries where it is named in `listed`;
//! anywhere else a folder is packed empty, so nothing the work did not open rides along (the
//! node work's `/etc/ssl/private` is there to be refused, without its keys). The aarch64 guest
//! runs none of this: the host's programs are x86_64 ones.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use super::cpio::{failed, Cpio};
use crate::cmd::Failed;

/// Where the works' databases sit in the guest; `@DATA@` in a work's words stands for it (and
/// for a folder under `target/` on the host, where the work is traced).
const GUEST_DATA: &str = "/data";

/// One program's work under its profile.
pub(super) struct Work {
    /// The confined step's name; `control` is the same work unconfined.
    pub id: &'static str,
    pub control_id: &'static str,
    profile: &'static str,
    /// Flags added to the profile's policy.
    flags: &'static [&'static str],
    argv: &'static [&'static str],
    /// Folders the work lists, packed with their entries.
    listed: &'static [&'static str],
    /// Exit status and lines, confined and unconfined.
    pub confined: (i32, &'static [&'static str]),
    pub control: (i32, &'static [&'static str]),
}

const PYTHON: &str = "import locale, json, tempfile\nprint(locale.setlocale(locale.LC_ALL, 'C.UTF-8'))\ntry: open('/etc/passwd'); print('read')\nexcept OSError as e: print(e.strerror)";
const PERL: &str = "use POSIX; print POSIX::floor(2.5), \"\\n\"; if (open(my $f, '<', '/etc/passwd')) { print \"read\\n\" } else { print \"$!\\n\" }";
const NODE: &str = "const https = require('https'); const tls = require('tls'); console.log(tls.rootCertificates.length > 0, require('fs').readdirSync('/etc/ssl/certs').length > 0); try { require('fs').readdirSync('/etc/ssl/private'); console.log('listed') } catch (e) { console.log(e.code) }";

/// The works, the same as `examples/sandbox-check/tests/profiles.rs` runs on the host.
pub(super) const WORKS: &[Work] = &[
    Work {
        id: "profile-python3",
        control_id: "profile-python3-control",
        profile: "python3",
        flags: &[],
        argv: &["/usr/bin/python3", "-I", "-c", PYTHON],
        listed: &[],
        confined: (0, &["C.UTF-8", "Permission denied"]),
        control: (0, &["C.UTF-8", "read"]),
    },
    Work {
        id: "profile-perl",
        control_id: "profile-perl-control",
        profile: "perl",
        flags: &[],
        argv: &["/usr/bin/perl", "-e", PERL],
        listed: &[],
        confined: (0, &["2", "Permission denied"]),
        control: (0, &["2", "read"]),
    },
    Work {
        id: "profile-node",
        control_id: "profile-node-control",
        profile: "node",
        flags: &[],
        argv: &["/usr/bin/node", "-e", NODE],
        listed: &["/etc/ssl/certs"],
        confined: (0, &["true true", "EACCES"]),
        control: (0, &["true true", "listed"]),
    },
    Work {
        id: "profile-sqlite3",
        control_id: "profile-sqlite3-control",
        profile: "sqlite3",
        flags: &["--read", "@DATA@/given"],
        argv: &[
            "/usr/bin/sqlite3",
            "-readonly",
            "@DATA@/given/t.db",
            "select sum(x) from t;",
        ],
        listed: &[],
        // Without `HOME` (the launcher passes none) sqlite3 looks the home folder up in
        // `/etc/passwd`, which the profile does not grant.
        confined: (
            0,
            &[
                "-- warning: cannot find home directory; cannot read ~/.sqliterc",
                "3",
            ],
        ),
        control: (0, &["3"]),
    },
    Work {
        id: "profile-sqlite3-beside",
        control_id: "profile-sqlite3-beside-control",
        profile: "sqlite3",
        flags: &["--read", "@DATA@/given"],
        argv: &[
            "/usr/bin/sqlite3",
            "-readonly",
            "@DATA@/beside/other.db",
            "select 1;",
        ],
        listed: &[],
        confined: (
            1,
            &[
                "Error: unable to open database \"@DATA@/beside/other.db\": unable to open database file",
            ],
        ),
        control: (0, &["1"]),
    },
];

/// A work's words as the guest sees them.
pub(super) fn in_guest(text: &str) -> String {
    text.replace("@DATA@", GUEST_DATA)
}

/// The guest's top folders that the initramfs makes itself: a host path through one of them is
/// the host's, not the guest's (`/bin` is a link on the host, busybox's folder in the guest).
const GUEST_OWN: &[&str] = &["/bin", "/dev", "/proc", "/sys", "/tmp", "/root"];

/// What is packed at one path.
enum Entry {
    Dir,
    Link(PathBuf),
    File(PathBuf, u32),
}

/// Traces every work here and packs what it opened, the profiles and the databases into `cpio`;
/// returns the guest's script of steps. `sandbox_check` is the guest's static build, which runs
/// here too.
pub(super) fn pack(
    cpio: &mut Cpio,
    root: &Path,
    build: &Path,
    sandbox_check: &Path,
) -> Result<String, Failed> {
    let profiles = root.join("examples").join("sandbox-check").join("profiles");
    let data = build.join("profile-data");
    make_databases(&data)?;
    let host = |text: &str| text.replace("@DATA@", &data.to_string_lossy());
    let traces = build.join("profile-traces");
    let mut entries = BTreeMap::new();
    let mut script = String::from(
        "# Generated by `cargo xtask kernels` (xtask/src/kernels/profiles.rs): the shipped\n\
         # profiles' work, confined and unconfined.\n",
    );
    for work in WORKS {
        let argv: Vec<String> = work.argv.iter().map(|a| host(a)).collect();
        let mut confined = vec![
            sandbox_check.to_string_lossy().into_owned(),
            "--policy".to_owned(),
            profiles
                .join(format!("{}.toml", work.profile))
                .to_string_lossy()
                .into_owned(),
        ];
        confined.extend(work.flags.iter().map(|f| host(f)));
        confined.push("--".to_owned());
        confined.extend(argv.iter().cloned());
        let mut reached = trace(&traces.join(work.id), &argv, work.control, &data)?;
        reached.extend(trace(
            &traces.join(format!("{}-sc", work.id)),
            &confined,
            work.confined,
            &data,
        )?);
        for path in reached {
            // The workspace's own files (the profiles, the build) and the folders above it are
            // the host's, not the work's.
            if path.starts_with(&data) || path.starts_with(root) || root.starts_with(&path) {
                continue;
            }
            add(&mut entries, &path, work.listed)?;
        }
        let words = |argv: &[&str]| {
            argv.iter()
                .map(|a| quote(&in_guest(a)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let args = words(work.argv);
        script.push_str(&format!("run {} {args}\n", work.control_id));
        script.push_str(&format!(
            "run {} $SC --policy /profiles/{}.toml {} -- {args}\n",
            work.id,
            work.profile,
            words(work.flags)
        ));
    }

    for (path, entry) in &entries {
        let name = path.to_string_lossy();
        let name = name.trim_start_matches('/');
        match entry {
            Entry::Dir => cpio.dir(name),
            Entry::Link(target) => cpio.symlink(name, &target.to_string_lossy()),
            Entry::File(source, mode) => cpio.file(name, *mode, &read(source)?),
        }
    }
    cpio.dir("profiles");
    for item in std::fs::read_dir(&profiles).map_err(|e| failed(format!("{profiles:?}: {e}")))? {
        let item = item.map_err(|e| failed(format!("{profiles:?}: {e}")))?;
        let name = item.file_name().to_string_lossy().into_owned();
        if name.ends_with(".toml") {
            cpio.file(&format!("profiles/{name}"), 0o644, &read(&item.path())?);
        }
    }
    let guest_data = GUEST_DATA.trim_start_matches('/');
    cpio.dir(guest_data);
    for folder in ["given", "beside"] {
        cpio.dir(&format!("{guest_data}/{folder}"));
    }
    for file in ["given/t.db", "beside/other.db"] {
        cpio.file(
            &format!("{guest_data}/{file}"),
            0o644,
            &read(&data.join(file))?,
        );
    }
    let bytes: u64 = entries
        .values()
        .filter_map(|e| match e {
            Entry::File(source, _) => std::fs::metadata(source).ok().map(|m| m.len()),
            _ => None,
        })
        .sum();
    println!(
        "profiles' work: {} paths packed ({:.1} MiB) for {} works",
        entries.len(),
        bytes as f64 / f64::from(1 << 20),
        WORKS.len()
    );
    Ok(script)
}

fn read(path: &Path) -> Result<Vec<u8>, Failed> {
    std::fs::read(path).map_err(|e| failed(format!("reading {}: {e}", path.display())))
}

/// A word for the guest's shell, in single quotes.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The sqlite3 works' two databases, made afresh by the host's sqlite3.
fn make_databases(data: &Path) -> Result<(), Failed> {
    let _ = std::fs::remove_dir_all(data);
    for (file, sql) in [
        (
            "given/t.db",
            "create table t(x); insert into t values (1), (2);",
        ),
        ("beside/other.db", "create table u(y);"),
    ] {
        let file = data.join(file);
        let folder = file.parent().expect("in a folder");
        std::fs::create_dir_all(folder).map_err(|e| failed(format!("{folder:?}: {e}")))?;
        let made = Command::new("/usr/bin/sqlite3")
            .arg(&file)
            .arg(sql)
            .status()
            .map_err(|e| failed(format!("/usr/bin/sqlite3: {e}")))?;
        if !made.success() {
            return Err(failed(format!("sqlite3 {file:?} {sql:?}: {made}")));
        }
    }
    Ok(())
}

/// Every absolute path a file call of `argv` reached (its result not an error), and the ELF
/// interpreter of each program it executed. The run must print and exit as `want` says, as in
/// the guest (the databases' folder aside): what a work opened here is what the guest needs
/// only if it did the same work.
fn trace(
    prefix: &Path,
    argv: &[String],
    want: (i32, &[&str]),
    data: &Path,
) -> Result<Vec<PathBuf>, Failed> {
    let folder = prefix.parent().expect("in a folder");
    std::fs::create_dir_all(folder).map_err(|e| failed(format!("{folder:?}: {e}")))?;
    for old in std::fs::read_dir(folder).map_err(|e| failed(format!("{folder:?}: {e}")))? {
        let old = old.map_err(|e| failed(format!("{folder:?}: {e}")))?.path();
        let stem = prefix
            .file_name()
            .expect("named")
            .to_string_lossy()
            .into_owned();
        if old
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{stem}.")))
        {
            let _ = std::fs::remove_file(old);
        }
    }
    // Standard output and error through one pipe, in the order written, as the guest's step
    // shows them.
    let io = |e: std::io::Error| failed(format!("a pipe for strace: {e}"));
    let (mut reader, writer) = std::io::pipe().map_err(io)?;
    let mut command = Command::new("strace");
    command
        .args(["-ff", "-qq", "-s", "65535", "-e", "trace=%file", "-o"])
        .arg(prefix)
        .args(argv)
        .stdin(std::process::Stdio::null())
        .stdout(writer.try_clone().map_err(io)?)
        .stderr(writer);
    let mut child = command
        .spawn()
        .map_err(|e| failed(format!("strace: {e}")))?;
    drop(command);
    let mut printed = String::new();
    std::io::Read::read_to_string(&mut reader, &mut printed).map_err(io)?;
    let status = child.wait().map_err(|e| failed(format!("strace: {e}")))?;
    let printed: Vec<String> = printed
        .lines()
        .map(|l| l.replace(&*data.to_string_lossy(), "@DATA@"))
        .collect();
    if status.code() != Some(want.0) || printed != want.1 {
        return Err(failed(format!(
            "tracing {argv:?} here: expected exit {} and {:?}, got {status} and {printed:?}",
            want.0, want.1
        )));
    }
    let mut reached = Vec::new();
    let stem = prefix
        .file_name()
        .expect("named")
        .to_string_lossy()
        .into_owned();
    for file in std::fs::read_dir(folder).map_err(|e| failed(format!("{folder:?}: {e}")))? {
        let file = file.map_err(|e| failed(format!("{folder:?}: {e}")))?.path();
        if !file
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{stem}.")))
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|e| failed(format!("{file:?}: {e}")))?;
        for line in text.lines() {
            if line.contains("= -1 ") || !line.contains(" = ") {
                continue;
            }
            let executed = line.starts_with("execve(");
            for (n, quoted) in line.split('"').enumerate() {
                if n % 2 == 1 && quoted.starts_with('/') {
                    let path = PathBuf::from(quoted);
                    if executed {
                        if let Some(interpreter) = interpreter(&path) {
                            reached.push(interpreter);
                        }
                    }
                    reached.push(path);
                }
            }
        }
    }
    Ok(reached)
}

/// The `PT_INTERP` of a 64-bit little-endian ELF file, if it is one and names one.
fn interpreter(program: &Path) -> Option<PathBuf> {
    let bytes = std::fs::read(program).ok()?;
    if bytes.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let word = |at: usize, len: usize| -> Option<usize> {
        let mut value = 0usize;
        for (i, b) in bytes.get(at..at + len)?.iter().enumerate() {
            value |= usize::from(*b) << (8 * i);
        }
        Some(value)
    };
    let (phoff, phentsize, phnum) = (word(0x20, 8)?, word(0x36, 2)?, word(0x38, 2)?);
    for n in 0..phnum {
        let header = phoff + n * phentsize;
        if word(header, 4)? == 3 {
            let (offset, size) = (word(header + 8, 8)?, word(header + 32, 8)?);
            let name = bytes.get(offset..offset + size)?;
            let name = name.strip_suffix(b"\0").unwrap_or(name);
            return Some(PathBuf::from(String::from_utf8_lossy(name).into_owned()));
        }
    }
    None
}

/// Adds `path` as the host has it: each folder on the way, each link on the way with what it
/// points to, and the file; a folder in `listed` with its entries.
fn add(entries: &mut BTreeMap<PathBuf, Entry>, path: &Path, listed: &[&str]) -> Result<(), Failed> {
    add_within(entries, path, listed, 0)
}

fn add_within(
    entries: &mut BTreeMap<PathBuf, Entry>,
    path: &Path,
    listed: &[&str],
    depth: usize,
) -> Result<(), Failed> {
    if depth > 40 {
        return Err(failed(format!("{path:?}: too many links")));
    }
    if GUEST_OWN.iter().any(|own| path.starts_with(own)) || path == Path::new("/") {
        return Ok(());
    }
    let mut sofar = PathBuf::from("/");
    let components: Vec<Component> = path.components().collect();
    for (n, component) in components.iter().enumerate() {
        match component {
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir => {
                sofar.pop();
                continue;
            }
            Component::Normal(name) => sofar.push(name),
            Component::Prefix(_) => unreachable!("unix"),
        }
        if GUEST_OWN.iter().any(|own| sofar.starts_with(own)) {
            return Ok(());
        }
        let Ok(meta) = std::fs::symlink_metadata(&sofar) else {
            // Gone since the trace, or reached only as a name: nothing to pack.
            return Ok(());
        };
        let last = n + 1 == components.len();
        if meta.file_type().is_symlink() {
            let target =
                std::fs::read_link(&sofar).map_err(|e| failed(format!("{sofar:?}: {e}")))?;
            entries.insert(sofar.clone(), Entry::Link(target.clone()));
            let mut resolved = sofar.parent().expect("below /").join(&target);
            for rest in &components[n + 1..] {
                resolved.push(rest.as_os_str());
            }
            return add_within(entries, &resolved, listed, depth + 1);
        }
        if meta.is_dir() {
            entries.entry(sofar.clone()).or_insert(Entry::Dir);
            if last && listed.iter().any(|l| Path::new(l) == sofar) {
                let items =
                    std::fs::read_dir(&sofar).map_err(|e| failed(format!("{sofar:?}: {e}")))?;
                for item in items {
                    let item = item.map_err(|e| failed(format!("{sofar:?}: {e}")))?.path();
                    add_within(entries, &item, &[], depth + 1)?;
                }
            }
        } else if meta.is_file() && last {
            entries.insert(
                sofar.clone(),
                Entry::File(sofar.clone(), meta.permissions().mode() & 0o7777),
            );
        } else if !meta.is_file() {
            // A device, socket or pipe: the guest makes its own.
            return Ok(());
        }
    }
    Ok(())
}
