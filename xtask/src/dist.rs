//! `cargo xtask dist`: the released `sandbox-check`, linked statically as a position-independent
//! executable (static PIE).
//!
//! A dynamically linked launcher spends most of its start in the loader: it maps the C library
//! and `libgcc_s`, resolves every imported symbol (`BIND_NOW`) and applies some 3,300
//! relocations, and the CLI path starts two such processes. Linked with the C library inside
//! (`-C target-feature=+crt-static`, the gnu target's default relocation model `pie` kept) the
//! executable has no loader to run and is still loaded at a random address (ASLR).
//!
//! The target triple is named explicitly: with `--target`, `RUSTFLAGS` reach the target's crates
//! only, not proc-macros, which cannot be linked statically. An application that embeds the
//! library and launches often builds itself the same way (see docs/performance.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cmd::Failed;

/// The target and `RUSTFLAGS` of a static PIE build for this host, `RUSTFLAGS` from the
/// environment kept.
pub fn static_build() -> Result<(String, String), Failed> {
    let target = host_triple()?;
    let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    let flags = format!("{flags} -C target-feature=+crt-static -C relocation-model=pie")
        .trim()
        .to_owned();
    Ok((target, flags))
}

/// The host's target triple, as `rustc -vV` reports it.
pub fn host_triple() -> Result<String, Failed> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|e| Failed(format!("{rustc} -vV: {e}")))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| Failed(format!("{rustc} -vV named no host")))
}

/// Builds the released `sandbox-check`, checks that it is a static PIE, and writes its manual
/// page beside it.
pub fn run() -> Result<(), Failed> {
    let (target, flags) = static_build()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let args = [
        "build",
        "--release",
        "-p",
        "sandbox-check",
        "--target",
        &target,
    ];
    println!("\n==> RUSTFLAGS='{flags}' {cargo} {}", args.join(" "));
    let status = Command::new(&cargo)
        .args(args)
        .env("RUSTFLAGS", &flags)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| Failed(format!("{cargo}: {e}")))?;
    if !status.success() {
        return Err(Failed(format!("cargo build: {status}")));
    }
    let binary = target_dir()
        .join(&target)
        .join("release")
        .join("sandbox-check");
    check_static_pie(&binary)?;
    println!("{}: a static PIE", binary.display());
    let page = write_man_page(&binary)?;
    println!("{}: its manual page", page.display());
    Ok(())
}

/// Writes `sandbox-check.1` beside `binary`, as the binary prints it (`--man`, generated from the
/// parser's own definitions), so that the page never says other than `--help`.
fn write_man_page(binary: &Path) -> Result<PathBuf, Failed> {
    let output = Command::new(binary)
        .arg("--man")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Failed(format!("{} --man: {e}", binary.display())))?;
    if !output.status.success() || !output.stdout.starts_with(b".ie") {
        return Err(Failed(format!(
            "{} --man: {}: {}",
            binary.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let page = binary.with_file_name("sandbox-check.1");
    std::fs::write(&page, &output.stdout)
        .map_err(|e| Failed(format!("writing {}: {e}", page.display())))?;
    Ok(page)
}

/// The target directory: `CARGO_TARGET_DIR`, or `target` in the workspace.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("xtask lies in the workspace")
                .join("target")
        },
        PathBuf::from,
    )
}

/// An ELF executable of type `ET_DYN` (position-independent, so the kernel randomises its
/// address) with no `PT_INTERP` (no loader, no shared library).
pub fn check_static_pie(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path).map_err(|e| Failed(format!("{}: {e}", path.display())))?;
    match elf_kind(&bytes) {
        Some((3, false)) => Ok(()),
        Some((kind, interp)) => Err(Failed(format!(
            "{}: ELF type {kind}{}; a static PIE is type 3 (ET_DYN) without a loader",
            path.display(),
            if interp {
                " with a loader (PT_INTERP)"
            } else {
                ""
            }
        ))),
        None => Err(Failed(format!("{}: not a 64-bit ELF file", path.display()))),
    }
}

/// A 64-bit little-endian ELF file's type, and whether a program header names a loader.
fn elf_kind(bytes: &[u8]) -> Option<(u16, bool)> {
    const PT_INTERP: u32 = 3;
    if bytes.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    let kind = u16_at(16)?;
    let phoff = usize::try_from(u64_at(32)?).ok()?;
    let phentsize = usize::from(u16_at(54)?);
    let phnum = usize::from(u16_at(56)?);
    let mut interp = false;
    for i in 0..phnum {
        if u32_at(phoff + i * phentsize)? == PT_INTERP {
            interp = true;
        }
    }
    Some((kind, interp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_is_read_as_an_elf_file() {
        let exe = std::env::current_exe().unwrap();
        let bytes = std::fs::read(exe).unwrap();
        let (kind, _) = elf_kind(&bytes).unwrap();
        assert!(kind == 2 || kind == 3, "{kind}");
        assert_eq!(elf_kind(b"#!/bin/sh\n"), None);
    }
}
