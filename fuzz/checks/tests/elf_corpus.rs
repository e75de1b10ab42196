//! The `elf_parse` fuzz corpus as regression tests on stable: every committed input of
//! `fuzz/corpus/elf_parse/` goes through the checks the fuzz target makes
//! (`sandbox_fuzz_checks::elf`), and must give what its name says: `ok-...` a
//! reading, `err-<kind>-...` that error. A file whose name holds another architecture than this
//! one must give the machine error instead.
#![cfg(target_os = "linux")]

use sandbox_fuzz_checks::elf as elf_checks;

use sandbox_linux::elf::ElfError;

fn kind(error: &ElfError) -> &'static str {
    match error {
        ElfError::Read(_) => "read",
        ElfError::Class { .. } => "class",
        ElfError::ByteOrder { .. } => "byte-order",
        ElfError::Machine { .. } => "machine",
        ElfError::Type { .. } => "type",
        ElfError::HeaderSize { .. } => "header-size",
        ElfError::HeaderCount { .. } => "header-count",
        ElfError::Truncated { .. } => "truncated",
        ElfError::InterpreterPath { .. } => "interpreter",
        _ => "unknown",
    }
}

#[test]
fn every_corpus_file_gives_what_its_name_says() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/elf_parse");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        let foreign = ["x86_64", "aarch64"]
            .iter()
            .any(|arch| name.ends_with(arch) && *arch != std::env::consts::ARCH);
        let got = elf_checks::check_elf(&data);
        match (name.strip_prefix("err-"), &got) {
            _ if foreign => assert_eq!(got.as_ref().map_err(kind).err(), Some("machine"), "{name}"),
            (None, Ok(_)) if name.starts_with("ok-") => {}
            (Some(rest), Err(e)) if rest.starts_with(kind(e)) => {}
            _ => panic!("{name}: got {got:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} corpus files");
}
