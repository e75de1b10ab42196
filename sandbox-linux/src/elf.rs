//! A program's ELF header, read the way the kernel's loader reads it, to find its dynamic loader.
//!
//! The kernel opens the loader a dynamically linked program names (`PT_INTERP`) as an
//! executable, so Landlock checks its execute right too. The program's file is the program's to
//! choose, so nothing read from it may widen a grant: the backend only adds execute to a loader
//! the policy already lets the program read, and only after this module has read the header
//! exactly as the kernel will.
//!
//! The kernel's native loader (`load_elf_binary`) never looks at `EI_CLASS` or `EI_DATA`: it
//! reads every header as this architecture's 64-bit little-endian layout, checks `e_type`,
//! `e_machine` and `e_phentsize`, reads at most 64 KiB of program headers, and takes the first
//! `PT_INTERP`, which must be 2 to `PATH_MAX` bytes ending in NUL. A header whose class or byte
//! order says otherwise could be read two ways, one by the kernel and another by a tool that
//! believes it; such a file is refused rather than guessed at.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 4] = b"\x7fELF";
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const PT_INTERP: u32 = 3;
/// `sizeof(Elf64_Ehdr)`.
const HEADER_SIZE: usize = 64;
/// `sizeof(Elf64_Phdr)`: the only entry size the kernel's loader accepts.
const PHDR_SIZE: u16 = 56;
/// The most program-header bytes the kernel reads (`load_elf_phdrs`).
const MAX_PHDR_BYTES: usize = 65_536;
/// `PATH_MAX`, the longest `PT_INTERP` the kernel accepts.
const PATH_MAX: u64 = 4096;

/// `e_machine` of the architecture this crate runs on.
#[cfg(target_arch = "x86_64")]
pub const NATIVE_MACHINE: u16 = 62; // EM_X86_64
/// `e_machine` of the architecture this crate runs on.
#[cfg(target_arch = "aarch64")]
pub const NATIVE_MACHINE: u16 = 183; // EM_AARCH64
/// `e_machine` of the architecture this crate runs on; no other has filters.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const NATIVE_MACHINE: u16 = 0;

/// What a file is to the kernel's native ELF loader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Not an ELF file: a script, or data the kernel will not run as ELF.
    NotElf,
    /// A native ELF program with no loader: statically linked, or a loader itself.
    Static {
        /// `ET_DYN` (a position-independent file, as every loader is) rather than `ET_EXEC`.
        position_independent: bool,
    },
    /// A native ELF program the kernel runs through the loader it names.
    Dynamic {
        /// The `PT_INTERP` path, up to its NUL.
        interpreter: PathBuf,
    },
}

/// Why a file that starts like ELF cannot be read the one way the kernel reads it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElfError {
    /// The file could not be read.
    #[error("reading it")]
    Read(#[source] io::Error),
    /// The class byte says 32-bit (or nonsense), but the kernel reads every header as 64-bit.
    #[error("its header claims ELF class {found}, but the kernel's loader reads it as 64-bit ELF; a header two readings disagree on is refused")]
    Class {
        /// `EI_CLASS`.
        found: u8,
    },
    /// The byte-order byte says big-endian (or nonsense), but the kernel reads little-endian.
    #[error("its header claims byte order {found}, but the kernel's loader reads it little-endian; a header two readings disagree on is refused")]
    ByteOrder {
        /// `EI_DATA`.
        found: u8,
    },
    /// Built for another architecture.
    #[error("it is built for machine {found} (e_machine), not this one ({NATIVE_MACHINE}); only native programs run")]
    Machine {
        /// `e_machine`.
        found: u16,
    },
    /// Neither an executable nor a position-independent file.
    #[error("its type {found} (e_type) is neither an executable (2) nor a shared object (3)")]
    Type {
        /// `e_type`.
        found: u16,
    },
    /// Program headers of a size the kernel does not accept.
    #[error("its program headers are {found} bytes each; the kernel accepts 56")]
    HeaderSize {
        /// `e_phentsize`.
        found: u16,
    },
    /// No program headers, or more than the kernel reads.
    #[error("it has {count} program headers; the kernel reads 1 to {} of them", MAX_PHDR_BYTES / PHDR_SIZE as usize)]
    HeaderCount {
        /// `e_phnum`.
        count: u16,
    },
    /// A table or string lies past the end of the file.
    #[error("its {what} lies past the end of the file")]
    Truncated {
        /// Which part.
        what: &'static str,
    },
    /// A `PT_INTERP` the kernel would refuse.
    #[error("its loader path (PT_INTERP) is {len} bytes{}; the kernel takes 2 to 4096 ending in NUL", if *.terminated { "" } else { " without a closing NUL" })]
    InterpreterPath {
        /// `p_filesz`.
        len: u64,
        /// Whether the last byte is NUL.
        terminated: bool,
    },
}

/// Where the parser reads from: a file, or bytes in memory for the fuzzer and tests.
pub trait Source {
    /// Fills `buf` from `offset`, or fails if the source ends first.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl Source for File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }
}

impl Source for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let end = start
            .checked_add(buf.len())
            .filter(|&end| end <= self.len())
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(&self[start..end]);
        Ok(())
    }
}

/// Reads the file at `path` as the kernel's loader would.
pub fn read(path: &Path) -> Result<Kind, ElfError> {
    let file = File::open(path).map_err(ElfError::Read)?;
    parse(&file)
}

/// Reads `source` as the kernel's native loader would.
pub fn parse<S: Source + ?Sized>(source: &S) -> Result<Kind, ElfError> {
    let Some(Headers { e_type, table }) = headers(source)? else {
        return Ok(Kind::NotElf);
    };
    // The kernel takes the first PT_INTERP and stops looking.
    let Some(entry) = table
        .chunks_exact(usize::from(PHDR_SIZE))
        .find(|entry| u32_at(entry, 0) == PT_INTERP)
    else {
        return Ok(Kind::Static {
            position_independent: e_type == ET_DYN,
        });
    };
    let offset = u64_at(entry, 8);
    let len = u64_at(entry, 32);
    if !(2..=PATH_MAX).contains(&len) {
        return Err(ElfError::InterpreterPath {
            len,
            terminated: false,
        });
    }
    let mut name = vec![0u8; len as usize];
    fill(source, &mut name, offset, "loader path")?;
    if name.last() != Some(&0) {
        return Err(ElfError::InterpreterPath {
            len,
            terminated: false,
        });
    }
    // The kernel opens the path as a C string: up to its first NUL.
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    name.truncate(end);
    Ok(Kind::Dynamic {
        interpreter: PathBuf::from(OsString::from_vec(name)),
    })
}

/// A native ELF file's type and program header table, as [`parse`] checks them.
pub(crate) struct Headers {
    /// `e_type`.
    pub(crate) e_type: u16,
    /// The program headers, [`PHDR_SIZE`] bytes each.
    pub(crate) table: Vec<u8>,
}

impl Headers {
    /// The program headers, one slice each.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &[u8]> {
        self.table.chunks_exact(usize::from(PHDR_SIZE))
    }
}

/// The header and program headers of `source`, checked as the kernel checks them, or `None`
/// when it is not ELF at all.
pub(crate) fn headers<S: Source + ?Sized>(source: &S) -> Result<Option<Headers>, ElfError> {
    let mut header = [0u8; HEADER_SIZE];
    let mut magic = [0u8; 4];
    match source.read_exact_at(&mut magic, 0) {
        Ok(()) if &magic == MAGIC => {}
        Ok(()) => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(ElfError::Read(e)),
    }
    fill(source, &mut header, 0, "ELF header")?;
    if header[4] != ELFCLASS64 {
        return Err(ElfError::Class { found: header[4] });
    }
    if header[5] != ELFDATA2LSB {
        return Err(ElfError::ByteOrder { found: header[5] });
    }
    let e_type = u16_at(&header, 16);
    let machine = u16_at(&header, 18);
    let phoff = u64_at(&header, 32);
    let phentsize = u16_at(&header, 54);
    let phnum = u16_at(&header, 56);
    if e_type != ET_EXEC && e_type != ET_DYN {
        return Err(ElfError::Type { found: e_type });
    }
    if machine != NATIVE_MACHINE {
        return Err(ElfError::Machine { found: machine });
    }
    if phentsize != PHDR_SIZE {
        return Err(ElfError::HeaderSize { found: phentsize });
    }
    let table_len = usize::from(phnum) * usize::from(PHDR_SIZE);
    if phnum == 0 || table_len > MAX_PHDR_BYTES {
        return Err(ElfError::HeaderCount { count: phnum });
    }
    let mut table = vec![0u8; table_len];
    fill(source, &mut table, phoff, "program header table")?;
    Ok(Some(Headers { e_type, table }))
}

pub(crate) fn fill<S: Source + ?Sized>(
    source: &S,
    buf: &mut [u8],
    offset: u64,
    what: &'static str,
) -> Result<(), ElfError> {
    source.read_exact_at(buf, offset).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            ElfError::Truncated { what }
        } else {
            ElfError::Read(e)
        }
    })
}

pub(crate) fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Test files: a minimal native ELF header with one program header, which tests and the fuzz
/// seed corpus change one field at a time.
pub mod sample {
    use super::*;

    /// A native `ET_DYN` file whose one program header is a `PT_INTERP` naming `interpreter`.
    pub fn dynamic(interpreter: &[u8]) -> Vec<u8> {
        let mut file = vec![0u8; HEADER_SIZE + usize::from(PHDR_SIZE)];
        file[..4].copy_from_slice(MAGIC);
        file[4] = ELFCLASS64;
        file[5] = ELFDATA2LSB;
        file[6] = 1;
        file[16..18].copy_from_slice(&ET_DYN.to_le_bytes());
        file[18..20].copy_from_slice(&NATIVE_MACHINE.to_le_bytes());
        file[32..40].copy_from_slice(&(HEADER_SIZE as u64).to_le_bytes());
        file[52..54].copy_from_slice(&(HEADER_SIZE as u16).to_le_bytes());
        file[54..56].copy_from_slice(&PHDR_SIZE.to_le_bytes());
        file[56..58].copy_from_slice(&1u16.to_le_bytes());
        let phdr = HEADER_SIZE;
        let name_at = file.len() as u64;
        file[phdr..phdr + 4].copy_from_slice(&PT_INTERP.to_le_bytes());
        file[phdr + 8..phdr + 16].copy_from_slice(&name_at.to_le_bytes());
        let len = interpreter.len() as u64 + 1;
        file[phdr + 32..phdr + 40].copy_from_slice(&len.to_le_bytes());
        file.extend_from_slice(interpreter);
        file.push(0);
        file
    }

    /// A native `ET_DYN` file with one `PT_LOAD` mapping the whole file at address 0 and one
    /// `PT_DYNAMIC` holding `entries` (tag, value), then `DT_STRTAB` and `DT_STRSZ` for
    /// `strings`, which follow the table: a string's value is its offset in `strings`.
    pub fn with_dynamic(entries: &[(u64, u64)], strings: &[u8]) -> Vec<u8> {
        const PT_LOAD: u32 = 1;
        const PT_DYNAMIC: u32 = 2;
        let phdrs = 2 * usize::from(PHDR_SIZE);
        let table_at = HEADER_SIZE + phdrs;
        let table_len = (entries.len() + 3) * 16;
        let strings_at = (table_at + table_len) as u64;
        let mut file = dynamic(b"");
        file.truncate(HEADER_SIZE);
        file[56..58].copy_from_slice(&2u16.to_le_bytes());
        let total = (table_at + table_len + strings.len()) as u64;
        let mut phdr = |kind: u32, offset: u64, size: u64| {
            let mut entry = vec![0u8; usize::from(PHDR_SIZE)];
            entry[..4].copy_from_slice(&kind.to_le_bytes());
            entry[8..16].copy_from_slice(&offset.to_le_bytes());
            entry[16..24].copy_from_slice(&offset.to_le_bytes());
            entry[32..40].copy_from_slice(&size.to_le_bytes());
            entry[40..48].copy_from_slice(&size.to_le_bytes());
            file.extend_from_slice(&entry);
        };
        phdr(PT_LOAD, 0, total);
        phdr(PT_DYNAMIC, table_at as u64, table_len as u64);
        let tail = [(5, strings_at), (10, strings.len() as u64), (0, 0)];
        for &(tag, value) in entries.iter().chain(&tail) {
            file.extend_from_slice(&tag.to_le_bytes());
            file.extend_from_slice(&value.to_le_bytes());
        }
        file.extend_from_slice(strings);
        file
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_program_names_its_loader() {
        let exe = std::env::current_exe().unwrap();
        let Kind::Dynamic { interpreter } = read(&exe).unwrap() else {
            panic!("test binaries are dynamically linked");
        };
        assert!(interpreter.is_absolute(), "{}", interpreter.display());
        assert!(interpreter.exists(), "{}", interpreter.display());
        // The loader itself has none, and is position independent.
        assert_eq!(
            read(&interpreter).unwrap(),
            Kind::Static {
                position_independent: true
            }
        );
    }

    #[test]
    fn a_script_or_short_file_is_not_elf() {
        assert_eq!(parse(&b"#!/bin/sh\necho hi\n"[..]).unwrap(), Kind::NotElf);
        assert_eq!(parse(&b"\x7fEL"[..]).unwrap(), Kind::NotElf);
        assert_eq!(parse(&b""[..]).unwrap(), Kind::NotElf);
    }

    #[test]
    fn the_sample_reads_back() {
        let file = sample::dynamic(b"/lib/ld.so");
        assert_eq!(
            parse(&file[..]).unwrap(),
            Kind::Dynamic {
                interpreter: PathBuf::from("/lib/ld.so")
            }
        );
    }

    /// The attack: a 64-bit file whose class byte says 32-bit made the old parser read a fake
    /// 32-bit program header naming a folder, while the kernel ran the real one.
    #[test]
    fn a_lying_class_or_byte_order_is_refused() {
        let mut file = sample::dynamic(b"/lib/ld.so");
        file[4] = 1;
        assert!(matches!(
            parse(&file[..]),
            Err(ElfError::Class { found: 1 })
        ));
        let mut file = sample::dynamic(b"/lib/ld.so");
        file[5] = 2;
        assert!(matches!(
            parse(&file[..]),
            Err(ElfError::ByteOrder { found: 2 })
        ));
    }

    #[test]
    fn fields_the_kernel_checks_are_checked() {
        let with = |at: usize, bytes: &[u8]| {
            let mut file = sample::dynamic(b"/lib/ld.so");
            file[at..at + bytes.len()].copy_from_slice(bytes);
            parse(&file[..])
        };
        assert!(matches!(
            with(16, &1u16.to_le_bytes()),
            Err(ElfError::Type { found: 1 })
        ));
        assert!(matches!(
            with(18, &3u16.to_le_bytes()),
            Err(ElfError::Machine { found: 3 })
        ));
        assert!(matches!(
            with(54, &32u16.to_le_bytes()),
            Err(ElfError::HeaderSize { found: 32 })
        ));
        assert!(matches!(
            with(56, &0u16.to_le_bytes()),
            Err(ElfError::HeaderCount { count: 0 })
        ));
        assert!(matches!(
            with(56, &2000u16.to_le_bytes()),
            Err(ElfError::HeaderCount { count: 2000 })
        ));
        assert!(matches!(
            with(56, &2u16.to_le_bytes()),
            Err(ElfError::Truncated { .. })
        ));
        // PT_INTERP of 1 byte, and one whose last byte is not NUL.
        assert!(matches!(
            with(HEADER_SIZE + 32, &1u64.to_le_bytes()),
            Err(ElfError::InterpreterPath { len: 1, .. })
        ));
        assert!(matches!(
            with(HEADER_SIZE + 32, &5u64.to_le_bytes()),
            Err(ElfError::InterpreterPath { len: 5, .. })
        ));
    }

    #[test]
    fn the_path_ends_at_its_first_nul() {
        let file = sample::dynamic(b"/lib/ld.so\0/etc");
        assert_eq!(
            parse(&file[..]).unwrap(),
            Kind::Dynamic {
                interpreter: PathBuf::from("/lib/ld.so")
            }
        );
    }
}
