//! The system calls the backend makes that neither `nix` nor the `landlock` crate wraps for it.
//! Each takes only integers, or a pointer to a local it owns.
#![allow(unsafe_code)]

pub mod notify;

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The Landlock ABI version the kernel reports, or the errno of the probe (`ENOSYS`: not built
/// in; `EOPNOTSUPP`: built in but not enabled at boot).
pub fn landlock_abi() -> Result<i32, io::Error> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the call reads no
    // memory and only returns the ABI version.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 {
        Err(io::Error::last_os_error())
    } else {
        i32::try_from(version).map_err(io::Error::other)
    }
}

/// Landlock's `struct landlock_path_beneath_attr`, packed as the kernel declares it.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: libc::c_int,
}

/// Adds to `ruleset` the rule that grants `access` (Landlock's `LANDLOCK_ACCESS_FS_*` bits) on
/// the object `parent` refers to and, for a folder, everything beneath it. The kernel refuses
/// rights the ruleset does not handle and folder rights on a file (`EINVAL`), and an empty set
/// (`ENOMSG`).
pub fn landlock_add_path_rule(
    ruleset: BorrowedFd<'_>,
    parent: BorrowedFd<'_>,
    access: u64,
) -> io::Result<()> {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: the attribute is a local that outlives the call and the kernel only reads it; both
    // descriptors are borrowed, so they stay open for the call.
    let result = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0 as libc::c_uint,
        )
    };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `prctl` with integer arguments.
pub fn prctl(
    option: libc::c_int,
    arg2: libc::c_ulong,
    arg3: libc::c_ulong,
) -> io::Result<libc::c_int> {
    // SAFETY: every option this crate passes takes integer arguments only.
    let result = unsafe { libc::prctl(option, arg2, arg3, 0 as libc::c_ulong, 0 as libc::c_ulong) };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// The calling thread's effective, permitted and inheritable capability sets, as 64-bit masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CapSets {
    /// Effective.
    pub effective: u64,
    /// Permitted.
    pub permitted: u64,
    /// Inheritable.
    pub inheritable: u64,
}

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Reads the calling thread's capability sets.
pub fn capget() -> io::Result<CapSets> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: version 3 takes a header and two data structs, both locals that outlive the call.
    let result = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    let join = |low: u32, high: u32| u64::from(low) | (u64::from(high) << 32);
    Ok(CapSets {
        effective: join(data[0].effective, data[1].effective),
        permitted: join(data[0].permitted, data[1].permitted),
        inheritable: join(data[0].inheritable, data[1].inheritable),
    })
}

/// Sets the calling thread's capability sets to `sets` (this thread only: the direct call).
pub fn capset(sets: CapSets) -> io::Result<()> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let split = |mask: u64| (mask as u32, (mask >> 32) as u32);
    let (e0, e1) = split(sets.effective);
    let (p0, p1) = split(sets.permitted);
    let (i0, i1) = split(sets.inheritable);
    let data = [
        CapData {
            effective: e0,
            permitted: p0,
            inheritable: i0,
        },
        CapData {
            effective: e1,
            permitted: p1,
            inheritable: i1,
        },
    ];
    // SAFETY: as for capget; the kernel only reads `data`.
    let result = unsafe {
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        )
    };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Empties the calling thread's effective, permitted and inheritable sets.
pub fn capset_empty() -> io::Result<()> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData::default(); 2];
    // SAFETY: as for capget; the kernel only reads `data`.
    let result = unsafe {
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        )
    };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A system call the launch needs, made with arguments that change nothing, in a child that may
/// be killed for it: `(number, five arguments)`, every argument given so that none is left to
/// whatever a register held.
pub type ProbeCall = (libc::c_long, [libc::c_long; 5]);

/// What each probed call answered (its result, and errno when it failed), and the signal that
/// ended the child, if one did.
pub type Probed = (Vec<(i64, i32)>, Option<i32>);

/// Makes each of `calls` in a forked child, in order, and returns what each answered (the
/// result, and errno when it failed) until the child ended, and the signal that ended it, if one
/// did (a seccomp filter's kill action is `SIGSYS`). A call that reads memory is given the
/// address of a live local of the caller's, which the child's copy of its memory holds too.
pub fn probe_in_child(calls: &[ProbeCall]) -> io::Result<Probed> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let out = write.as_raw_fd();
    // SAFETY: the child makes only raw system calls (the probed ones, `write`, `_exit`) on
    // integers and on `calls`, prepared before the fork, so it neither allocates nor takes a
    // lock another thread of this process may have held at the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        for &(number, [a, b, c, d, e]) in calls {
            // SAFETY: each probed call is given arguments that read at most the `u32` whose
            // address the caller put there, which lives in this copy of its memory.
            let result = unsafe { libc::syscall(number, a, b, c, d, e) };
            let errno = if result < 0 {
                // SAFETY: errno's location is this thread's, valid for its life.
                unsafe { *libc::__errno_location() }
            } else {
                0
            };
            let mut bytes = [0u8; 12];
            bytes[..8].copy_from_slice(&(result as i64).to_ne_bytes());
            bytes[8..].copy_from_slice(&errno.to_ne_bytes());
            // SAFETY: the pointer and length describe `bytes`.
            unsafe { libc::write(out, bytes.as_ptr().cast(), bytes.len()) };
        }
        // SAFETY: `_exit` ends the child without running anything of the parent's.
        unsafe { libc::_exit(0) }
    }
    drop(write);
    let mut answers = Vec::new();
    let mut file = std::fs::File::from(read);
    let mut bytes = [0u8; 12];
    while std::io::Read::read_exact(&mut file, &mut bytes).is_ok() {
        let result = i64::from_ne_bytes(bytes[..8].try_into().unwrap_or_default());
        let errno = i32::from_ne_bytes(bytes[8..].try_into().unwrap_or_default());
        answers.push((result, errno));
    }
    let mut status = 0;
    loop {
        // SAFETY: the pointer is to a live local integer that waitpid fills in.
        let found = unsafe { libc::waitpid(pid, &mut status, 0) };
        if found == pid {
            break;
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    Ok((answers, signal))
}

/// Sets the calling thread's supplementary groups to `groups`: the direct call, which changes
/// this thread's credentials only (the C library's wrapper makes every thread follow).
pub fn set_thread_groups(groups: &[libc::gid_t]) -> io::Result<()> {
    // SAFETY: the kernel reads `groups.len()` IDs from the slice, which outlives the call.
    let done = unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) };
    if done < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The calling thread's supplementary groups, sorted.
pub fn thread_groups() -> io::Result<Vec<libc::gid_t>> {
    // SAFETY: a size of 0 asks for the count only and writes nothing.
    let count = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if count < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut groups = vec![0 as libc::gid_t; usize::try_from(count).unwrap_or(0)];
    // SAFETY: the vector holds `count` IDs.
    let got = unsafe { libc::getgroups(count, groups.as_mut_ptr()) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    groups.truncate(usize::try_from(got).unwrap_or(0));
    groups.sort_unstable();
    Ok(groups)
}

/// Sets the calling thread's file-system user and group (the direct calls: this thread only),
/// and answers them as they are after: the calls report no error, so they are read back (an
/// invalid ID changes nothing and answers the current one).
pub fn set_thread_fs_ids(uid: u32, gid: u32) -> (i64, i64) {
    // SAFETY: plain integer arguments.
    unsafe {
        libc::syscall(libc::SYS_setfsgid, gid);
        libc::syscall(libc::SYS_setfsuid, uid);
        (
            libc::syscall(libc::SYS_setfsuid, u32::MAX),
            libc::syscall(libc::SYS_setfsgid, u32::MAX),
        )
    }
}

/// The calling thread's ID.
pub fn thread_id() -> libc::pid_t {
    // SAFETY: `gettid` takes nothing and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::pid_t }
}

/// Raises thread `tid`'s nice value to `nice` where it is lower (lowering a priority needs no
/// right; raising one is never asked for here).
pub fn lower_thread_priority(tid: libc::pid_t, nice: i32) -> io::Result<()> {
    let tid = libc::id_t::try_from(tid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: plain integer arguments; -1 is a valid answer, so errno is cleared first and read
    // after.
    let current = unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, tid)
    };
    let error = io::Error::last_os_error();
    if current == -1 && error.raw_os_error().is_some_and(|e| e != 0) {
        return Err(error);
    }
    if nice <= current {
        return Ok(());
    }
    // SAFETY: plain integer arguments; `PRIO_PROCESS` with a thread ID is that thread alone.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The calling thread's processor time so far, in nanoseconds (0 where it cannot be read).
pub fn thread_time() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the kernel writes the local timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } < 0 {
        return 0;
    }
    u64::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap_or(0)
}

/// The number of the task that is `pid` in the PID namespace `namespace` (a descriptor of a
/// `/proc/<pid>/ns/pid` link), in this process's own PID namespace: `ESRCH` where that
/// namespace has no task of that number (`NS_GET_PID_FROM_PIDNS`, Linux 6.11).
pub fn pid_from_namespace(namespace: BorrowedFd<'_>, pid: libc::pid_t) -> io::Result<libc::pid_t> {
    // SAFETY: this request takes the number itself as its argument, not an address: nothing is
    // read or written in this process's memory, and the descriptor is borrowed for the call.
    let result = unsafe {
        libc::ioctl(
            namespace.as_raw_fd(),
            libc::NS_GET_PID_FROM_PIDNS,
            libc::c_ulong::from(pid.unsigned_abs()),
        )
    };
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}
