//! What the fuzz targets check, apart from libFuzzer: the targets in `fuzz/fuzz_targets/` call
//! these functions, and this crate's tests (`tests/wire_corpus.rs`, `tests/elf_corpus.rs`) run
//! the committed corpus through the very same checks on stable, so an input that once crashed
//! cannot come back unnoticed and no nightly is needed. `sandbox-check`'s edge-case tests give
//! the wire corpus to a real launcher with [`wire`]'s readings.
//!
//! A check panics when a property fails, which the fuzzer reports as a crash.
#![forbid(unsafe_code)]

#[cfg(target_os = "linux")]
pub mod elf;
#[cfg(unix)]
pub mod wire;
