//! The guest's initramfs archive, and the error a kernel run reports: the bottom of the
//! kernels task, which both the run and the guest's profiles build on.

use crate::cmd::Failed;

/// A kernel run's failure with `what` as its text.
pub(super) fn failed(what: impl std::fmt::Display) -> Failed {
    Failed(what.to_string())
}

/// A cpio archive in the `newc` format the kernel unpacks as its initramfs.
#[derive(Default)]
pub(super) struct Cpio {
    bytes: Vec<u8>,
    inode: u32,
}

impl Cpio {
    fn entry(&mut self, name: &str, mode: u32, rdev: (u32, u32), data: &[u8]) {
        self.inode += 1;
        let fields = [
            self.inode,
            mode,
            0,
            0,
            if mode & 0o170000 == 0o040000 { 2 } else { 1 },
            0,
            u32::try_from(data.len()).expect("under 4 GiB"),
            0,
            0,
            rdev.0,
            rdev.1,
            u32::try_from(name.len() + 1).expect("short"),
            0,
        ];
        self.bytes.extend_from_slice(b"070701");
        for field in fields {
            self.bytes
                .extend_from_slice(format!("{field:08x}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    pub(super) fn dir(&mut self, name: &str) {
        self.entry(name, 0o040755, (0, 0), &[]);
    }

    pub(super) fn node(&mut self, name: &str, major: u32, minor: u32) {
        self.entry(name, 0o020600, (major, minor), &[]);
    }

    pub(super) fn file(&mut self, name: &str, perm: u32, data: &[u8]) {
        self.entry(name, 0o100000 | perm, (0, 0), data);
    }

    pub(super) fn symlink(&mut self, name: &str, target: &str) {
        self.entry(name, 0o120777, (0, 0), target.as_bytes());
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        self.inode = 0;
        self.entry("TRAILER!!!", 0, (0, 0), &[]);
        self.bytes
    }
}
