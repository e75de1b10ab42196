//! The other half of the classification: every system call the filters allow on purpose, with
//! the reason. `rules::RULES` names what is refused; a call of either architecture's
//! table that no row names must be listed here. A named call that is in neither answers
//! `ENOSYS` (the filter treats it as a number the table does not know), so a call a newer
//! syscall table brings in is refused until someone decides, and the decision tests fail until
//! then.

/// Calls allowed on purpose, with the reason: a group of [`ALLOWED`].
#[derive(Debug, PartialEq, Eq)]
pub struct Allowed {
    /// A few words for the group, as the decision table shows it.
    pub title: &'static str,
    /// Why the group is allowed, in a sentence for the documentation.
    pub reason: &'static str,
    /// The calls, by the names of the syscall tables; a name need only exist on one architecture.
    pub calls: &'static [&'static str],
}

/// Every call the filters allow on purpose. A call of either architecture's table that no row of
/// `rules::RULES` names must be here; a call both here and in a row is a contradiction. Both are
/// reported by `decisions::Table::problems` (the `analysis` feature).
pub static ALLOWED: &[Allowed] = &[
    Allowed {
        title: "files by path",
        reason: "Landlock checks the path and the right the call needs: reading, writing, \
                 executing, making, removing, renaming, linking or truncating",
        calls: &[
            "open",
            "openat",
            "openat2",
            "creat",
            "mkdir",
            "mkdirat",
            "mknod",
            "mknodat",
            "rmdir",
            "unlink",
            "unlinkat",
            "rename",
            "renameat",
            "renameat2",
            "link",
            "linkat",
            "symlink",
            "symlinkat",
            "truncate",
            "execve",
            "execveat",
            "uselib",
        ],
    },
    Allowed {
        title: "file metadata, read",
        reason: "reads what a file is (its type, size, times, attributes, link target) by path or \
                 descriptor; Landlock has no right for it, and nothing changes",
        calls: &[
            "stat",
            "lstat",
            "fstat",
            "newfstatat",
            "statx",
            "statfs",
            "fstatfs",
            "ustat",
            "access",
            "faccessat",
            "faccessat2",
            "readlink",
            "readlinkat",
            "fgetxattr",
            "flistxattr",
            "file_getattr",
            "getcwd",
            "chdir",
            "fchdir",
        ],
    },
    Allowed {
        title: "descriptors it holds",
        reason: "reads, writes, moves data between, locks or closes a descriptor the program \
                 holds; Landlock checked each file when it was opened",
        calls: &[
            "read",
            "write",
            "pread64",
            "pwrite64",
            "readv",
            "writev",
            "preadv",
            "pwritev",
            "preadv2",
            "pwritev2",
            "sendfile",
            "splice",
            "tee",
            "vmsplice",
            "copy_file_range",
            "lseek",
            "getdents",
            "getdents64",
            "close",
            "close_range",
            "dup",
            "dup2",
            "dup3",
            "fsync",
            "fdatasync",
            "sync_file_range",
            "readahead",
            "fallocate",
            "ftruncate",
            "pipe",
            "pipe2",
        ],
    },
    Allowed {
        title: "waiting and events",
        reason: "waits on the program's own descriptors, or makes event, signal and timer \
                 descriptors (fanotify_mark needs a descriptor fanotify_init, refused, would \
                 make)",
        calls: &[
            "poll",
            "ppoll",
            "select",
            "pselect6",
            "epoll_create",
            "epoll_create1",
            "epoll_ctl",
            "epoll_wait",
            "epoll_pwait",
            "epoll_pwait2",
            "eventfd",
            "eventfd2",
            "signalfd",
            "signalfd4",
            "timerfd_create",
            "timerfd_settime",
            "timerfd_gettime",
            "fanotify_mark",
        ],
    },
    Allowed {
        title: "inotify",
        reason: "removes a watch, of which the program can have none: making an instance and \
                 adding a watch are refused",
        calls: &["inotify_rm_watch"],
    },
    Allowed {
        title: "sockets it holds",
        reason: "sends on, receives from and asks about a socket the program already holds (it \
                 can make none): a standard stream the parent made a socket; changing or \
                 shutting down that socket is refused",
        calls: &[
            "recvfrom",
            "recvmsg",
            "recvmmsg",
            "sendto",
            "sendmsg",
            "sendmmsg",
            "getsockname",
            "getpeername",
            "getsockopt",
        ],
    },
    Allowed {
        title: "its own memory",
        reason: "maps, protects, locks or advises the program's own memory (madvise is refused \
                 the advice that merges pages with other processes')",
        calls: &[
            "brk",
            "mmap",
            "munmap",
            "mremap",
            "mprotect",
            "msync",
            "mlock",
            "mlock2",
            "munlock",
            "mlockall",
            "munlockall",
            "remap_file_pages",
            "pkey_alloc",
            "pkey_free",
            "pkey_mprotect",
            "mseal",
            "map_shadow_stack",
            "memfd_secret",
            "membarrier",
        ],
    },
    Allowed {
        title: "its own threads and signals",
        reason: "runs, waits for, synchronises or ends the program's own threads, and handles \
                 its own signals (wait4 and waitid find no child: it can start none)",
        calls: &[
            "exit",
            "exit_group",
            "wait4",
            "waitid",
            "futex_waitv",
            "futex_wake",
            "futex_wait",
            "set_robust_list",
            "set_tid_address",
            "rseq",
            "restart_syscall",
            "rt_sigaction",
            "rt_sigprocmask",
            "rt_sigreturn",
            "rt_sigpending",
            "rt_sigsuspend",
            "rt_sigtimedwait",
            "sigaltstack",
            "pause",
            "sched_yield",
            "arch_prctl",
            "set_thread_area",
            "get_thread_area",
            "getcpu",
        ],
    },
    Allowed {
        title: "its own settings",
        reason: "changes settings of the program's own process: its file mode mask, limits \
                 (the core-dump limit is refused), session and process group; seccomp and Landlock only ever add \
                 restrictions, and without capabilities the identity calls can only give one up",
        calls: &[
            "umask",
            "setsid",
            "setpgid",
            "seccomp",
            "landlock_create_ruleset",
            "landlock_add_rule",
            "landlock_restrict_self",
            "lsm_set_self_attr",
            "capset",
            "setuid",
            "setgid",
            "setreuid",
            "setregid",
            "setresuid",
            "setresgid",
            "setgroups",
            "setfsuid",
            "setfsgid",
        ],
    },
    Allowed {
        title: "reading process state",
        reason: "reads the program's own IDs, identity, limits, usage and capabilities, and the \
                 range of scheduling priorities",
        calls: &[
            "getpid",
            "getppid",
            "gettid",
            "getpgrp",
            "getuid",
            "geteuid",
            "getgid",
            "getegid",
            "getresuid",
            "getresgid",
            "getgroups",
            "getrlimit",
            "getrusage",
            "times",
            "capget",
            "sched_get_priority_max",
            "sched_get_priority_min",
            "lsm_get_self_attr",
            "lsm_list_modules",
        ],
    },
    Allowed {
        title: "time",
        reason: "reads the ordinary clocks, sleeps, and sets the program's own timers (the \
                 calls that take a clock ID are refused another process's)",
        calls: &[
            "nanosleep",
            "gettimeofday",
            "time",
            "alarm",
            "getitimer",
            "setitimer",
            "timer_settime",
            "timer_gettime",
            "timer_getoverrun",
            "timer_delete",
        ],
    },
    Allowed {
        title: "the machine, read",
        reason: "reads what the machine is: its name, load and memory, random numbers, the \
                 file system types",
        calls: &[
            "uname",
            "sysinfo",
            "getrandom",
            "sysfs",
        ],
    },
    Allowed {
        title: "flushing to disk",
        reason: "writes cached data out to disk, the machine's or one file system's; it costs \
                 time and changes no file",
        calls: &["sync", "syncfs"],
    },
    Allowed {
        title: "not implemented",
        reason: "numbers the kernel reserves or no longer implements; it answers ENOSYS itself",
        calls: &[
            "_sysctl",
            "afs_syscall",
            "create_module",
            "get_kernel_syms",
            "query_module",
            "getpmsg",
            "putpmsg",
            "security",
            "tuxcall",
            "vserver",
            "epoll_ctl_old",
            "epoll_wait_old",
        ],
    },
    Allowed {
        title: "uprobe returns",
        reason: "made only by the kernel's own uprobe trampolines (it kills any other caller); \
                 recent kernels let them through before any filter runs, so no row could refuse \
                 them",
        calls: &["uretprobe", "uprobe"],
    },
];

/// Whether `name` is listed in [`ALLOWED`].
pub fn is_allowed(name: &str) -> bool {
    ALLOWED.iter().any(|group| group.calls.contains(&name))
}
