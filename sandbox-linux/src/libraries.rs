//! The shared libraries a program names (`DT_NEEDED`), found where the dynamic loader would look
//! for them, so that a program that could not load them is refused before it starts, with the
//! read path to add, rather than failing in the loader with "error while loading shared
//! libraries".
//!
//! This is advice, not a grant: nothing found here is added to the policy. It follows the
//! loader's order for a program started with an empty environment (the launcher clears
//! `LD_LIBRARY_PATH`): `DT_RPATH` (only without `DT_RUNPATH`), `DT_RUNPATH`, the folders of
//! `/etc/ld.so.conf` (what `ld.so.cache` is built from), then the system folders. It reads the
//! program's own entries only, not those of the libraries it finds; a library that is not found
//! anywhere is left to the loader to report.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sandbox_core::Policy;

use crate::elf::{self, u64_at, ElfError};

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;
/// The most dynamic entries read; real programs have a few dozen.
const MAX_ENTRIES: u64 = 4096;
/// The largest string table read.
const MAX_STRTAB: u64 = 1 << 20;
/// The bounds on what the advice reads and looks up, all together, whatever the program's file
/// says: past any of them the advice is given up (the launch goes on, and a library the program
/// cannot read is then the loader's to report). The advice runs in the unconfined parent before
/// the launch, on a file the program's author wrote, so it must cost little whatever that file
/// holds; before these bounds, 4,000 entries naming one 1 MiB string copied 4 GiB, and one
/// `DT_RUNPATH` of `a:a:a…` split into 524,288 folders each searched for every name. Real
/// programs stay far inside: `python3` names 6 libraries and no folder, a browser about 100.
const MAX_STRING_BYTES: usize = 64 << 10;
/// The most distinct `DT_NEEDED` names.
const MAX_NAMES: usize = 256;
/// The most distinct `DT_RPATH` and `DT_RUNPATH` folders.
const MAX_FOLDERS: usize = 256;
/// The most names-times-folders lookups, each one `stat`.
const MAX_LOOKUPS: usize = 4096;

#[cfg(target_arch = "aarch64")]
const MULTIARCH: &str = "aarch64-linux-gnu";
#[cfg(not(target_arch = "aarch64"))]
const MULTIARCH: &str = "x86_64-linux-gnu";

/// What a program's dynamic section names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dynamic {
    /// `DT_NEEDED`, in order.
    pub needed: Vec<OsString>,
    /// `DT_RPATH`, split at `:`.
    pub rpath: Vec<OsString>,
    /// `DT_RUNPATH`, split at `:`.
    pub runpath: Vec<OsString>,
    /// The file named more than the advice reads (see `MAX_STRING_BYTES`): what was read is
    /// kept, and no advice is given.
    pub given_up: bool,
}

/// A library the program needs that lies outside the policy's read paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// Its name, as `DT_NEEDED` gives it.
    pub name: OsString,
    /// Where the loader would find it, resolved.
    pub found: PathBuf,
}

impl Unreadable {
    /// The folder to add with `--read`: the first folder of where it was found.
    pub fn remedy(&self) -> PathBuf {
        self.found.components().take(2).collect()
    }
}

/// The dynamic section of the ELF file at `path`; empty for a file that has none.
pub fn dynamic(path: &Path) -> Result<Dynamic, ElfError> {
    let file = File::open(path).map_err(ElfError::Read)?;
    let Some(headers) = elf::headers(&file)? else {
        return Ok(Dynamic::default());
    };
    let mut loads = Vec::new();
    let mut sections = Vec::new();
    for entry in headers.entries() {
        match elf::u32_at(entry, 0) {
            PT_LOAD => loads.push((u64_at(entry, 16), u64_at(entry, 8), u64_at(entry, 32))),
            PT_DYNAMIC => sections.push((u64_at(entry, 8), u64_at(entry, 32))),
            _ => {}
        }
    }
    // One dynamic section, or none read: with two, this reading and the loader's (which takes
    // the last) could differ, and the program would choose what the advice says.
    let [(offset, size)] = sections[..] else {
        return Ok(Dynamic::default());
    };
    let count = (size / 16).min(MAX_ENTRIES);
    let mut table = vec![0u8; (count * 16) as usize];
    elf::fill(&file, &mut table, offset, "dynamic section")?;
    let mut entries = Vec::new();
    let (mut strtab, mut strsz) = (None, 0);
    for entry in table.chunks_exact(16) {
        let (tag, value) = (u64_at(entry, 0), u64_at(entry, 8));
        match tag {
            DT_NULL => break,
            DT_STRTAB => strtab = Some(value),
            DT_STRSZ => strsz = value.min(MAX_STRTAB),
            DT_NEEDED | DT_RPATH | DT_RUNPATH => entries.push((tag, value)),
            _ => {}
        }
    }
    // DT_STRTAB is an address; the segment that maps it says where it lies in the file.
    let Some(strtab) = strtab.and_then(|address| {
        loads
            .iter()
            .find(|&&(vaddr, _, filesz)| address >= vaddr && address - vaddr < filesz)
            .map(|&(vaddr, file_offset, _)| address - vaddr + file_offset)
    }) else {
        return Ok(Dynamic::default());
    };
    let mut strings = vec![0u8; strsz as usize];
    elf::fill(&file, &mut strings, strtab, "string table")?;
    Ok(read_entries(&strings, &entries))
}

/// The names and folders `entries` point at in `strings`, each entry read once, each name and
/// folder kept once, within the bounds; past one, what was read so far and `given_up`.
fn read_entries(strings: &[u8], entries: &[(u64, u64)]) -> Dynamic {
    let mut found = Dynamic::default();
    let mut budget = MAX_STRING_BYTES;
    let mut read = std::collections::BTreeSet::new();
    for &(tag, at) in entries {
        if !read.insert((tag, at)) {
            continue;
        }
        let rest = usize::try_from(at)
            .ok()
            .and_then(|at| strings.get(at..))
            .unwrap_or_default();
        // Never look further for the end than the budget left.
        let window = &rest[..rest.len().min(budget + 1)];
        let end = window.iter().position(|&b| b == 0).unwrap_or(window.len());
        if end > budget {
            found.given_up = true;
            return found;
        }
        budget -= end;
        let text = &rest[..end];
        let over = if tag == DT_NEEDED {
            add_once(&mut found.needed, text);
            found.needed.len() > MAX_NAMES
        } else {
            let list = if tag == DT_RPATH {
                &mut found.rpath
            } else {
                &mut found.runpath
            };
            for part in text.split(|&b| b == b':').filter(|part| !part.is_empty()) {
                add_once(list, part);
                if list.len() > MAX_FOLDERS {
                    break;
                }
            }
            found.rpath.len() + found.runpath.len() > MAX_FOLDERS
        };
        if over {
            found.given_up = true;
            return found;
        }
    }
    found
}

/// Adds `item` to `list` unless it is there already.
fn add_once(list: &mut Vec<OsString>, item: &[u8]) {
    let item = OsStr::from_bytes(item);
    if !list.iter().any(|known| known == item) {
        list.push(item.to_os_string());
    }
}

/// The folders the loader searches for `program`'s libraries, in its order, `system` (the
/// [`system_folders`]) last.
fn search_path(program: &Path, dynamic: &Dynamic, system: &[PathBuf]) -> Vec<PathBuf> {
    let origin = program.parent().unwrap_or(Path::new("/"));
    let expand = |dir: &OsString| -> PathBuf {
        let text = dir.to_string_lossy();
        let origin = origin.to_string_lossy();
        PathBuf::from(
            text.replace("${ORIGIN}", &origin)
                .replace("$ORIGIN", &origin),
        )
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    if dynamic.runpath.is_empty() {
        dirs.extend(dynamic.rpath.iter().map(expand));
    }
    dirs.extend(dynamic.runpath.iter().map(expand));
    dirs.extend_from_slice(system);
    dirs
}

/// The folders the system searches for every program: `/etc/ld.so.conf`'s, then the default
/// ones. Only the system administrator chooses these.
fn system_folders() -> Vec<PathBuf> {
    let mut dirs = ld_so_conf(Path::new("/etc/ld.so.conf"), 0);
    for system in ["/lib", "/usr/lib"] {
        dirs.push(Path::new(system).join(MULTIARCH));
    }
    if cfg!(target_arch = "x86_64") {
        dirs.extend([PathBuf::from("/lib64"), PathBuf::from("/usr/lib64")]);
    }
    dirs.extend([PathBuf::from("/lib"), PathBuf::from("/usr/lib")]);
    dirs
}

/// The folders an `ld.so.conf` lists, its `include` lines followed (a `*` in the last part of
/// the pattern only, as Debian's files use it), at most a few levels deep.
fn ld_so_conf(path: &Path, depth: usize) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if let Some(pattern) = line.strip_prefix("include") {
            if depth >= 4 {
                continue;
            }
            let pattern = Path::new(pattern.trim());
            let (Some(dir), Some(name)) = (pattern.parent(), pattern.file_name()) else {
                continue;
            };
            let name = name.to_string_lossy();
            let (prefix, suffix) = name.split_once('*').unwrap_or((&name, ""));
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|file| {
                    file.file_name().is_some_and(|n| {
                        let n = n.to_string_lossy();
                        n.starts_with(prefix) && n.ends_with(suffix) && n.len() >= name.len() - 1
                    })
                })
                .collect();
            files.sort();
            for file in files {
                dirs.extend(ld_so_conf(&file, depth + 1));
            }
        } else if line.starts_with('/') {
            dirs.push(PathBuf::from(line));
        }
    }
    dirs
}

/// The libraries `program` needs that the loader would find outside every path of `policy`.
/// A library found nowhere, or a program that cannot be read, gives nothing: the loader, or the
/// launch, reports those itself.
///
/// The names come from the program's own file, so the advice is limited to what the program
/// cannot choose: a plain name (a path in `DT_NEEDED` is left to the loader) found in a folder of
/// the system's own search path (`/etc/ld.so.conf` and the system folders, never the program's
/// `DT_RPATH` or `DT_RUNPATH`), so that no header can make the launcher ask the user to grant
/// `/root` as a "library folder".
pub fn unreadable(policy: &Policy, program: &Path) -> Vec<Unreadable> {
    let Ok(dynamic) = dynamic(program) else {
        return Vec::new();
    };
    if dynamic.given_up {
        return Vec::new();
    }
    // Read once: `/etc/ld.so.conf` and its includes are a dozen files to open and read.
    let system = system_folders();
    let dirs = search_path(program, &dynamic, &system);
    if dynamic.needed.len().saturating_mul(dirs.len()) > MAX_LOOKUPS {
        return Vec::new();
    }
    let mut missing = Vec::new();
    for name in &dynamic.needed {
        if name.as_bytes().contains(&b'/') || name.is_empty() {
            continue;
        }
        // The first folder of the loader's order that holds it: where it would be loaded from.
        // One `stat` a folder; only the file found is resolved.
        let Some((dir, found)) = dirs.iter().find_map(|dir| {
            let path = dir.join(name);
            if !path.is_file() {
                return None;
            }
            Some((dir, path.canonicalize().ok()?))
        }) else {
            continue;
        };
        if !system.contains(dir) {
            continue;
        }
        if !policy.covers(&found) {
            missing.push(Unreadable {
                name: name.clone(),
                found,
            });
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python() -> PathBuf {
        Path::new("/usr/bin/python3").canonicalize().unwrap()
    }

    #[test]
    fn python_needs_the_c_library() {
        let dynamic = dynamic(&python()).unwrap();
        assert!(
            dynamic.needed.iter().any(|n| n == "libc.so.6"),
            "{dynamic:?}"
        );
    }

    #[test]
    fn libraries_outside_the_policy_are_named_with_their_folder() {
        let missing = unreadable(&Policy::new(), &python());
        let libc = missing
            .iter()
            .find(|m| m.name == "libc.so.6")
            .expect("libc is outside an empty policy");
        assert!(libc.found.starts_with("/usr"), "{libc:?}");
        assert_eq!(libc.remedy(), Path::new("/usr"));
        let policy = Policy::new().allow_read("/usr").unwrap();
        assert_eq!(unreadable(&policy, &python()), vec![]);
    }

    #[test]
    fn a_script_or_static_program_needs_nothing() {
        assert_eq!(
            dynamic(Path::new("/etc/passwd")).unwrap(),
            Dynamic::default()
        );
    }

    /// A program chooses its `DT_NEEDED` names and its run paths, so neither may steer the
    /// advice toward a folder of secrets (a name `/root/.bashrc`, a run path `/root`).
    #[test]
    fn names_with_a_slash_and_run_paths_give_no_advice() {
        let dir = std::env::temp_dir().join(format!("sandbox-libs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libsecret.so"), b"x").unwrap();
        let runpath = Dynamic {
            needed: vec!["libsecret.so".into()],
            rpath: vec![],
            runpath: vec![dir.clone().into_os_string()],
            given_up: false,
        };
        let dirs = search_path(Path::new("/usr/bin/x"), &runpath, &system_folders());
        assert_eq!(dirs[0], dir);
        assert!(!system_folders().contains(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn origin_is_the_programs_folder() {
        let dynamic = Dynamic {
            needed: vec![],
            rpath: vec!["/ignored".into()],
            runpath: vec!["$ORIGIN/../lib".into()],
            given_up: false,
        };
        let dirs = search_path(Path::new("/opt/app/bin/tool"), &dynamic, &system_folders());
        assert_eq!(dirs[0], Path::new("/opt/app/bin/../lib"));
        assert!(!dirs.contains(&PathBuf::from("/ignored")));
    }
}
