//! What a path led to when the application resolved it: device, inode and kind. The launcher
//! compares the object it opens against this, so a path swapped in between grants nothing.

use std::fmt;

/// What kind of object a path led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// A folder.
    Folder,
    /// A regular file.
    File,
    /// A symbolic link (the launcher does not follow the last one, so a swapped-in link shows as
    /// itself).
    Link,
    /// Anything else: a device, a pipe, a socket.
    Other,
}

impl Kind {
    /// The kind a `st_mode` says.
    pub fn from_mode(mode: u32) -> Self {
        // The S_IFMT values are the same on every Unix, and part of POSIX's tar format.
        match mode & 0o170_000 {
            0o040_000 => Kind::Folder,
            0o100_000 => Kind::File,
            0o120_000 => Kind::Link,
            _ => Kind::Other,
        }
    }

    fn token(self) -> &'static str {
        match self {
            Kind::Folder => "dir",
            Kind::File => "file",
            Kind::Link => "link",
            Kind::Other => "other",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Kind::Folder => "a folder",
            Kind::File => "a file",
            Kind::Link => "a symbolic link",
            Kind::Other => "a special file",
        }
    }
}

/// The object a path led to: its device, its inode and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The device (`st_dev`).
    pub device: u64,
    /// The inode (`st_ino`).
    pub inode: u64,
    /// The kind.
    pub kind: Kind,
}

impl Identity {
    /// The identity of an open descriptor, from `fstat` on it.
    #[cfg(unix)]
    pub fn of_fd(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<Self> {
        let stat = nix::sys::stat::fstat(fd)?;
        // `st_dev`, `st_ino` and `st_mode` are unsigned or 32-bit on every Unix Rust supports;
        // the casts widen.
        #[allow(clippy::unnecessary_cast)]
        Ok(Self {
            device: stat.st_dev as u64,
            inode: stat.st_ino as u64,
            kind: Kind::from_mode(stat.st_mode as u32),
        })
    }

    /// The identity `metadata` describes.
    #[cfg(unix)]
    pub fn of_metadata(metadata: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            kind: Kind::from_mode(metadata.mode()),
        }
    }

    /// The identity `metadata` describes. Without Unix there are no inode numbers to compare;
    /// no backend for such a system exists yet.
    #[cfg(not(unix))]
    pub fn of_metadata(metadata: &std::fs::Metadata) -> Self {
        let kind = if metadata.is_dir() {
            Kind::Folder
        } else if metadata.is_file() {
            Kind::File
        } else if metadata.is_symlink() {
            Kind::Link
        } else {
            Kind::Other
        };
        Self {
            device: 0,
            inode: 0,
            kind,
        }
    }

    /// The wire's form: `DEVICE:INODE:KIND`, the numbers in decimal.
    pub fn to_token(&self) -> String {
        // Written digit by digit rather than through `format!`, whose machinery cost more than
        // the rest of encoding a path, a thousand times over for a large policy.
        let mut token = String::with_capacity(48);
        push_decimal(&mut token, self.device);
        token.push(':');
        push_decimal(&mut token, self.inode);
        token.push(':');
        token.push_str(self.kind.token());
        token
    }

    /// Reads the wire's form back; `None` if `token` is not exactly that form.
    pub fn from_token(token: &str) -> Option<Self> {
        let mut parts = token.split(':');
        let (Some(device), Some(inode), Some(kind), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let number = |text: &str| {
            // Digits only: `u64::from_str` also takes a leading `+`, which would give one
            // identity two spellings.
            (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                .then(|| text.parse::<u64>().ok())
                .flatten()
        };
        let kind = [Kind::Folder, Kind::File, Kind::Link, Kind::Other]
            .into_iter()
            .find(|k| k.token() == kind)?;
        Some(Self {
            device: number(device)?,
            inode: number(inode)?,
            kind,
        })
    }
}

/// Appends `number` in decimal.
fn push_decimal(out: &mut String, mut number: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        // `number % 10` is a digit, below 10.
        digits[at] = b'0' + (number % 10) as u8;
        number /= 10;
        if number == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&digit| char::from(digit)));
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (device {}, inode {})",
            self.kind.words(),
            self.device,
            self.inode
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_round_trips_and_takes_one_spelling() {
        let id = Identity {
            device: 2049,
            inode: 131,
            kind: Kind::Folder,
        };
        assert_eq!(id.to_token(), "2049:131:dir");
        assert_eq!(Identity::from_token("2049:131:dir"), Some(id));
        for (device, inode) in [(0, 0), (u64::MAX, 10), (7, u64::MAX)] {
            let id = Identity {
                device,
                inode,
                kind: Kind::Other,
            };
            assert_eq!(id.to_token(), format!("{device}:{inode}:other"));
            assert_eq!(Identity::from_token(&id.to_token()), Some(id));
        }
        for bad in [
            "",
            "2049:131",
            "2049:131:dir:x",
            "+2049:131:dir",
            "2049: 131:dir",
            "2049:131:folder",
            "18446744073709551616:1:file",
            "2049::file",
        ] {
            assert_eq!(Identity::from_token(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn display_names_kind_device_and_inode() {
        let id = Identity {
            device: 7,
            inode: 9,
            kind: Kind::Link,
        };
        assert_eq!(id.to_string(), "a symbolic link (device 7, inode 9)");
    }
}
