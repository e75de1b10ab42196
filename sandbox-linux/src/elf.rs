//! Finding a program's ELF interpreter (its dynamic loader).
//!
//! The kernel opens the interpreter named in a dynamically linked program as an executable, so
//! Landlock checks its execute right too: without it, every such program fails with `EACCES`.
//! The backend grants execute on the interpreter of each program in the exec list, and on nothing
//! else the list does not name.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

const PT_INTERP: u32 = 3;
/// The longest interpreter path read; the kernel's own limit is a page.
const MAX_INTERP: u64 = 4096;

/// The interpreter `path` names, or `None` when it is not an ELF file or is statically linked.
pub fn interpreter(path: &Path) -> io::Result<Option<PathBuf>> {
    let mut file = File::open(path)?;
    let mut ident = [0u8; 64];
    let read = read_up_to(&mut file, &mut ident)?;
    if read < 52 || &ident[..4] != b"\x7fELF" {
        return Ok(None);
    }
    let wide = match ident[4] {
        1 => false,
        2 => true,
        _ => return Ok(None),
    };
    let little = match ident[5] {
        1 => true,
        2 => false,
        _ => return Ok(None),
    };
    let field = Fields { little };
    let (phoff, phentsize, phnum) = if wide {
        (
            field.u64(&ident[32..40]),
            field.u16(&ident[54..56]),
            field.u16(&ident[56..58]),
        )
    } else {
        (
            u64::from(field.u32(&ident[28..32])),
            field.u16(&ident[42..44]),
            field.u16(&ident[44..46]),
        )
    };
    let entry_size = usize::from(phentsize);
    if entry_size < if wide { 56 } else { 32 } {
        return Ok(None);
    }
    let mut entry = vec![0u8; entry_size];
    for index in 0..u64::from(phnum) {
        file.seek(SeekFrom::Start(phoff + index * entry_size as u64))?;
        file.read_exact(&mut entry)?;
        if field.u32(&entry[0..4]) != PT_INTERP {
            continue;
        }
        let (offset, size) = if wide {
            (field.u64(&entry[8..16]), field.u64(&entry[32..40]))
        } else {
            (
                u64::from(field.u32(&entry[4..8])),
                u64::from(field.u32(&entry[16..20])),
            )
        };
        if size == 0 || size > MAX_INTERP {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "an interpreter path of implausible length",
            ));
        }
        let mut name = vec![0u8; size as usize];
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(&mut name)?;
        if let Some(nul) = name.iter().position(|&b| b == 0) {
            name.truncate(nul);
        }
        return Ok(Some(PathBuf::from(std::ffi::OsString::from_vec(name))));
    }
    Ok(None)
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

struct Fields {
    little: bool,
}

impl Fields {
    fn u16(&self, b: &[u8]) -> u16 {
        let b = [b[0], b[1]];
        if self.little {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }
    }
    fn u32(&self, b: &[u8]) -> u32 {
        let b = [b[0], b[1], b[2], b[3]];
        if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    }
    fn u64(&self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        if self.little {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_program_names_its_loader() {
        let exe = std::env::current_exe().unwrap();
        let interp = interpreter(&exe)
            .unwrap()
            .expect("test binaries are dynamically linked");
        assert!(interp.is_absolute(), "{}", interp.display());
        assert!(interp.exists(), "{}", interp.display());
    }

    #[test]
    fn a_script_or_text_file_has_none() {
        let path = std::env::temp_dir().join(format!("sandbox-elf-test-{}", std::process::id()));
        std::fs::write(&path, b"#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(interpreter(&path).unwrap(), None);
        std::fs::remove_file(&path).unwrap();
    }
}
