//! The properties the `elf_parse` target checks.
//!
//! An input is a whole file. `sandbox_linux::elf::parse` must never panic, and whatever it
//! accepts must be read one way only: a header whose class or byte order could be read another
//! way, or that the kernel's native loader would refuse, gives an error, never a loader path.

use sandbox_linux::elf::{self, ElfError, Kind, NATIVE_MACHINE};

/// Parses `data` and checks the result; returns it for the corpus test to compare with the
/// file's name.
pub fn check_elf(data: &[u8]) -> Result<Kind, ElfError> {
    let parsed = elf::parse(data);
    match &parsed {
        Ok(Kind::NotElf) => assert!(
            data.len() < 4 || &data[..4] != b"\x7fELF",
            "a file with the ELF magic was taken for something else"
        ),
        Ok(Kind::Static { .. }) | Ok(Kind::Dynamic { .. }) => {
            assert_eq!(data[4], 2, "accepted a header whose class is not 64-bit");
            assert_eq!(data[5], 1, "accepted a header that is not little-endian");
            let machine = u16::from_le_bytes([data[18], data[19]]);
            assert_eq!(machine, NATIVE_MACHINE, "accepted another machine's file");
            let e_type = u16::from_le_bytes([data[16], data[17]]);
            assert!(e_type == 2 || e_type == 3, "accepted type {e_type}");
            assert_eq!(u16::from_le_bytes([data[54], data[55]]), 56);
        }
        Err(_) => {}
    }
    if let Ok(Kind::Dynamic { interpreter }) = &parsed {
        let bytes = interpreter.as_os_str().as_encoded_bytes();
        assert!(!bytes.contains(&0), "a loader path holds a NUL");
        assert!(bytes.len() < 4096, "a loader path longer than PATH_MAX");
    }
    // The same bytes followed by anything read the same: nothing is read past what the
    // headers name.
    let mut longer = data.to_vec();
    longer.extend_from_slice(&[0xff; 64]);
    if let (Ok(a), Ok(b)) = (&parsed, elf::parse(&longer[..])) {
        assert_eq!(*a, b, "trailing bytes changed the reading");
    }
    parsed
}
