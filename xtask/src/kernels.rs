//! `cargo xtask kernels`: boots Debian's kernels under QEMU (TCG) with a static `sandbox-check`
//! in a small initramfs, and asserts what it printed and how it exited on each.
//!
//! 1. x86_64, Linux 6.1 as shipped (Landlock ABI 2): the self-test exits 1 and every launch exits
//!    97 with "Landlock ABI 2 found, ABI 3 needed"; no program's output or file appears.
//! 2. x86_64, Linux 6.1 booted with an `lsm=` that leaves Landlock out: the same, with "this
//!    kernel has no Landlock".
//! 3. x86_64, Linux 6.12 (ABI 6): the self-test passes and names the best-effort rights; a
//!    confined busybox is refused a write, a socket and a process start, each with its errno.
//! 4. aarch64, Linux 6.12 (ABI 6): as case 3, with the aarch64 filters; and in both 3 and 4
//!    `clone3` answers `ENOSYS` under confinement (`EINVAL` without), and a thread still starts.
//!
//! On every kernel, `core_pattern` is then a pipe to a helper that leaves a marker: an
//! unconfined crash starts it, a confined one must not (the launcher's core limit of 1); and a
//! full root's real-time priority limit of 99 reaches the program as 0. On x86_64, the shipped
//! profiles' work runs last: the host's python3, perl, node and sqlite3 under their profiles
//! (`profiles.rs`). On aarch64, the probe list (`sandbox-linux/tests/probes/list.rs`, written by
//! hand apart from the refusal table) runs last through the real binary: every probe of that
//! architecture the launch can make (not the other architecture's entry, which kills, nor the
//! supervisor's opt-in) is made by `probe syscalls` under `sandbox-check`, and each must get its
//! listed answer; one the filter lets through must get the kernel's answer to the same call
//! unconfined (the control), and the control must answer every refused probe otherwise, unless
//! the list marks it kernel-guarded. x86_64's list runs on the host
//! (`examples/sandbox-check/tests/probes.rs`).
//!
//! The guest runs the same commands on every kernel (`xtask/kernels/cases.sh`); this file says
//! what each must print, line for line, and with which exit status. Every refused action has an
//! unconfined control in the same guest that must work, so a refusal is the sandbox's doing.
//!
//! What it needs it installs: Debian's `qemu-system-x86`, `qemu-system-arm` and `busybox-static`
//! (`apt-get install`), the kernels and the arm64 busybox (`apt-get download`, after
//! `dpkg --add-architecture arm64`), and the two musl targets (`rustup target add`). Downloads
//! and the extracted kernels are cached under `target/kernels/`, so a second run only rebuilds
//! `sandbox-check` (when it changed) and boots.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cmd::{self, Failed, Tally};

mod cpio;
mod profiles;

use cpio::{failed, Cpio};

/// PID 1 of the guest.
const INIT: &str = include_str!("../kernels/init");
/// The commands run on every kernel.
const CASES: &str = include_str!("../kernels/cases.sh");
/// The core-dump helper `core_pattern` names in the crash cases: it only leaves a marker.
const CORE_HELPER: &str = "#!/bin/busybox sh\n/bin/busybox touch /tmp/core-helper-ran-$1\n";
/// How long one boot may take, cases included, before it is stopped and failed. A boot with its
/// cases takes 12 to 20 s here on x86_64 (which runs the profiles' programs), 7 to 10 on aarch64.
const BOOT_TIMEOUT: Duration = Duration::from_secs(240);
/// The Landlock-less `lsm=` of case 2: Debian's list without `landlock`.
const LSM_WITHOUT_LANDLOCK: &str = "lsm=lockdown,yama,integrity,apparmor";
/// How many console lines a failure shows.
const TAIL_LINES: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// As `uname -m` and Rust name it.
    fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// As Debian names it.
    fn debian(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Aarch64 => "arm64",
        }
    }

    fn target(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64-unknown-linux-musl",
            Arch::Aarch64 => "aarch64-unknown-linux-musl",
        }
    }

    /// `e_machine` of its ELF files.
    fn elf_machine(self) -> u16 {
        match self {
            Arch::X86_64 => 62,
            Arch::Aarch64 => 183,
        }
    }

    /// The linker, where the target's default (a C compiler for that architecture) is missing.
    fn linker(self) -> Option<&'static str> {
        match self {
            Arch::X86_64 => None,
            Arch::Aarch64 => Some("rust-lld"),
        }
    }

    fn qemu(self) -> (&'static str, &'static [&'static str], &'static str) {
        match self {
            Arch::X86_64 => ("qemu-system-x86_64", &["-accel", "tcg"], "console=ttyS0"),
            Arch::Aarch64 => (
                "qemu-system-aarch64",
                &["-M", "virt", "-cpu", "max,pauth-impdef=on", "-accel", "tcg"],
                "console=ttyAMA0",
            ),
        }
    }
}

/// A kernel to fetch: the Debian meta package whose dependency names the current image.
#[derive(Debug, Clone, Copy)]
struct Kernel {
    id: &'static str,
    arch: Arch,
    meta: &'static str,
    /// The release must start with this (`6.1.0-57-cloud-amd64` for `6.1.`).
    series: &'static str,
}

const KERNELS: [Kernel; 3] = [
    Kernel {
        id: "x86_64-6.1",
        arch: Arch::X86_64,
        meta: "linux-image-cloud-amd64",
        series: "6.1.",
    },
    Kernel {
        id: "x86_64-6.12",
        arch: Arch::X86_64,
        meta: "linux-image-6.12-cloud-amd64",
        series: "6.12.",
    },
    Kernel {
        id: "aarch64-6.12",
        arch: Arch::Aarch64,
        meta: "linux-image-6.12-cloud-arm64",
        series: "6.12.",
    },
];

/// What the booted kernel's Landlock must look like to `sandbox-check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landlock {
    /// Built in and enabled, with this ABI, which is below 3: every launch refused.
    Old(u32),
    /// Not in `lsm=`: every launch refused.
    Absent,
    /// This ABI, 3 or later: launches work, confined.
    Usable(u32),
}

/// One boot and what it must show.
#[derive(Debug, Clone, Copy)]
struct Boot {
    case: u32,
    title: &'static str,
    kernel: usize,
    cmdline: &'static str,
    landlock: Landlock,
}

const BOOTS: [Boot; 4] = [
    Boot {
        case: 1,
        title: "x86_64 Linux 6.1 as shipped (Landlock ABI 2)",
        kernel: 0,
        cmdline: "",
        landlock: Landlock::Old(2),
    },
    Boot {
        case: 2,
        title: "x86_64 Linux 6.1 booted with lsm= leaving Landlock out",
        kernel: 0,
        cmdline: LSM_WITHOUT_LANDLOCK,
        landlock: Landlock::Absent,
    },
    Boot {
        case: 3,
        title: "x86_64 Linux 6.12 (Landlock ABI 6)",
        kernel: 1,
        cmdline: "",
        landlock: Landlock::Usable(6),
    },
    Boot {
        case: 4,
        title: "aarch64 Linux 6.12 (Landlock ABI 6)",
        kernel: 2,
        cmdline: "",
        landlock: Landlock::Usable(6),
    },
];

/// A fetched kernel.
#[derive(Debug, Clone)]
struct Image {
    vmlinuz: PathBuf,
    /// `uname -r` of it, from the image's file name.
    release: String,
    /// The Debian package it came from, `name_version_arch.deb`.
    package: String,
}

/// One probe of the list as the guest makes it.
#[derive(Debug, Clone)]
struct GuestProbe {
    /// Its index in the list, which the guest's answers carry.
    index: usize,
    /// How reports name it.
    label: String,
    /// The line `probe syscalls` takes.
    line: String,
    /// The answer the confined call must get (`ok`, or an errno's number); `None` where the
    /// filter lets it through: then the control's.
    want: Option<String>,
    /// Whether the launch opts in to local socket pairs.
    sockets: bool,
    /// Whether the list says the kernel alone answers as the filter does.
    guarded: bool,
}

/// The aarch64 probes the guest makes through the real binary.
#[cfg(target_os = "linux")]
fn guest_probes() -> Vec<GuestProbe> {
    use crate::mutants::list::{Call, Expect, With, A, PROBES};
    use sandbox_linux::syscalls::Arch as Table;
    PROBES
        .iter()
        .enumerate()
        .filter(|(_, p)| !matches!(p.call, Call::Foreign(_)))
        .filter(|(_, p)| p.with != With::ScratchMetadata)
        // The network's rows answer as the opt-in does only in a launch with hosts, whose proxy
        // and namespace the guest's busybox world does not make: they are probed on the host
        // (`tests/network.rs`, `tests/probes.rs`) and by the evaluator for both architectures.
        .filter(|(_, p)| p.with != With::Network)
        .filter_map(|(index, probe)| {
            let (nr, _) = probe.number(Table::Aarch64)?;
            let mut line = format!("{index} {nr}");
            for (at, value) in probe.values(0).iter().enumerate() {
                let token = match probe.args.get(at) {
                    Some(A::Pid) => "P".to_owned(),
                    Some(A::NegPid) => "-P".to_owned(),
                    _ => (*value as i64).to_string(),
                };
                line.push(' ');
                line.push_str(&token);
            }
            let forks = matches!(probe.name(), Some("fork" | "vfork"));
            line.push_str(if forks { " 1" } else { " 0" });
            let want = match probe.expect {
                Expect::Refused(errno) => Some(errno.to_string()),
                Expect::Pretend => Some("ok".to_owned()),
                Expect::Killed | Expect::Passes => None,
            };
            Some(GuestProbe {
                index,
                label: probe.label(),
                line,
                want,
                sockets: probe.with == With::LocalSocketPairs,
                guarded: probe.kernel_guarded.is_some(),
            })
        })
        .collect()
}

/// The list is read through the refusal table's crate, which the hunt for mutants builds on
/// Linux only; the guests boot on Linux only too.
#[cfg(not(target_os = "linux"))]
fn guest_probes() -> Vec<GuestProbe> {
    Vec::new()
}

/// The lines `probe syscalls` takes for these probes.
fn probe_listing<'a>(probes: impl Iterator<Item = &'a GuestProbe>) -> String {
    probes.map(|p| format!("{}\n", p.line)).collect()
}

/// The profile of the launch whose probes opt in to local socket pairs: that opt-in alone.
const SOCKETS_PROFILE: &str = "[allow]\nlocal_socket_pairs = true\n";

/// What the guest needs for one architecture: busybox, sandbox-check and the probe, packed.
#[derive(Debug, Clone)]
struct Guest {
    initramfs: PathBuf,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Fetches, builds and boots everything; fails if any case showed anything but what it must.
pub fn run() -> Result<(), Failed> {
    let started = Instant::now();
    let root = root();
    let cache = root.join("target").join("kernels");
    std::fs::create_dir_all(&cache)
        .map_err(|e| failed(format!("creating {}: {e}", cache.display())))?;
    let mut tally = Tally::default();

    // The profiles' work runs the host's python3, perl, node and sqlite3 (profiles.rs).
    crate::ci::ensure_python()?;
    let images = fetch(&mut tally, &cache)?;
    let fetched = started.elapsed();
    let mut guests = Vec::new();
    for arch in Arch::ALL {
        guests.push(build_guest(&mut tally, &root, &cache, arch)?);
    }
    let built = started.elapsed();

    let logs = cache.join("logs");
    std::fs::create_dir_all(&logs)
        .map_err(|e| failed(format!("creating {}: {e}", logs.display())))?;
    let (mut passed, mut failures) = (0usize, Vec::new());
    for boot in &BOOTS {
        let kernel = &KERNELS[boot.kernel];
        let image = &images[boot.kernel];
        let guest = &guests[Arch::ALL
            .iter()
            .position(|a| *a == kernel.arch)
            .expect("listed")];
        println!(
            "\n==> case {}: {} [{}]",
            boot.case, boot.title, image.package
        );
        let boot_started = Instant::now();
        let console = match boot_guest(kernel.arch, image, guest, boot.cmdline) {
            Ok(console) => console,
            Err(e) => {
                println!("FAIL case {}: {e}", boot.case);
                let first = e.0.lines().next().unwrap_or_default().to_owned();
                failures.push(format!("case {}: {first}", boot.case));
                continue;
            }
        };
        let log = logs.join(format!("case{}.log", boot.case));
        let _ = std::fs::write(&log, &console);
        let results = check_boot(boot, kernel.arch, image, &console);
        let mut boot_failed = false;
        for (step, result) in &results {
            match result {
                Ok(()) => {
                    passed += 1;
                    println!("  ok   {step}");
                }
                Err(why) => {
                    boot_failed = true;
                    println!("  FAIL {step}: {why}");
                    failures.push(format!("case {} {step}", boot.case));
                }
            }
        }
        if boot_failed {
            println!(
                "  console ({}), last {TAIL_LINES} lines:\n{}",
                log.display(),
                tail(&console, TAIL_LINES)
            );
        }
        println!(
            "<== case {}: {} checks in {:.1?}",
            boot.case,
            results.len(),
            boot_started.elapsed()
        );
    }

    println!(
        "\n==== kernels: fetched in {fetched:.1?}, built by {built:.1?}, done in {:.1?}",
        started.elapsed()
    );
    println!(
        "test result: {}. {passed} passed; {} failed",
        if failures.is_empty() { "ok" } else { "FAILED" },
        failures.len()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failed(format!(
            "kernels: {} checks failed (each is shown above, with the console's tail):\n  {}",
            failures.len(),
            failures.join("\n  ")
        )))
    }
}

// ---- fetching -------------------------------------------------------------------------------

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && out.stdout == b"install ok installed")
}

/// Installs the host's packages and fetches the kernels and the arm64 busybox where the cache
/// lacks them.
fn fetch(tally: &mut Tally, cache: &Path) -> Result<Vec<Image>, Failed> {
    // strace finds what the profiles' work opens (profiles.rs).
    let host_packages = [
        "qemu-system-x86",
        "qemu-system-arm",
        "busybox-static",
        "strace",
    ];
    let missing: Vec<&str> = host_packages
        .iter()
        .copied()
        .filter(|p| !installed(p))
        .collect();
    let cached: Vec<Option<Image>> = KERNELS.iter().map(|k| cached_image(cache, k)).collect();
    let busybox_arm64 = cache.join("busybox-aarch64");
    let download = cached.iter().any(Option::is_none) || !busybox_arm64.is_file();
    let apt_env = [("DEBIAN_FRONTEND", "noninteractive")];

    if download {
        let foreign = Command::new("dpkg")
            .arg("--print-foreign-architectures")
            .output()
            .map_err(|e| failed(format!("dpkg --print-foreign-architectures: {e}")))?;
        if !String::from_utf8_lossy(&foreign.stdout)
            .lines()
            .any(|a| a.trim() == "arm64")
        {
            cmd::run(tally, "dpkg", &["--add-architecture", "arm64"], &[])?;
        }
    }
    if download || !missing.is_empty() {
        cmd::run(tally, "apt-get", &["update"], &apt_env)?;
    }
    if !missing.is_empty() {
        let mut args = vec!["install", "-y", "--no-install-recommends"];
        args.extend(&missing);
        cmd::run(tally, "apt-get", &args, &apt_env)?;
    }

    let debs = cache.join("debs");
    std::fs::create_dir_all(&debs)
        .map_err(|e| failed(format!("creating {}: {e}", debs.display())))?;
    let mut images = Vec::new();
    for (kernel, cached) in KERNELS.iter().zip(cached) {
        let image = match cached {
            Some(image) => image,
            None => download_kernel(cache, &debs, kernel)?,
        };
        if !image.release.starts_with(kernel.series) {
            return Err(failed(format!(
                "{}: {} is Linux {}, not {}x",
                kernel.id, image.package, image.release, kernel.series
            )));
        }
        println!(
            "kernel {}: {} ({})",
            kernel.id, image.release, image.package
        );
        images.push(image);
    }
    if !busybox_arm64.is_file() {
        let deb = apt_download(&debs, "busybox-static:arm64")?;
        let dir = extract(&deb, &cache.join("busybox-arm64.tmp"), "./bin/busybox")?;
        std::fs::rename(dir.join("bin/busybox"), &busybox_arm64)
            .map_err(|e| failed(format!("moving the arm64 busybox: {e}")))?;
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(images)
}

fn cached_image(cache: &Path, kernel: &Kernel) -> Option<Image> {
    let dir = cache.join(kernel.id);
    let vmlinuz = dir.join("vmlinuz");
    let release = std::fs::read_to_string(dir.join("release")).ok()?;
    let package = std::fs::read_to_string(dir.join("package")).ok()?;
    vmlinuz.is_file().then(|| Image {
        vmlinuz,
        release: release.trim().to_owned(),
        package: package.trim().to_owned(),
    })
}

/// The image package the meta package currently depends on: the `-unsigned` one where Debian
/// has it (the issue names those; the signed image only adds a signature QEMU ignores).
fn resolve(kernel: &Kernel) -> Result<String, Failed> {
    let qualify = |name: &str| format!("{name}:{}", kernel.arch.debian());
    let meta = qualify(kernel.meta);
    let out = Command::new("apt-cache")
        .args(["depends", &meta])
        .output()
        .map_err(|e| failed(format!("apt-cache depends {meta}: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let image = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends: "))
        .map(|d| d.split(':').next().unwrap_or(d).trim())
        .find(|d| d.starts_with("linux-image-"))
        .ok_or_else(|| {
            failed(format!(
                "apt-cache depends {meta} names no linux-image package (the configured sources do not offer it?): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        })?;
    let unsigned = qualify(&format!("{image}-unsigned"));
    let has_unsigned = Command::new("apt-cache")
        .args(["show", "--no-all-versions", &unsigned])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    Ok(if has_unsigned {
        unsigned
    } else {
        qualify(image)
    })
}

fn apt_download(debs: &Path, package: &str) -> Result<PathBuf, Failed> {
    let name = package.split(':').next().unwrap_or(package);
    let find = || -> Option<PathBuf> {
        std::fs::read_dir(debs)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{name}_")) && n.ends_with(".deb"))
            })
    };
    if let Some(deb) = find() {
        return Ok(deb);
    }
    let debs_str = debs.to_string_lossy().into_owned();
    // apt-get download writes to the current directory. As root, apt hands the download to its
    // `_apt` user, who may not write to target/: the option keeps it root's.
    let args = ["download", "-o", "APT::Sandbox::User=root", package];
    println!("\n==> (cd {debs_str} && apt-get {})", args.join(" "));
    let status = Command::new("apt-get")
        .args(args)
        .current_dir(debs)
        .status()
        .map_err(|e| failed(format!("apt-get download {package}: {e}")))?;
    if !status.success() {
        return Err(failed(format!(
            "apt-get download {package} (in {debs_str}): {status}"
        )));
    }
    find().ok_or_else(|| {
        failed(format!(
            "apt-get download {package} left no {name}_*.deb in {debs_str}"
        ))
    })
}

/// Extracts `member` (a path as `dpkg-deb --fsys-tarfile` lists it, or a folder) of `deb` into
/// a fresh `dir`.
fn extract(deb: &Path, dir: &Path, member: &str) -> Result<PathBuf, Failed> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| failed(format!("creating {}: {e}", dir.display())))?;
    let mut dpkg = Command::new("dpkg-deb")
        .arg("--fsys-tarfile")
        .arg(deb)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("dpkg-deb --fsys-tarfile {}: {e}", deb.display())))?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dir)
        .arg(member)
        .stdin(dpkg.stdout.take().expect("piped"))
        .status()
        .map_err(|e| failed(format!("tar: {e}")))?;
    let dpkg = dpkg.wait().map_err(|e| failed(format!("dpkg-deb: {e}")))?;
    if !tar.success() || !dpkg.success() {
        return Err(failed(format!(
            "extracting {member} from {}: dpkg-deb {dpkg}, tar {tar}",
            deb.display()
        )));
    }
    Ok(dir.to_path_buf())
}

fn download_kernel(cache: &Path, debs: &Path, kernel: &Kernel) -> Result<Image, Failed> {
    let package = resolve(kernel)?;
    let deb = apt_download(debs, &package)?;
    let dir = cache.join(kernel.id);
    let tmp = extract(&deb, &cache.join(format!("{}.tmp", kernel.id)), "./boot")?;
    let boot = tmp.join("boot");
    let mut release = None;
    for entry in std::fs::read_dir(&boot).map_err(|e| failed(format!("{}: {e}", boot.display())))? {
        let name = entry
            .map_err(|e| failed(e.to_string()))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if let Some(r) = name.strip_prefix("vmlinuz-") {
            release = Some(r.to_owned());
        }
    }
    let release =
        release.ok_or_else(|| failed(format!("{} has no boot/vmlinuz-*", deb.display())))?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| failed(format!("creating {}: {e}", dir.display())))?;
    let mut vmlinuz = std::fs::read(boot.join(format!("vmlinuz-{release}")))
        .map_err(|e| failed(e.to_string()))?;
    if vmlinuz.starts_with(&[0x1f, 0x8b]) {
        // A gzip'd arm64 Image: QEMU boots the plain one.
        let mut gunzip = Command::new("gzip")
            .args(["-dc"])
            .arg(boot.join(format!("vmlinuz-{release}")))
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("gzip -dc: {e}")))?;
        let mut plain = Vec::new();
        gunzip
            .stdout
            .take()
            .expect("piped")
            .read_to_end(&mut plain)
            .map_err(|e| failed(e.to_string()))?;
        gunzip.wait().map_err(|e| failed(e.to_string()))?;
        vmlinuz = plain;
    }
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes)
            .map_err(|e| failed(format!("writing {}: {e}", dir.join(name).display())))
    };
    write("vmlinuz", &vmlinuz)?;
    if let Ok(config) = std::fs::read(boot.join(format!("config-{release}"))) {
        write("config", &config)?;
    }
    let deb_name = deb
        .file_name()
        .expect("a file")
        .to_string_lossy()
        .into_owned();
    write("package", deb_name.as_bytes())?;
    // Last, so a run stopped half way fetches again.
    write("release", release.as_bytes())?;
    let _ = std::fs::remove_dir_all(&tmp);
    cached_image(cache, kernel)
        .ok_or_else(|| failed(format!("{}: the cache did not take", kernel.id)))
}

// ---- the guest ------------------------------------------------------------------------------

/// Checks that `path` is a static ELF executable for `arch`: the guest has no loader.
fn check_static(path: &Path, arch: Arch) -> Result<(), Failed> {
    let bytes =
        std::fs::read(path).map_err(|e| failed(format!("reading {}: {e}", path.display())))?;
    let bad = |why: &str| failed(format!("{}: {why}", path.display()));
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return Err(bad("not a 64-bit little-endian ELF file"));
    }
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let machine = u16_at(0x12);
    if machine != arch.elf_machine() {
        return Err(bad(&format!(
            "built for ELF machine {machine}, not {}",
            arch.name()
        )));
    }
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().expect("8 bytes")) as usize;
    let (phentsize, phnum) = (usize::from(u16_at(0x36)), usize::from(u16_at(0x38)));
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        let kind = bytes
            .get(at..at + 4)
            .ok_or_else(|| bad("truncated program headers"))?;
        if kind == 3u32.to_le_bytes() {
            return Err(bad(
                "dynamically linked (it has PT_INTERP); the guest has no loader",
            ));
        }
    }
    Ok(())
}

fn build_guest(tally: &mut Tally, root: &Path, cache: &Path, arch: Arch) -> Result<Guest, Failed> {
    let target = arch.target();
    cmd::run(tally, "rustup", &["target", "add", target], &[])?;
    let target_dir = root.join("target");
    let target_dir_str = target_dir.to_string_lossy().into_owned();
    let linker_var = format!(
        "CARGO_TARGET_{}_LINKER",
        target.to_uppercase().replace('-', "_")
    );
    let mut env = vec![("CARGO_TARGET_DIR", target_dir_str.as_str())];
    if let Some(linker) = arch.linker() {
        env.push((linker_var.as_str(), linker));
    }
    // x86_64's is built as the released one is (static glibc, `cargo xtask dist`): a launcher
    // forked into its cgroup (clone3) is trusted to glibc only, so a musl build would leave that
    // path unbooted. Debian has no static glibc for arm64 on this host, so aarch64's is musl.
    let (checked_target, flags) = match arch {
        Arch::X86_64 => {
            let (target, flags) = crate::dist::static_build()?;
            (target, Some(flags))
        }
        Arch::Aarch64 => (target.to_owned(), None),
    };
    if let Some(flags) = &flags {
        env.push(("RUSTFLAGS", flags.as_str()));
    }
    cmd::run(
        tally,
        "cargo",
        &[
            "build",
            "-p",
            "sandbox-check",
            "-p",
            "threaded-launcher",
            "--target",
            &checked_target,
        ],
        &env,
    )?;
    let built = target_dir.join(&checked_target).join("debug");
    let sandbox_check = built.join("sandbox-check");
    check_static(&sandbox_check, arch)?;
    // An application of the library (`Sandbox::run`, alone, with threads, or through a launch
    // server), for the attach steps.
    let threaded_launcher = built.join("threaded-launcher");
    check_static(&threaded_launcher, arch)?;

    let build = cache.join("build");
    std::fs::create_dir_all(&build)
        .map_err(|e| failed(format!("creating {}: {e}", build.display())))?;
    let source = root.join("xtask").join("kernels").join("probe.rs");
    let probe = build.join(format!("probe-{}", arch.name()));
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if mtime(&probe).is_none() || mtime(&probe) < mtime(&source) {
        let mut args: Vec<String> = [
            "--edition",
            "2021",
            "-C",
            "opt-level=2",
            "-C",
            "strip=symbols",
            "--target",
            target,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        if let Some(linker) = arch.linker() {
            args.extend(["-C".to_owned(), format!("linker={linker}")]);
        }
        args.extend([
            "-o".to_owned(),
            probe.to_string_lossy().into_owned(),
            source.to_string_lossy().into_owned(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cmd::run(tally, "rustc", &args, &[])?;
    }
    check_static(&probe, arch)?;

    let busybox = match arch {
        Arch::X86_64 => PathBuf::from("/bin/busybox"),
        Arch::Aarch64 => cache.join("busybox-aarch64"),
    };
    check_static(&busybox, arch)?;

    let initramfs = build.join(format!("initramfs-{}.cpio", arch.name()));
    let mut cpio = Cpio::default();
    for dir in ["bin", "dev", "proc", "sys", "tmp", "root"] {
        cpio.dir(dir);
    }
    cpio.node("dev/console", 5, 1);
    cpio.node("dev/null", 1, 3);
    let read =
        |p: &Path| std::fs::read(p).map_err(|e| failed(format!("reading {}: {e}", p.display())));
    cpio.file("bin/busybox", 0o755, &read(&busybox)?);
    cpio.file("sandbox-check", 0o755, &read(&sandbox_check)?);
    cpio.file("threaded-launcher", 0o755, &read(&threaded_launcher)?);
    cpio.file("probe", 0o755, &read(&probe)?);
    cpio.file("init", 0o755, INIT.as_bytes());
    cpio.file("cases.sh", 0o644, CASES.as_bytes());
    cpio.file("core-helper", 0o755, CORE_HELPER.as_bytes());
    if arch == Arch::X86_64 {
        let script = profiles::pack(&mut cpio, root, &build, &sandbox_check)?;
        cpio.file("profiles.sh", 0o644, script.as_bytes());
    }
    if arch == Arch::Aarch64 {
        let probes = guest_probes();
        cpio.file(
            "probes-all.list",
            0o644,
            probe_listing(probes.iter()).as_bytes(),
        );
        let plain = probe_listing(probes.iter().filter(|p| !p.sockets));
        cpio.file("probes.list", 0o644, plain.as_bytes());
        let sockets = probe_listing(probes.iter().filter(|p| p.sockets));
        cpio.file("probes-sockets.list", 0o644, sockets.as_bytes());
        cpio.file("probes-sockets.toml", 0o644, SOCKETS_PROFILE.as_bytes());
    }
    std::fs::write(&initramfs, cpio.finish())
        .map_err(|e| failed(format!("writing {}: {e}", initramfs.display())))?;
    println!(
        "initramfs {}: busybox {}, sandbox-check {}",
        initramfs.display(),
        busybox.display(),
        sandbox_check.display()
    );
    Ok(Guest { initramfs })
}

/// Boots `image` with the guest's initramfs and returns what the serial console showed. Fails
/// only if QEMU could not run or did not stop in time; the console is checked by the caller.
fn boot_guest(arch: Arch, image: &Image, guest: &Guest, extra: &str) -> Result<String, Failed> {
    let (qemu, machine, console) = arch.qemu();
    let append = format!("{console} panic=-1 loglevel=1 {extra}")
        .trim()
        .to_owned();
    let mut args: Vec<String> = machine.iter().map(|s| (*s).to_owned()).collect();
    // The initramfs is unpacked into a tmpfs of half the memory: x86_64's holds the profiles'
    // programs and their files too (about 120 MiB, node alone 95).
    let memory = match arch {
        Arch::X86_64 => "1024",
        Arch::Aarch64 => "512",
    };
    args.extend(
        [
            "-m",
            memory,
            "-smp",
            "1",
            "-nographic",
            "-no-reboot",
            "-nic",
            "none",
            "-kernel",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    args.push(image.vmlinuz.to_string_lossy().into_owned());
    args.push("-initrd".to_owned());
    args.push(guest.initramfs.to_string_lossy().into_owned());
    args.push("-append".to_owned());
    args.push(append.clone());
    println!(
        "{qemu} {}",
        args.iter()
            .map(|a| if a.contains(' ') {
                format!("'{a}'")
            } else {
                a.clone()
            })
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut child = Command::new(qemu)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("{qemu}: {e}")))?;
    let console = Arc::new(Mutex::new(Vec::new()));
    let readers: Vec<_> = [
        Box::new(child.stdout.take().expect("piped")) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().expect("piped")),
    ]
    .into_iter()
    .map(|mut stream| {
        let console = Arc::clone(&console);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                console
                    .lock()
                    .expect("not poisoned")
                    .extend_from_slice(&buf[..n]);
            }
        })
    })
    .collect();
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > BOOT_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(failed(format!("waiting for {qemu}: {e}"))),
        }
    };
    for reader in readers {
        let _ = reader.join();
    }
    let text = String::from_utf8_lossy(&console.lock().expect("not poisoned")).replace('\r', "");
    match status {
        None => Err(failed(format!(
            "{qemu} did not stop within {BOOT_TIMEOUT:?} (killed); console, last {TAIL_LINES} lines:\n{}",
            tail(&text, TAIL_LINES)
        ))),
        Some(status) if !status.success() => Err(failed(format!(
            "{qemu} exited with {status}; console, last {TAIL_LINES} lines:\n{}",
            tail(&text, TAIL_LINES)
        ))),
        Some(_) => {
            println!("booted and powered off in {:.1?}", started.elapsed());
            Ok(text)
        }
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| format!("    | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

// ---- the results ----------------------------------------------------------------------------

/// One step's output as the console showed it.
#[derive(Debug, Default)]
struct Step {
    lines: Vec<String>,
    exit: Option<i32>,
}

/// The steps found on the console, and whether the guest got to the end.
fn parse(console: &str) -> (BTreeMap<String, Step>, bool) {
    let mut steps: BTreeMap<String, Step> = BTreeMap::new();
    let mut done = false;
    for line in console.lines() {
        let Some(at) = line.find("@@") else { continue };
        let marked = &line[at + 2..];
        if marked == "done@@" {
            done = true;
        } else if let Some(id) = marked
            .strip_prefix("begin ")
            .and_then(|r| r.strip_suffix("@@"))
        {
            steps.entry(id.to_owned()).or_default();
        } else if let Some(rest) = marked
            .strip_prefix("end ")
            .and_then(|r| r.strip_suffix("@@"))
        {
            if let Some((id, exit)) = rest.split_once(" exit=") {
                steps.entry(id.to_owned()).or_default().exit = exit.parse().ok();
            }
        } else if let Some((id, text)) = marked.split_once("| ") {
            steps
                .entry(id.to_owned())
                .or_default()
                .lines
                .push(text.to_owned());
        } else if let Some(id) = marked.strip_suffix('|') {
            steps
                .entry(id.to_owned())
                .or_default()
                .lines
                .push(String::new());
        }
    }
    (steps, done)
}

/// What a step must show.
enum Want {
    /// This exit status and exactly these lines.
    Exactly(i32, Vec<String>),
    /// Exit 0 and a comma-separated list that has `landlock` in it, or not.
    LsmList { landlock: bool },
    /// The control's answers to the probe list: exit 0 and one answer for each probe.
    ProbeControl(Vec<GuestProbe>),
    /// The confined answers: exit 0, and each probe's its listed answer, or the control's where
    /// the filter lets it through.
    ProbeAnswers(Vec<GuestProbe>),
}

/// `INDEX=ANSWER` lines by index; other lines are left to the caller.
fn probe_answers(lines: &[String]) -> BTreeMap<usize, String> {
    lines
        .iter()
        .filter_map(|l| l.split_once('='))
        .filter_map(|(index, answer)| Some((index.parse().ok()?, answer.to_owned())))
        .collect()
}

/// What is wrong with the confined answers, given the control's, one line a probe.
fn wrong_answers(
    probes: &[GuestProbe],
    got: &BTreeMap<usize, String>,
    control: &BTreeMap<usize, String>,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for probe in probes {
        let label = &probe.label;
        let Some(have) = got.get(&probe.index) else {
            wrong.push(format!(
                "{label}: no answer (the probe program stopped before it)"
            ));
            continue;
        };
        let kernel = control.get(&probe.index);
        match (&probe.want, kernel) {
            (Some(want), _) if have != want => {
                wrong.push(format!("{label}: expected {want}, got {have}"));
            }
            (Some(want), Some(kernel)) if kernel == want && !probe.guarded => wrong.push(format!(
                "{label}: the kernel alone answers {kernel} too, so the probe says nothing \
                 about the filter: change its arguments, or mark it kernel_guarded"
            )),
            (Some(_), _) => {}
            (None, Some(kernel)) if have != kernel => wrong.push(format!(
                "{label}: the filter should let it through, but it got {have} where the kernel \
                 alone answers {kernel}"
            )),
            (None, Some(_)) => {}
            (None, None) => wrong.push(format!("{label}: the control has no answer")),
        }
    }
    wrong
}

/// The refusal every launch gets on a kernel whose Landlock is unusable.
fn refusal(landlock: Landlock) -> Option<String> {
    let reason = match landlock {
        Landlock::Usable(_) => return None,
        Landlock::Absent => "this kernel has no Landlock (not built in, or not in `lsm=`); Landlock ABI 3 is needed (Linux 6.2 or later, with landlock in the lsm= list)".to_owned(),
        Landlock::Old(found) => format!("Landlock ABI {found} found, ABI 3 needed (Linux 6.2 or later): before ABI 3, truncation is not covered"),
    };
    Some(format!("sandbox: refused: confinement: {reason}"))
}

/// How the library names, in one line, the refusal `sandbox-check` prints as `line`.
fn library_refusal(line: &str) -> String {
    line.trim_start_matches("sandbox: ").to_owned()
}

/// The self-test's second line: what the backend found.
fn facts(arch: Arch, release: &str, landlock: Landlock) -> String {
    let landlock = match landlock {
        Landlock::Absent => "landlock: absent".to_owned(),
        Landlock::Old(abi) | Landlock::Usable(abi) => {
            // The guest's kernel is not this one: ask the backend what that ABI adds.
            let added =
                sandbox_linux::landlock::best_effort_rights(i32::try_from(abi).unwrap_or(i32::MAX));
            let added = if added.is_empty() {
                "none".to_owned()
            } else {
                added.join(", ")
            };
            format!("landlock ABI: {abi}; best-effort rights added: {added}")
        }
    };
    // The guest mounts cgroup v2 at /sys/fs/cgroup and runs as its root, so every controller
    // the launch bounds is there to write.
    // x86_64's sandbox-check is static glibc, aarch64's musl (`build_guest`).
    let joins = match arch {
        Arch::X86_64 => {
            "forked launchers (sandbox-check's, a single-threaded application's, the launch \
             server's) start inside their cgroup v2 (clone3, CLONE_INTO_CGROUP); executed ones \
             move in"
        }
        Arch::Aarch64 => {
            "this C library is not trusted with a raw clone (musl, glibc before 2.25): \
             launchers move into their cgroup v2, a lone launch waiting for an RCU grace period"
        }
    };
    format!(
        "backend: linux; arch: {}; kernel: {release}; {landlock}; cgroup: {} in \
         /sys/fs/cgroup/ (cgroup v2); {joins}",
        arch.name(),
        GUEST_CGROUP_CONTROLLERS
    )
}

/// The cgroup v2 controllers the launch uses that the guest's root cgroup offers, as
/// `sandbox_core::backend::bounds_fact` names them.
const GUEST_CGROUP_CONTROLLERS: &str = "memory, pids, cpu";

/// The self-test's first line, in plain words, before the facts.
const SELF_TEST_FIRST: &str = "Self-test: a confined copy of sandbox-check tries what the sandbox \
    must refuse and what must still work; the backend's facts, then one line per attempt.";
/// The self-test's last line where every attempt went as required.
const SELF_TEST_CONFINES: &str =
    "verdict: this machine confines programs: every attempt went as required.";
/// The self-test's last line where the launch was refused.
const SELF_TEST_REFUSED: &str = "verdict: this machine does NOT confine programs: the launch was \
    refused (the refused: line says why).";

/// The self-test's lines after the facts, on a kernel where launches work.
const SELF_TEST_PASSED: &[&str] = &[
    "[ok  ] read the canary: expected denied, EACCES (Permission denied)",
    "[ok  ] change the canary's permissions: expected denied, EPERM (Operation not permitted)",
    "[ok  ] truncate the canary: expected denied, EACCES (Permission denied)",
    "[ok  ] create a file beside the canary: expected denied, EACCES (Permission denied)",
    "[ok  ] create a file in the temporary directory: expected denied, EACCES (Permission denied)",
    "[ok  ] connect to 127.0.0.1 over TCP: expected denied, EPERM (Operation not permitted)",
    "[ok  ] start a process: expected denied, EPERM (Operation not permitted)",
    "[ok  ] send signal 0 to the parent: expected denied, EPERM (Operation not permitted)",
    "[ok  ] hold no capability: expected works, worked",
    "[ok  ] open a unix datagram socket: expected denied, EPERM (Operation not permitted)",
    "[ok  ] send a UDP datagram to 127.0.0.1: expected denied, EPERM (Operation not permitted)",
    "[ok  ] list the home folder: expected denied, EACCES (Permission denied)",
    "[ok  ] start a thread: expected works, worked",
    "[ok  ] read an allowed file: expected works, worked",
    "[ok  ] write to /dev/null: expected works, worked",
];

/// Every step of cases.sh and what it must show on this boot.
fn expected(boot: &Boot, arch: Arch, release: &str) -> Vec<(&'static str, Want)> {
    let lines = |ls: &[&str]| ls.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    let exactly = |exit: i32, ls: &[&str]| Want::Exactly(exit, lines(ls));
    let refused = refusal(boot.landlock);
    // A launch: `works` with its exit status where Landlock is usable, else the refusal.
    let launch = |exit: i32, ls: &[&str]| match &refused {
        Some(line) => Want::Exactly(97, vec![line.clone()]),
        None => exactly(exit, ls),
    };
    // threaded-launcher's line for one launch through the library, then how many processes
    // moved into a launch's cgroup (grep -c: 0 and exit 1 when none did).
    // On a refusing kernel the launch is refused where it would have run, after the same moves
    // (an executed launcher moves itself in before it finds Landlock unusable).
    let library_launch = |moved: bool| {
        let first = match &refused {
            Some(line) => format!("launch 0: failed: {}", library_refusal(line)),
            None => "launch 0: exit Some(0), signal None, stdout \"\", stderr \"\"".to_owned(),
        };
        Want::Exactly(
            i32::from(!moved),
            vec![first, if moved { "1" } else { "0" }.to_owned()],
        )
    };
    let facts = facts(arch, release, boot.landlock);
    let self_test = match &refused {
        Some(line) => Want::Exactly(
            1,
            vec![
                SELF_TEST_FIRST.to_owned(),
                facts,
                line.clone(),
                SELF_TEST_REFUSED.to_owned(),
            ],
        ),
        None => Want::Exactly(
            0,
            [SELF_TEST_FIRST.to_owned(), facts]
                .into_iter()
                .chain(lines(SELF_TEST_PASSED))
                .chain([SELF_TEST_CONFINES.to_owned()])
                .collect(),
        ),
    };
    let mut steps = vec![
        (
            "uname",
            Want::Exactly(0, vec![format!("{release} {}", arch.name())]),
        ),
        (
            "lsm",
            Want::LsmList {
                landlock: boot.landlock != Landlock::Absent,
            },
        ),
        ("selftest", self_test),
        ("marker", launch(0, &["marker-42"])),
        ("write-control", exactly(0, &["control"])),
        (
            "write",
            launch(1, &["sh: can't create /tmp/written: Permission denied"]),
        ),
        (
            "append",
            launch(
                1,
                &["sh: can't create /tmp/control-written: Permission denied"],
            ),
        ),
        ("written", exactly(0, &["/tmp/written absent", "control"])),
        (
            "socket-control",
            exactly(
                1,
                &["nc: can't connect to remote host (127.0.0.1): Connection refused"],
            ),
        ),
        (
            "socket",
            launch(1, &["nc: socket: Operation not permitted"]),
        ),
        ("process-control", exactly(0, &["child exited 0"])),
        (
            "process",
            launch(2, &["sh: can't fork: Operation not permitted"]),
        ),
        (
            "probe-control",
            exactly(
                0,
                &["clone3(NULL, 0): EINVAL", "thread: started, returned 42"],
            ),
        ),
        (
            "probe",
            launch(
                0,
                &["clone3(NULL, 0): ENOSYS", "thread: started, returned 42"],
            ),
        ),
        ("core-pattern", exactly(0, &["|/core-helper %p"])),
        // The shell running the step reports the death of the one it started.
        (
            "crash-control",
            exactly(139, &["Segmentation fault (core dumped)"]),
        ),
        ("helper-control", exactly(0, &["1"])),
        (
            "crash",
            launch(
                139,
                &["sandbox-check: the program was killed by signal 11 (SIGSEGV)"],
            ),
        ),
        // grep -c prints 0 and exits 1 when no helper ran.
        ("helper", exactly(1, &["0"])),
        ("rtprio-control", exactly(0, &["99"])),
        ("rtprio", launch(0, &["0"])),
        (
            "cgroup",
            launch(0, &["0::/sandbox", "memory.max 1073741824", "pids.max 256"]),
        ),
        ("attach-control", exactly(0, &["1"])),
        // grep -c prints 0 and exits 1 when no line matches: no move into a launch's cgroup.
        (
            "attach",
            match (&refused, arch) {
                (Some(line), _) => Want::Exactly(1, vec![line.clone(), "0".to_owned()]),
                (None, Arch::X86_64) => exactly(1, &["0"]),
                (None, Arch::Aarch64) => exactly(0, &["1"]),
            },
        ),
        // A served launch and a single-threaded application's are created inside their cgroup
        // where sandbox-check's launcher is; an application with threads executes a launcher,
        // which moves itself in on every build.
        // A served launch is handed to a child parked before it, which moved while parked
        // (aarch64) or was created inside (x86_64): no move on any build.
        ("attach-served", library_launch(false)),
        (
            "attach-forked",
            library_launch(arch == Arch::Aarch64 && refused.is_none()),
        ),
        ("attach-threaded", library_launch(true)),
        ("memfd-control", exactly(0, &["memfd: holds 128 MiB"])),
        (
            "memfd",
            launch(
                137,
                &["sandbox-check: the program was killed by signal 9 (SIGKILL) at its memory bound of 67108864 bytes"],
            ),
        ),
        (
            "delegated",
            launch(
                137,
                &["sandbox-check: the program was killed by signal 9 (SIGKILL) at its memory bound of 67108864 bytes"],
            ),
        ),
    ];
    if arch == Arch::Aarch64 {
        let probes = guest_probes();
        let (sockets, plain): (Vec<_>, Vec<_>) = probes.iter().cloned().partition(|p| p.sockets);
        let confined = |group: Vec<GuestProbe>| match &refused {
            Some(line) => Want::Exactly(97, vec![line.clone()]),
            None => Want::ProbeAnswers(group),
        };
        steps.push(("syscalls-control", Want::ProbeControl(probes)));
        steps.push(("syscalls", confined(plain)));
        steps.push(("syscalls-sockets", confined(sockets)));
    }
    if arch == Arch::X86_64 {
        let guest = |(exit, ls): (i32, &[&str])| {
            (
                exit,
                ls.iter().map(|l| profiles::in_guest(l)).collect::<Vec<_>>(),
            )
        };
        for work in profiles::WORKS {
            let (exit, ls) = guest(work.control);
            steps.push((work.control_id, Want::Exactly(exit, ls)));
            let (exit, ls) = guest(work.confined);
            let want = match &refused {
                Some(line) => Want::Exactly(97, vec![line.clone()]),
                None => Want::Exactly(exit, ls),
            };
            steps.push((work.id, want));
        }
    }
    steps
}

/// Each check of one boot, named, and whether it held.
fn check_boot(
    boot: &Boot,
    arch: Arch,
    image: &Image,
    console: &str,
) -> Vec<(String, Result<(), String>)> {
    let (mut steps, done) = parse(console);
    let control = steps
        .get("syscalls-control")
        .map(|step| probe_answers(&step.lines))
        .unwrap_or_default();
    let mut results = Vec::new();
    for (id, want) in expected(boot, arch, &image.release) {
        let Some(step) = steps.remove(id) else {
            results.push((
                id.to_owned(),
                Err("no `@@begin` marker on the console: the guest never ran it".to_owned()),
            ));
            continue;
        };
        let Some(exit) = step.exit else {
            results.push((
                id.to_owned(),
                Err("no `@@end` marker: the guest stopped or hung during it".to_owned()),
            ));
            continue;
        };
        let result = match want {
            Want::Exactly(want_exit, want_lines) => {
                if exit == want_exit && step.lines == want_lines {
                    Ok(())
                } else {
                    Err(format!(
                        "expected exit {want_exit} and\n{}\n    got exit {exit} and\n{}",
                        quote(&want_lines),
                        quote(&step.lines)
                    ))
                }
            }
            Want::LsmList { landlock } => {
                let list = step.lines.join("");
                let has = list.split(',').any(|m| m.trim() == "landlock");
                if exit == 0 && !list.is_empty() && has == landlock {
                    Ok(())
                } else {
                    Err(format!(
                        "expected an LSM list {} landlock, got exit {exit} and {list:?}",
                        if landlock { "with" } else { "without" }
                    ))
                }
            }
            Want::ProbeControl(probes) => {
                let missing: Vec<&str> = probes
                    .iter()
                    .filter(|p| !control.contains_key(&p.index))
                    .map(|p| p.label.as_str())
                    .collect();
                if exit == 0 && missing.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "expected exit 0 and an answer for each of {} probes, got exit {exit}; \
                         no answer for:\n{}\n    output:\n{}",
                        probes.len(),
                        missing.join("\n"),
                        quote(&step.lines)
                    ))
                }
            }
            Want::ProbeAnswers(probes) => {
                let got = probe_answers(&step.lines);
                let wrong = wrong_answers(&probes, &got, &control);
                if exit == 0 && wrong.is_empty() {
                    println!(
                        "  {id}: {} probes answered as listed through the real binary",
                        probes.len()
                    );
                    Ok(())
                } else {
                    // The answers themselves are in the console's log.
                    Err(format!(
                        "expected exit 0 and every probe answered as listed, got exit {exit}; \
                         wrong:\n{}",
                        quote(&wrong)
                    ))
                }
            }
        };
        results.push((format!("{id} (exit {exit})"), result));
    }
    for id in steps.keys() {
        results.push((
            id.clone(),
            Err("a step this harness does not know: cases.sh and kernels.rs disagree".to_owned()),
        ));
    }
    results.push((
        "the guest reached `@@done@@`".to_owned(),
        if done {
            Ok(())
        } else {
            Err("no `@@done@@` marker: the guest did not finish its cases".to_owned())
        },
    ));
    results
}

fn quote(lines: &[String]) -> String {
    if lines.is_empty() {
        return "      (no output)".to_owned();
    }
    lines
        .iter()
        .map(|l| format!("      {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image() -> Image {
        Image {
            vmlinuz: PathBuf::from("/nonexistent"),
            release: "6.12.117+deb12-cloud-amd64".to_owned(),
            package: "linux-image.deb".to_owned(),
        }
    }

    /// A console on which every step of case 3 showed what it must, with kernel lines between.
    fn case3_console() -> String {
        let mut console = String::from("\x1b[2J[    0.000000] Linux version 6.12\n");
        for (id, want) in expected(&BOOTS[2], Arch::X86_64, &image().release) {
            console.push_str(&format!("@@begin {id}@@\n"));
            let (exit, lines) = match want {
                Want::Exactly(exit, lines) => (exit, lines),
                Want::LsmList { .. } => (0, vec!["lockdown,capability,landlock,yama".to_owned()]),
                Want::ProbeControl(_) | Want::ProbeAnswers(_) => {
                    unreachable!("the probe list runs in aarch64 guests only")
                }
            };
            for line in lines {
                console.push_str(&format!("@@{id}| {line}\n"));
            }
            console.push_str("[    1.234567] a kernel message\n");
            console.push_str(&format!("@@end {id} exit={exit}@@\n"));
        }
        console.push_str("@@done@@\n[    2.0] reboot: Power down\n");
        console
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_probe_answered_otherwise_than_listed_fails_its_step() {
        let probes = guest_probes();
        assert!(probes.iter().any(|p| p.sockets) && probes.iter().any(|p| !p.sockets));
        // The kernel alone answers EFAULT to everything; the filter as listed.
        let control: BTreeMap<usize, String> =
            probes.iter().map(|p| (p.index, "14".to_owned())).collect();
        let mut got: BTreeMap<usize, String> = probes
            .iter()
            .map(|p| (p.index, p.want.clone().unwrap_or_else(|| "14".to_owned())))
            .collect();
        assert_eq!(wrong_answers(&probes, &got, &control), Vec::<String>::new());
        let refused = probes
            .iter()
            .find(|p| p.want.as_deref() == Some("1"))
            .expect("a probe refused with EPERM");
        got.insert(refused.index, "38".to_owned());
        let passing = probes
            .iter()
            .find(|p| p.want.is_none())
            .expect("a probe let through");
        got.insert(passing.index, "1".to_owned());
        let silent = probes.last().expect("probes");
        got.remove(&silent.index);
        let mut want = vec![
            format!("{}: expected 1, got 38", refused.label),
            format!(
                "{}: the filter should let it through, but it got 1 where the kernel alone \
                 answers 14",
                passing.label
            ),
            format!(
                "{}: no answer (the probe program stopped before it)",
                silent.label
            ),
        ];
        let mut have = wrong_answers(&probes, &got, &control);
        want.sort();
        have.sort();
        assert_eq!(have, want);
    }

    fn failures(console: &str) -> Vec<(String, String)> {
        check_boot(&BOOTS[2], Arch::X86_64, &image(), console)
            .into_iter()
            .filter_map(|(step, r)| r.err().map(|why| (step, why)))
            .collect()
    }

    #[test]
    fn a_complete_console_passes() {
        assert_eq!(failures(&case3_console()), vec![]);
    }

    #[test]
    fn a_wrong_line_or_exit_fails_that_step() {
        let console = case3_console().replace(
            "@@socket| nc: socket: Operation not permitted",
            "@@socket| nc: can't connect to remote host (127.0.0.1): Permission denied",
        );
        let failed = failures(&console);
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].0.starts_with("socket "), "{failed:?}");
        let console = case3_console().replace("@@end selftest exit=0@@", "@@end selftest exit=1@@");
        assert_eq!(failures(&console).len(), 1);
    }

    #[test]
    fn a_console_cut_short_names_what_is_missing() {
        let full = case3_console();
        let cut = &full[..full.find("@@end process exit=").expect("there")];
        let failed = failures(cut);
        let steps: Vec<&str> = failed.iter().map(|(s, _)| s.as_str()).collect();
        let mut missing = vec![
            "process",
            "probe-control",
            "probe",
            "core-pattern",
            "crash-control",
            "helper-control",
            "crash",
            "helper",
            "rtprio-control",
            "rtprio",
            "cgroup",
            "attach-control",
            "attach",
            "attach-served",
            "attach-forked",
            "attach-threaded",
            "memfd-control",
            "memfd",
            "delegated",
        ];
        // x86_64's guest runs the profiles' work last.
        for work in profiles::WORKS {
            missing.extend([work.control_id, work.id]);
        }
        missing.push("the guest reached `@@done@@`");
        assert_eq!(steps, missing);
        assert!(failed[0].1.contains("no `@@end` marker"), "{failed:?}");
        assert!(failed[1].1.contains("no `@@begin` marker"), "{failed:?}");
        assert_eq!(
            failures("").len(),
            expected(&BOOTS[2], Arch::X86_64, "x").len() + 1
        );
    }

    #[test]
    fn the_lsm_list_must_match_the_boot() {
        let console = case3_console().replace(
            "lockdown,capability,landlock,yama",
            "lockdown,capability,yama",
        );
        let failed = failures(&console);
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].0.starts_with("lsm "));
    }

    #[test]
    fn refused_kernels_expect_the_refusal_for_every_launch() {
        let steps = expected(&BOOTS[0], Arch::X86_64, "6.1.0-57-cloud-amd64");
        let refusal =
            "sandbox: refused: confinement: Landlock ABI 2 found, ABI 3 needed (Linux 6.2 \
                       or later): before ABI 3, truncation is not covered";
        for (id, want) in steps {
            let Want::Exactly(exit, lines) = want else {
                continue;
            };
            if [
                "marker",
                "write",
                "append",
                "socket",
                "process",
                "probe",
                "crash",
                "rtprio",
                "cgroup",
                "memfd",
                "delegated",
            ]
            .contains(&id)
            {
                assert_eq!((exit, lines), (97, vec![refusal.to_owned()]), "{id}");
            }
        }
    }

    #[test]
    fn cpio_entries_are_aligned_and_terminated() {
        let mut cpio = Cpio::default();
        cpio.dir("bin");
        cpio.file("bin/x", 0o755, b"hello");
        let bytes = cpio.finish();
        assert_eq!(bytes.len() % 4, 0);
        assert!(bytes.starts_with(b"070701"));
        // The file's header: 6 + 13 * 8 = 110 bytes, then its name (6 bytes with the NUL, so no
        // padding is needed to reach a multiple of 4), then its data.
        let at = bytes
            .windows(6)
            .rposition(|w| w == b"bin/x\0")
            .expect("named")
            - 110;
        let header = std::str::from_utf8(&bytes[at..at + 110]).expect("ascii");
        assert_eq!(&header[14..22], format!("{:08x}", 0o100755));
        assert_eq!(&header[54..62], "00000005");
        let data = at + 110 + 6;
        assert_eq!(&bytes[data..data + 5], b"hello");
        assert!(bytes[bytes.len() - 24..]
            .windows(10)
            .any(|w| w == b"TRAILER!!!"));
    }

    #[test]
    fn a_dynamic_program_is_not_taken_for_the_guest() {
        let me = std::env::current_exe().expect("the test binary");
        if cfg!(all(target_arch = "x86_64", target_env = "gnu")) {
            let e = check_static(&me, Arch::X86_64).expect_err("the test binary is dynamic");
            assert!(e.0.contains("dynamically linked"), "{e}");
        }
        let e = check_static(&me, Arch::Aarch64).expect_err("wrong machine or dynamic");
        assert!(!e.0.is_empty());
    }
}
