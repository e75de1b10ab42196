//! When `Sandbox::run` returns, nothing of the run is left in the application: no descriptor
//! and no thread. Alone in its test binary, so that no other test opens descriptors or starts
//! threads while it counts them (issue 29: the served thousand-launch count of the conformance
//! suite once found a descriptor more after than before, under load).
#![cfg(target_os = "linux")]

use std::path::Path;

use sandbox_core::{Policy, RunOptions, Sandbox};
use sandbox_linux::LinuxBackend;

const LAUNCHER: &str = env!("CARGO_BIN_EXE_sandbox-check");

fn count(path: &str) -> usize {
    std::fs::read_dir(path).unwrap().count()
}

#[test]
fn a_finished_run_leaves_no_descriptor_and_no_thread_even_under_load() {
    let sandbox = Sandbox::new(&LinuxBackend).with_launcher(Path::new(LAUNCHER));
    let policy = Policy::new().allow_read("/usr").unwrap();
    // The program exits without reading its input, so the thread writing it may still be
    // writing, or not yet started, when the program's exit is seen.
    let options = RunOptions::new().input(vec![b'x'; 256 << 10]);
    // Load of this process's own making: busy threads on every core, so that a thread of the
    // run is not scheduled at once. Started once, stopped at the end.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let busy: Vec<_> = (0..cores)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    // The spawner thread the library keeps for the process's life starts with the first launch.
    sandbox
        .run(&policy, "/usr/bin/true", [""; 0], &RunOptions::new())
        .unwrap();
    let (fds, threads) = (count("/proc/self/fd"), count("/proc/self/task"));
    let mut seen = Vec::new();
    for launch in 0..150 {
        let done = sandbox
            .run(&policy, "/usr/bin/true", [""; 0], &options)
            .unwrap();
        assert_eq!(done.status.code(), Some(0));
        // A joined thread wakes its joiner before the kernel has removed it from the task list,
        // so a thread count above the first is looked at again, for at most a second, before it
        // counts; a descriptor count is not (a descriptor is closed before the join returns).
        let fds_now = count("/proc/self/fd");
        let mut threads_now = count("/proc/self/task");
        for _ in 0..100 {
            if threads_now <= threads {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            threads_now = count("/proc/self/task");
        }
        let now = (fds_now, threads_now);
        if now != (fds, threads) {
            seen.push(format!("launch {launch}: {now:?}"));
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for thread in busy {
        thread.join().unwrap();
    }
    assert!(
        seen.is_empty(),
        "{} of 150 runs returned with something left (descriptors, threads; {fds} and {threads} before): {seen:?}",
        seen.len()
    );
}
