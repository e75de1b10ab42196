//! A program's ELF header as the launcher reads it to find its loader: any bytes give a reading
//! the kernel would share, or a typed error (see `sandbox_fuzz_checks::elf`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = sandbox_fuzz_checks::elf::check_elf(data);
});
