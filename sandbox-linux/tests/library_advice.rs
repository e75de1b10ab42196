//! The library advice (`libraries::unreadable`) runs in the unconfined parent before a launch, on
//! a file the program's author wrote: whatever its dynamic section says, the advice costs little
//! time and memory, and past its bounds it is given up rather than the launch refused.
//!
//! Memory is measured by this binary's own allocator, which counts the bytes live at the peak;
//! the tests take a lock so that one test's allocations are not counted in another's.
#![cfg(target_os = "linux")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use sandbox_core::Policy;
use sandbox_linux::elf::sample;
use sandbox_linux::libraries;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

// The one unsafe item of this file: a global allocator is an unsafe trait.
#[allow(unsafe_code)]
// SAFETY: every call is passed to the system allocator unchanged; only the counts are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const DT_NEEDED: u64 = 1;
const DT_RUNPATH: u64 = 29;
const MIB: usize = 1 << 20;

/// A crafted program file in a fresh folder, removed on drop.
struct Crafted(PathBuf);

impl Crafted {
    fn new(name: &str, entries: &[(u64, u64)], strings: &[u8]) -> Self {
        let dir =
            std::env::temp_dir().join(format!("sandbox-advice-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("program");
        std::fs::write(&path, sample::with_dynamic(entries, strings)).unwrap();
        Self(path)
    }
}

impl Drop for Crafted {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

fn thread_cpu_time() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_THREAD).expect("this thread's usage");
    let micros = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
    };
    micros(usage.user_time()) + micros(usage.system_time())
}

/// The CPU time and the peak of extra live memory the advice takes for `program`, and its
/// answer.
fn measure(program: &Path) -> (Duration, usize, usize) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let policy = Policy::new().allow_read("/usr").unwrap();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    // The work this thread did, in CPU time: unlike the wall clock, it does not grow when other
    // processes load the machine.
    let start = thread_cpu_time();
    let advice = libraries::unreadable(&policy, program);
    let took = thread_cpu_time().saturating_sub(start);
    let extra = PEAK.load(Ordering::Relaxed) - before;
    (took, extra, advice.len())
}

fn assert_cheap(name: &str, entries: &[(u64, u64)], strings: &[u8]) {
    let file = Crafted::new(name, entries, strings);
    let (took, extra, advice) = measure(&file.0);
    // Before the bounds: 4,000 names of one 1 MiB string copied 4 GiB (1.5 GiB in 1.3 s before
    // the test's machine refused more); one run path of `a:a:…` took 54 s.
    assert!(
        took < Duration::from_millis(200),
        "{name}: {took:?} of CPU time"
    );
    assert!(extra < 20 * MIB, "{name}: {} MiB", extra / MIB);
    assert_eq!(advice, 0, "{name}: the advice is given up");
}

#[test]
fn four_thousand_names_of_one_long_string_cost_little() {
    let mut strings = vec![b'a'; MIB];
    strings.push(0);
    let entries = vec![(DT_NEEDED, 0); 4000];
    assert_cheap("same-offset", &entries, &strings);
    // Each at another offset, so that no two entries are the same entry.
    let entries: Vec<_> = (0..4000).map(|i| (DT_NEEDED, i)).collect();
    assert_cheap("offsets", &entries, &strings);
}

#[test]
fn four_thousand_run_paths_of_many_folders_cost_little() {
    let mut strings = b"a:".repeat(MIB / 2);
    strings.push(0);
    let mut entries: Vec<_> = (0..2000).map(|i| (DT_RUNPATH, 2 * i)).collect();
    entries.extend((0..2000).map(|_| (DT_NEEDED, 0)));
    assert_cheap("runpath", &entries, &strings);
    // Short, distinct folders and names within the string budget: the lookups bound holds.
    let mut strings = Vec::new();
    let mut entries = Vec::new();
    for i in 0..2000u64 {
        entries.push((DT_RUNPATH, strings.len() as u64));
        strings.extend_from_slice(format!("/usr/lib/{i}").as_bytes());
        strings.push(0);
        entries.push((DT_NEEDED, strings.len() as u64));
        strings.extend_from_slice(format!("lib{i}.so").as_bytes());
        strings.push(0);
    }
    assert_cheap("distinct", &entries, &strings);
}

/// Within the bounds the advice is still given: a crafted program that needs the C library, with
/// an empty policy, is told where it lies.
#[test]
fn a_program_within_the_bounds_still_gets_its_advice() {
    let mut strings = b"libc.so.6\0".to_vec();
    let entries = vec![(DT_NEEDED, 0); 4000];
    strings.push(0);
    let file = Crafted::new("within", &entries, &strings);
    let advice = libraries::unreadable(&Policy::new(), &file.0);
    assert_eq!(advice.len(), 1, "{advice:?}");
    assert_eq!(advice[0].name, "libc.so.6");
    assert_eq!(advice[0].remedy(), Path::new("/usr"));
}
