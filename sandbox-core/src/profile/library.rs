//! Profiles found by name, in folders and among those built into the program.

use std::path::{Path, PathBuf};

use super::error::ProfileError;
use super::read::{built_in, read_file, Key, Loaded};
use super::value::Profile;

/// Profiles found by name: in folders, in order, then among those built into the program.
///
/// ```
/// use sandbox_core::profile::Library;
/// let built_in = [("base.toml", "read = [\"/usr\"]\n")];
/// let library = Library::new(Vec::new(), &built_in);
/// let profile = library.load("base")?;
/// assert_eq!(profile.policy.read_paths().len(), 1);
/// # Ok::<(), sandbox_core::profile::ProfileError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Library<'a> {
    folders: Vec<PathBuf>,
    pub(super) built_in: &'a [(&'a str, &'a str)],
}

/// A profile a [`Library`] holds, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// Its name, without `.toml`.
    pub name: String,
    /// Where it comes from.
    pub origin: Origin,
    /// Whether one of the same name found before it is the one taken.
    pub shadowed: bool,
}

/// Where a listed profile comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A file in one of the library's folders.
    File(PathBuf),
    /// Built into the program.
    BuiltIn,
}

impl<'a> Library<'a> {
    /// A library of `folders`, searched in order, then of `built_in` (file names such as
    /// `python3.toml` and their texts).
    pub fn new(folders: Vec<PathBuf>, built_in: &'a [(&'a str, &'a str)]) -> Self {
        Library { folders, built_in }
    }

    /// Whether `given` names a profile (`python3`) rather than a file: it holds no `/` and does
    /// not end in `.toml`.
    pub fn is_name(given: &Path) -> bool {
        given.to_str().is_some_and(|text| {
            !text.is_empty()
                && !text.contains('/')
                && !text.ends_with(".toml")
                && text != "."
                && text != ".."
        })
    }

    /// The profile `given`: by name (see [`Library::is_name`]) the first `NAME.toml` of the
    /// folders, else the built-in one; otherwise the file. A file's includes are looked for
    /// beside it, then by name here; a built-in profile's among the built-in ones.
    pub fn load(&self, given: impl AsRef<Path>) -> Result<Profile, ProfileError> {
        let given = given.as_ref();
        let loaded = if Self::is_name(given) {
            let name = given.to_string_lossy();
            let mut looked = Vec::new();
            match self.find(&format!("{name}.toml"), &mut looked) {
                Some(found) => found?,
                None => {
                    return Err(ProfileError::NotFound {
                        name: name.into_owned(),
                        looked,
                    })
                }
            }
        } else {
            read_file(given)?
        };
        let mut profile = Profile::default();
        profile.add_loaded(loaded, 0, Source::Library(self), &mut Walk::default())?;
        Ok(profile)
    }

    /// Every profile the library holds, by name, each in the order [`Library::load`] looks.
    pub fn list(&self) -> Vec<Listed> {
        let mut found: Vec<(String, Origin)> = Vec::new();
        for folder in &self.folders {
            let Ok(entries) = std::fs::read_dir(folder) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .flatten()
                .filter_map(|entry| {
                    entry
                        .file_name()
                        .to_str()?
                        .strip_suffix(".toml")
                        .map(str::to_owned)
                })
                .collect();
            names.sort();
            found.extend(names.into_iter().map(|name| {
                (
                    name.clone(),
                    Origin::File(folder.join(format!("{name}.toml"))),
                )
            }));
        }
        for (file, _) in self.built_in {
            if let Some(name) = file.strip_suffix(".toml") {
                found.push((name.to_owned(), Origin::BuiltIn));
            }
        }
        let mut listed: Vec<Listed> = Vec::new();
        for (name, origin) in found {
            let shadowed = listed.iter().any(|l| l.name == name);
            listed.push(Listed {
                name,
                origin,
                shadowed,
            });
        }
        // By name, and within a name in the order looked for (the sort is stable).
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        listed
    }

    /// `file_name` in the folders, then built in; `looked` says where it was looked for.
    pub(super) fn find(
        &self,
        file_name: &str,
        looked: &mut Vec<String>,
    ) -> Option<Result<Loaded, ProfileError>> {
        for folder in &self.folders {
            let path = folder.join(file_name);
            match read_file(&path) {
                Err(ProfileError::Read { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    looked.push(path.display().to_string());
                }
                other => return Some(other),
            }
        }
        looked.push("the built-in profiles".to_owned());
        built_in(self.built_in, file_name).map(Ok)
    }
}

/// Where a profile's includes are looked for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'a> {
    /// Beside the including file, on disk.
    Disk,
    /// A table of names and texts built into the program.
    Table(&'a [(&'a str, &'a str)]),
    /// Beside the including file, then by name in a library.
    Library(&'a Library<'a>),
}

/// Where a profile's read has got to: the includes open, and the files read so far.
#[derive(Default)]
pub(super) struct Walk {
    /// The files being read, outermost first.
    pub(super) stack: Vec<Key>,
    /// How many files have been read.
    pub(super) files: usize,
}
