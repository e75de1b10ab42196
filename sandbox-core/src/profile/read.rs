//! Reading one profile: a file on disk, bounded and known by where it really lies, or a text
//! built into the program.

use std::path::{Path, PathBuf};

use super::error::ProfileError;
use super::value::MAX_FILE_BYTES;

/// A profile's text, and what it is known by.
pub(super) struct Loaded {
    /// The text.
    pub(super) text: String,
    /// The name errors give it: the path as found, or a built-in profile's name.
    pub(super) name: PathBuf,
    /// The folder it really lies in, for files on disk: its includes are looked for there.
    pub(super) folder: Option<PathBuf>,
    /// What it is, for finding cycles: a file's device and inode, or a built-in name.
    pub(super) key: Key,
}

/// The identity of a profile being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Key {
    /// A file on disk, by device and inode (by its real path where there are none).
    File(u64, u64, PathBuf),
    /// A built-in profile, by name.
    BuiltIn(String),
}

/// The built-in profile `name` of `files`.
pub(super) fn built_in(files: &[(&str, &str)], name: &str) -> Option<Loaded> {
    files
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| Loaded {
            text: (*text).to_owned(),
            name: PathBuf::from(n),
            folder: None,
            key: Key::BuiltIn((*n).to_owned()),
        })
}

/// Reads the profile file `path`: opened without waiting (a FIFO or a device must not hold the
/// program), checked by its descriptor to be a regular file of at most [`MAX_FILE_BYTES`], read
/// no further than that, and known by where it really lies.
pub(super) fn read_file(path: &Path) -> Result<Loaded, ProfileError> {
    use std::io::Read;
    let read_error = |source| ProfileError::Read {
        file: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = options.open(path).map_err(read_error)?;
    let meta = file.metadata().map_err(read_error)?;
    if !meta.is_file() {
        return Err(ProfileError::NotAFile {
            file: path.to_path_buf(),
        });
    }
    let too_large = || ProfileError::TooLarge {
        file: path.to_path_buf(),
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    (&file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| read_error(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    // Where the file really lies, links followed: its includes are beside it there. The path is
    // resolved by name, so the file found there must be the one read.
    let real = path.canonicalize().map_err(read_error)?;
    let key = identity(&real, &meta).map_err(read_error)?;
    Ok(Loaded {
        text,
        name: path.to_path_buf(),
        folder: real.parent().map(Path::to_path_buf),
        key,
    })
}

/// The identity of the file `meta` describes, checked to be the one at `real`.
#[cfg(unix)]
pub(super) fn identity(real: &Path, meta: &std::fs::Metadata) -> std::io::Result<Key> {
    use std::os::unix::fs::MetadataExt;
    let now = std::fs::metadata(real)?;
    if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
        return Err(std::io::Error::other(
            "the file was replaced while it was read",
        ));
    }
    Ok(Key::File(meta.dev(), meta.ino(), real.to_path_buf()))
}

/// The identity of the file at `real`: its path, where there are no inodes to compare.
#[cfg(not(unix))]
pub(super) fn identity(real: &Path, _meta: &std::fs::Metadata) -> std::io::Result<Key> {
    Ok(Key::File(0, 0, real.to_path_buf()))
}
