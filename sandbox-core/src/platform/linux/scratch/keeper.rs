//! The keeper: a small child of the application that holds a scratch folder's `tmpfs` in a mount
//! namespace of its own, so that the mount is never attached where anyone but a launch looks.
//!
//! Why a namespace and not the application's own: a mount attached beneath a shared mount (as
//! `/tmp` is under systemd) is copied to every peer and slave of it before it can be made private,
//! and mounting by name follows a link another user swapped in. In the keeper's namespace every
//! mount is a slave first (nothing made there propagates back), and the `tmpfs` is built detached
//! (`fsopen`, `fsmount`) and attached through a descriptor of the folder the application made,
//! opened without following any link and checked by identity. Where the application lacks
//! `CAP_SYS_ADMIN` (an ordinary user, a container's root under the runtimes' defaults), the keeper
//! makes a user namespace that maps only the user's own IDs to themselves; a `tmpfs` may be
//! mounted there. Launches join the keeper's namespaces; the application reads the folder through
//! `/proc/<keeper>/root`.
//!
//! The child runs between `fork` and `_exit` in a process that may have other threads, so it
//! makes raw system calls only, on memory prepared before the fork.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// What the keeper is to do, prepared before the fork (the child allocates nothing).
pub(super) struct Plan {
    /// The folder to mount on, canonical.
    pub path: CString,
    /// Its device and inode as the application made it.
    pub folder: (u64, u64),
    /// `tmpfs` options: `size`, `nr_inodes`, `mode`, `uid`, `gid`.
    pub options: [(&'static CStr, CString); 5],
    /// `/proc/self/uid_map` and `gid_map` for a user namespace: the user's own IDs, to themselves.
    pub uid_map: Vec<u8>,
    /// See `uid_map`.
    pub gid_map: Vec<u8>,
}

/// The step at which a keeper failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Making a mount namespace with the application's own privileges, for a reason other than
    /// lacking them.
    MountNamespace,
    /// Making a user namespace (the application lacks `CAP_SYS_ADMIN`).
    UserNamespace,
    /// Writing the user namespace's ID maps.
    Maps,
    /// Making every mount in the new namespace a slave.
    Slave,
    /// Opening the folder without following a link.
    Open,
    /// The folder found is not the one the application made.
    Identity,
    /// `fsopen("tmpfs")`.
    Filesystem,
    /// Setting the size, entries, mode or owner.
    Options,
    /// Creating the file system.
    Create,
    /// `fsmount`.
    Mount,
    /// Attaching it on the folder.
    Attach,
    /// A seccomp filter the application inherited killed the keeper (`SIGSYS`) at one of
    /// the calls it makes: `unshare`, `mount`, `openat2`, `fsopen`, `fsconfig`, `fsmount`,
    /// `move_mount`.
    Filtered,
    /// The keeper ended before it said anything.
    Died,
}

impl Step {
    fn from_code(code: u32) -> Step {
        use Step::*;
        [
            MountNamespace,
            UserNamespace,
            Maps,
            Slave,
            Open,
            Identity,
            Filesystem,
            Options,
            Create,
            Mount,
            Attach,
        ]
        .get(code as usize)
        .copied()
        .unwrap_or(Died)
    }
}

/// A keeper that holds its mount: ended (and reaped) when dropped.
#[derive(Debug)]
pub(super) struct Keeper {
    /// Its process ID.
    pub pid: i32,
    /// Whether it made a user namespace (launches join that first).
    pub user: bool,
    /// The device and inode of the `tmpfs` root.
    pub root: (u64, u64),
    /// The write end of the pipe it waits on: closing it ends the keeper.
    hold: Option<OwnedFd>,
}

impl Drop for Keeper {
    fn drop(&mut self) {
        drop(self.hold.take());
        // Another reaper in the application may have taken it: nothing then to wait for.
        let _ignored = crate::sys::wait_raw(self.pid, false);
    }
}

const REPORT: usize = 32;

/// Starts a keeper for `plan`, and waits until it holds the mount or has failed.
pub(super) fn start(plan: &Plan) -> Result<Keeper, (Step, io::Error)> {
    let pipe = |step| move |e: nix::Error| (step, io::Error::from(e));
    let (report_r, report_w) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(pipe(Step::Died))?;
    let (hold_r, hold_w) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(pipe(Step::Died))?;
    // SAFETY: the child runs `child`, which makes only async-signal-safe system calls on memory
    // prepared before the fork (`plan`, the descriptors' numbers) and ends with `_exit`, so it
    // neither allocates nor takes a lock another thread may have held at the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err((Step::Died, io::Error::last_os_error()));
    }
    if pid == 0 {
        child(plan, report_w.as_raw_fd(), hold_r.as_raw_fd());
    }
    drop(report_w);
    drop(hold_r);
    let mut keeper = Keeper {
        pid,
        user: false,
        root: (0, 0),
        hold: Some(hold_w),
    };
    let mut report = [0u8; REPORT];
    let read = read_full(&report_r, &mut report);
    if read != REPORT {
        // Reaped here, so that its signal is known; dropping the keeper then finds none.
        let ended = crate::sys::wait_raw(pid, false).ok().flatten();
        let killed_by =
            ended.and_then(|(_, status)| libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)));
        if killed_by == Some(libc::SIGSYS) {
            return Err((Step::Filtered, io::Error::other("killed by SIGSYS")));
        }
        return Err((
            Step::Died,
            io::Error::other("the keeper ended before it reported"),
        ));
    }
    let word = |at: usize| u32::from_ne_bytes(report[at..at + 4].try_into().unwrap_or([0; 4]));
    let long = |at: usize| u64::from_ne_bytes(report[at..at + 8].try_into().unwrap_or([0; 8]));
    let (ok, code, errno) = (word(0), word(4), word(8) as i32);
    if ok != 1 {
        let source = if errno == 0 {
            io::Error::other("the folder found is not the one made")
        } else {
            io::Error::from_raw_os_error(errno)
        };
        return Err((Step::from_code(code), source));
    }
    keeper.user = word(12) == 1;
    keeper.root = (long(16), long(24));
    Ok(keeper)
}

fn read_full(fd: &OwnedFd, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match nix::unistd::read(fd, &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
    }
    got
}

fn errno() -> i32 {
    // SAFETY: errno's location is this thread's, valid for the thread's life.
    unsafe { *libc::__errno_location() }
}

/// Writes the report and ends the keeper: `ok`, the failed step, errno, then on success the user
/// namespace flag and the `tmpfs` root's device and inode.
fn report(fd: RawFd, ok: bool, step: u32, errno: i32, user: bool, root: (u64, u64)) {
    let mut bytes = [0u8; REPORT];
    bytes[0..4].copy_from_slice(&u32::from(ok).to_ne_bytes());
    bytes[4..8].copy_from_slice(&step.to_ne_bytes());
    bytes[8..12].copy_from_slice(&(errno as u32).to_ne_bytes());
    bytes[12..16].copy_from_slice(&u32::from(user).to_ne_bytes());
    bytes[16..24].copy_from_slice(&root.0.to_ne_bytes());
    bytes[24..32].copy_from_slice(&root.1.to_ne_bytes());
    // SAFETY: the pointer and length describe `bytes`; 32 bytes to a pipe are written at once.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
}

fn fail(fd: RawFd, step: Step, errno: i32) -> ! {
    report(fd, false, step as u32, errno, false, (0, 0));
    // SAFETY: `_exit` ends the process without running anything of the parent's.
    unsafe { libc::_exit(1) }
}

/// Closes every descriptor but `a` and `b`: the keeper must hold no pipe of the application's,
/// or a program's output would never reach its end.
fn close_others(a: RawFd, b: RawFd) {
    let (low, high) = (a.min(b) as u32, a.max(b) as u32);
    let mut ranges = [(1, 0); 3];
    if low > 0 {
        ranges[0] = (0, low - 1);
    }
    if high > low + 1 {
        ranges[1] = (low + 1, high - 1);
    }
    ranges[2] = (high + 1, u32::MAX);
    for (first, last) in ranges {
        if first <= last {
            // SAFETY: close_range takes integers; the ranges leave `a` and `b` open. Standard
            // streams go too: the keeper writes nothing but its report.
            unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) };
        }
    }
}

fn fstat(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: `stat` is a zeroed plain struct the kernel fills in.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer is to the live local `stat`.
    (unsafe { libc::fstat(fd, &mut stat) } == 0).then_some((stat.st_dev, stat.st_ino))
}

fn write_file(path: &CStr, data: &[u8]) -> bool {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    // SAFETY: the pointer and length describe `data`.
    let written = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    // SAFETY: `fd` was opened just above and is closed once.
    unsafe { libc::close(fd) };
    written == data.len() as isize
}

fn child(plan: &Plan, out: RawFd, hold: RawFd) -> ! {
    close_others(out, hold);
    name_self();
    let mut user = false;
    if !unshare(libc::CLONE_NEWNS) {
        if errno() != libc::EPERM {
            fail(out, Step::MountNamespace, errno());
        }
        if !unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) {
            fail(out, Step::UserNamespace, errno());
        }
        user = true;
        if !(write_file(c"/proc/self/setgroups", b"deny")
            && write_file(c"/proc/self/uid_map", &plan.uid_map)
            && write_file(c"/proc/self/gid_map", &plan.gid_map))
        {
            fail(out, Step::Maps, errno());
        }
    }
    if !all_slaves() {
        fail(out, Step::Slave, errno());
    }
    let target = open_folder(&plan.path);
    if target < 0 {
        fail(out, Step::Open, errno());
    }
    if fstat(target) != Some(plan.folder) {
        fail(out, Step::Identity, 0);
    }
    let fs = fs_open();
    if fs < 0 {
        fail(out, Step::Filesystem, errno());
    }
    for (key, value) in &plan.options {
        if !fs_set(fs, key, value) {
            fail(out, Step::Options, errno());
        }
    }
    if !fs_create(fs) {
        fail(out, Step::Create, errno());
    }
    let mount = fs_mount(fs);
    if mount < 0 {
        fail(out, Step::Mount, errno());
    }
    let Some(root) = fstat(mount) else {
        fail(out, Step::Mount, errno());
    };
    if !attach(mount, target) {
        fail(out, Step::Attach, errno());
    }
    report(out, true, 0, 0, user, root);
    wait_for_end(hold);
    // SAFETY: `_exit` ends the process without running anything of the parent's.
    unsafe { libc::_exit(0) }
}

/// Names the keeper, so that `ps` tells it from the application's other children.
fn name_self() {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string; the kernel keeps its first 15 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"sandbox-keeper".as_ptr()) };
}

fn unshare(flags: libc::c_int) -> bool {
    // SAFETY: unshare takes an integer and no pointer.
    unsafe { libc::unshare(flags) == 0 }
}

/// Makes every mount of the new namespace a slave: mounts still arrive from the application's
/// namespace, and none made here goes back.
fn all_slaves() -> bool {
    // SAFETY: the strings are NUL-terminated literals; null source, type and data are allowed
    // for a change of propagation.
    unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        ) == 0
    }
}

/// Opens the folder by its canonical path without following any link on the way.
fn open_folder(path: &CStr) -> RawFd {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: `path` is NUL-terminated and `how` a live `struct open_how` of the size given.
    unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        ) as RawFd
    }
}

fn fs_open() -> RawFd {
    // SAFETY: the file system's name is a NUL-terminated literal.
    unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), FSOPEN_CLOEXEC) as RawFd }
}

fn fs_set(fs: RawFd, key: &CStr, value: &CStr) -> bool {
    // SAFETY: key and value are NUL-terminated strings prepared before the fork.
    unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs,
            FSCONFIG_SET_STRING,
            key.as_ptr(),
            value.as_ptr(),
            0,
        ) == 0
    }
}

fn fs_create(fs: RawFd) -> bool {
    // SAFETY: FSCONFIG_CMD_CREATE takes null key and value.
    unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs,
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_char>(),
            0,
        ) == 0
    }
}

/// A detached mount of the new file system, already `nosuid`, `nodev` and `noexec`.
fn fs_mount(fs: RawFd) -> RawFd {
    let attributes = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    // SAFETY: fsmount takes integers and no pointer.
    unsafe { libc::syscall(libc::SYS_fsmount, fs, FSMOUNT_CLOEXEC, attributes) as RawFd }
}

/// Attaches the detached mount on the folder both descriptors name.
fn attach(mount: RawFd, target: RawFd) -> bool {
    // SAFETY: the empty paths are NUL-terminated literals; the descriptors are the keeper's.
    unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            mount,
            c"".as_ptr(),
            target,
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        ) == 0
    }
}

/// Waits until the application closes its end of `hold`: when it drops the folder, or ends.
fn wait_for_end(hold: RawFd) {
    let mut byte = 0u8;
    loop {
        // SAFETY: the pointer is to one live local byte.
        let read = unsafe { libc::read(hold, (&mut byte as *mut u8).cast(), 1) };
        if read == 0 || (read < 0 && errno() != libc::EINTR) {
            return;
        }
    }
}

// The new mount API's constants (include/uapi/linux/mount.h), the same on every architecture.
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
const MOUNT_ATTR_NOSUID: libc::c_uint = 0x2;
const MOUNT_ATTR_NODEV: libc::c_uint = 0x4;
const MOUNT_ATTR_NOEXEC: libc::c_uint = 0x8;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;

/// `struct open_how` for `openat2` (libc's cannot be built by value).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
