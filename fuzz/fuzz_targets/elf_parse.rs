//! A program's ELF header as the launcher reads it to find its loader: any bytes give a reading
//! the kernel would share, or a typed error (see `src/elf_checks.rs`).
#![no_main]

#[path = "../src/elf_checks.rs"]
mod elf_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = elf_checks::check_elf(data);
});
