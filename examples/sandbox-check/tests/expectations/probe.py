"""The probes of the expectation list (expectations.rs), one per line of output: `name=ok` or
`name=ERRNO` (the symbolic errno, `EPERM`).

Written from the threat model (README.md, docs/sandbox.md), never from the filter's tables:
each probe makes a call the confined program must not get, with arguments a process holding no
capability could succeed with, or that the kernel would reject with an errno other than the one
the sandbox must give (EBADF on a bad descriptor, ENOENT on a missing path) before any check of
privilege. So the answer tells the sandbox apart from the kernel alone.

    probe.py run SIBLING INSIDE OUTSIDE     every probe in turn, in this process (confined run)
    probe.py control SIBLING INSIDE OUTSIDE every capability dropped as the launcher drops them,
                                            no_new_privs, a session of its own, no Landlock and
                                            no seccomp; each probe in a child of its own, so what
                                            one does (a user namespace, a session keyring) does
                                            not change the next
    probe.py sibling                        drop every capability, print `ready`, and sleep: the
                                            other process the probes aim at

SIBLING is that other process's ID. INSIDE is a folder the policy lets the program read, with the
files `f` (mode 0640, extended attribute `user.kept`), `r` and `u`; OUTSIDE is a folder it does
not list, with a file `f` carrying `user.kept` too.
"""

import ctypes
import errno
import os
import struct
import sys
import termios
import time

MACHINE = os.uname().machine

# Numbers from the kernel's own headers (asm/unistd_64.h, asm-generic/unistd.h); the calls since
# 424 share one number on every architecture.
_COMMON = dict(
    pidfd_send_signal=424, io_uring_setup=425, io_uring_enter=426, open_tree=428, move_mount=429,
    fsopen=430, fsconfig=431, fsmount=432, fspick=433, pidfd_open=434, clone3=435,
    mount_setattr=442, fchmodat2=452, statmount=457, listmount=458, file_setattr=469,
)
NR = dict(_COMMON, **{
    "x86_64": dict(
        ioctl=16, socket=41, connect=42, bind=49, listen=50, socketpair=53, clone=56, fork=57,
        execve=59, kill=62, semget=64, msgget=68, msgctl=71, fcntl=72, shmget=29, shmctl=31,
        semctl=66, ptrace=101, syslog=103, capset=126, rt_sigqueueinfo=129, setpriority=141,
        sched_setscheduler=144, vhangup=153, modify_ldt=154, pivot_root=155, prctl=157,
        chroot=161, acct=163, mount=165, umount2=166, swapon=167, swapoff=168, reboot=169,
        sethostname=170, iopl=172, ioperm=173, init_module=175, delete_module=176, setxattr=188,
        lsetxattr=189, fsetxattr=190, getxattr=191, listxattr=194, removexattr=197,
        fremovexattr=199, tkill=200, futex=202, sched_setaffinity=203, clock_settime=227,
        tgkill=234, mq_open=240, mq_unlink=241, kexec_load=246, add_key=248, request_key=249,
        keyctl=250, ioprio_set=251, inotify_add_watch=254, fchownat=260, fchmodat=268,
        get_robust_list=274, move_pages=279, utimensat=280, accept4=288, fanotify_init=300,
        prlimit64=302, name_to_handle_at=303, open_by_handle_at=304, setns=308,
        process_vm_readv=310, process_vm_writev=311, kcmp=312, finit_module=313,
        memfd_create=319, kexec_file_load=320, bpf=321, userfaultfd=323, perf_event_open=298,
        unshare=272, fchmod=91, fchown=93,
    ),
    "aarch64": dict(
        ioctl=29, socket=198, connect=203, bind=200, listen=201, socketpair=199, clone=220,
        execve=221, kill=129, semget=190, msgget=186, msgctl=187, fcntl=25, shmget=194,
        shmctl=195, semctl=191, ptrace=117, syslog=116, capset=91, rt_sigqueueinfo=138,
        setpriority=140, sched_setscheduler=119, vhangup=58, pivot_root=41, prctl=167,
        chroot=51, acct=89, mount=40, umount2=39, swapon=224, swapoff=225, reboot=142,
        sethostname=161, init_module=105, delete_module=106, setxattr=5, lsetxattr=6,
        fsetxattr=7, getxattr=8, listxattr=11, removexattr=14, fremovexattr=16, tkill=130,
        futex=98, sched_setaffinity=122, clock_settime=112, tgkill=131, mq_open=180,
        mq_unlink=181, kexec_load=104, add_key=217, request_key=218, keyctl=219, ioprio_set=30,
        inotify_add_watch=27, fchownat=54, fchmodat=53, get_robust_list=100, move_pages=239,
        utimensat=88, accept4=242, fanotify_init=262, prlimit64=261, name_to_handle_at=264,
        open_by_handle_at=265, setns=268, process_vm_readv=270, process_vm_writev=271,
        kcmp=272, finit_module=273, memfd_create=279, kexec_file_load=294, bpf=280,
        userfaultfd=282, perf_event_open=241, unshare=97, fchmod=52, fchown=55,
    ),
}[MACHINE])

AT_FDCWD = -100
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def call(name, *args):
    """The raw system call `name`; raises OSError with its errno when it fails."""
    arguments = []
    for a in args:
        if isinstance(a, bytes):
            a = ctypes.c_char_p(a)
        elif isinstance(a, int):
            a = ctypes.c_long(a)
        arguments.append(a)
    result = libc.syscall(ctypes.c_long(NR[name]), *arguments)
    if result < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return result


def close(fd):
    os.close(fd)


def buffer(data):
    """A writable copy of `data` the kernel may read or fill."""
    return ctypes.create_string_buffer(data, len(data))


PROBES = []


def probe(name, x86_64_only=False):
    def register(f):
        if not x86_64_only or MACHINE == "x86_64":
            PROBES.append((name, f))
        return f
    return register


def fork_like(name, *args):
    """A call that makes a process: the new one leaves at once."""
    pid = call(name, *args)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


# --- Files: read only the listed paths ------------------------------------------------------

@probe("read a file outside the policy")
def _():
    close(os.open(f"{OUTSIDE}/f", os.O_RDONLY))


@probe("list a folder outside the policy")
def _():
    os.listdir(OUTSIDE)


@probe("inotify_add_watch on a folder outside the policy")
def _():
    fd = libc.inotify_init1(0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    try:
        call("inotify_add_watch", fd, OUTSIDE.encode(), 0xfff)
    finally:
        close(fd)


@probe("fanotify_init unprivileged (FAN_REPORT_FID)")
def _():
    close(call("fanotify_init", 0x200, os.O_RDONLY))


@probe("getxattr of a file outside the policy")
def _():
    value = buffer(b"\0" * 64)
    call("getxattr", f"{OUTSIDE}/f".encode(), b"user.kept", value, 64)


@probe("listxattr of a file outside the policy")
def _():
    names = buffer(b"\0" * 256)
    call("listxattr", f"{OUTSIDE}/f".encode(), names, 256)


@probe("listmount of the mount tree")
def _():
    # struct mnt_id_req, version 0: size, spare, mnt_id = LSMT_ROOT, param.
    request = buffer(struct.pack("=IIQQ", 24, 0, 0xFFFFFFFFFFFFFFFF, 0))
    ids = buffer(b"\0" * 64)
    call("listmount", request, ids, 8, 0)


# --- Files: write none but /dev/null, change none in any other way ---------------------------

@probe("open a listed file to write")
def _():
    close(os.open(f"{INSIDE}/f", os.O_WRONLY))


@probe("open a listed file with O_TRUNC")
def _():
    close(os.open(f"{INSIDE}/f", os.O_RDONLY | os.O_TRUNC))


@probe("truncate a listed file")
def _():
    os.truncate(f"{INSIDE}/f", 9)


@probe("create a file in a listed folder")
def _():
    close(os.open(f"{INSIDE}/new", os.O_CREAT | os.O_WRONLY, 0o600))


@probe("create a file in the temporary folder")
def _():
    close(os.open(f"/tmp/sandbox-expect-{os.getpid()}", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
    os.unlink(f"/tmp/sandbox-expect-{os.getpid()}")


@probe("mkdir in a listed folder")
def _():
    os.mkdir(f"{INSIDE}/dir")


@probe("symlink in a listed folder")
def _():
    os.symlink("f", f"{INSIDE}/link")


@probe("hard link in a listed folder")
def _():
    os.link(f"{INSIDE}/f", f"{INSIDE}/hard")


@probe("mknod a FIFO in a listed folder")
def _():
    os.mkfifo(f"{INSIDE}/fifo")


@probe("rename a listed file")
def _():
    os.rename(f"{INSIDE}/r", f"{INSIDE}/r2")


@probe("unlink a listed file")
def _():
    os.unlink(f"{INSIDE}/u")


@probe("chmod a listed file to its own mode")
def _():
    call("fchmodat", AT_FDCWD, f"{INSIDE}/f".encode(), 0o640)


@probe("fchmodat2 a listed file to its own mode")
def _():
    call("fchmodat2", AT_FDCWD, f"{INSIDE}/f".encode(), 0o640, 0)


@probe("fchmod a descriptor opened to read")
def _():
    fd = os.open(f"{INSIDE}/f", os.O_RDONLY)
    try:
        call("fchmod", fd, 0o640)
    finally:
        close(fd)


@probe("chown a listed file to its own owner")
def _():
    st = os.stat(f"{INSIDE}/f")
    call("fchownat", AT_FDCWD, f"{INSIDE}/f".encode(), st.st_uid, st.st_gid, 0)


@probe("fchown a descriptor opened to read")
def _():
    fd = os.open(f"{INSIDE}/f", os.O_RDONLY)
    try:
        st = os.fstat(fd)
        call("fchown", fd, st.st_uid, st.st_gid)
    finally:
        close(fd)


@probe("setxattr user.* on a listed file")
def _():
    call("setxattr", f"{INSIDE}/f".encode(), b"user.new", b"1", 1, 0)


@probe("lsetxattr user.* on a listed file")
def _():
    call("lsetxattr", f"{INSIDE}/f".encode(), b"user.new", b"1", 1, 0)


@probe("fsetxattr user.* on a descriptor opened to read")
def _():
    fd = os.open(f"{INSIDE}/f", os.O_RDONLY)
    try:
        call("fsetxattr", fd, b"user.new", b"1", 1, 0)
    finally:
        close(fd)


@probe("removexattr of a listed file")
def _():
    call("removexattr", f"{INSIDE}/f".encode(), b"user.kept")


@probe("fremovexattr on a descriptor opened to read")
def _():
    fd = os.open(f"{INSIDE}/f", os.O_RDONLY)
    try:
        call("fremovexattr", fd, b"user.kept")
    finally:
        close(fd)


@probe("utimensat a listed file to now")
def _():
    call("utimensat", AT_FDCWD, f"{INSIDE}/f".encode(), 0, 0)


@probe("futimens a descriptor opened to read")
def _():
    fd = os.open(f"{INSIDE}/f", os.O_RDONLY)
    try:
        call("utimensat", fd, 0, 0, 0)
    finally:
        close(fd)


@probe("FS_IOC_SETFLAGS to the flags it has")
def _():
    fd = os.open(f"{INSIDE}/f", os.O_RDONLY)
    try:
        flags = buffer(b"\0" * 8)
        try:
            call("ioctl", fd, 0x80086601, flags)  # FS_IOC_GETFLAGS
        except OSError:
            pass  # no flags to read: setting zero is the same question
        call("ioctl", fd, 0x40086602, flags)  # FS_IOC_SETFLAGS
    finally:
        close(fd)


@probe("file_setattr of a listed file")
def _():
    attr = buffer(b"\0" * 24)  # struct file_attr, version 0
    call("file_setattr", AT_FDCWD, f"{INSIDE}/f".encode(), attr, 24, 0)


# --- Programs: execute only listed ones, start no process -------------------------------------

@probe("fork", x86_64_only=True)
def _():
    fork_like("fork")


@probe("clone a process (SIGCHLD)")
def _():
    fork_like("clone", 17, 0, 0, 0, 0)


@probe("clone3 a process")
def _():
    # struct clone_args, version 0: exit_signal = SIGCHLD, everything else 0.
    args = buffer(struct.pack("=8Q", 0, 0, 0, 0, 17, 0, 0, 0))
    fork_like("clone3", args, 64)


@probe("execve a program outside the exec list")
def _():
    os.execv("/usr/bin/true", ["true"])


@probe("memfd_create executable")
def _():
    close(call("memfd_create", b"probe", 0))


# --- Network: no socket ------------------------------------------------------------------------

@probe("socket AF_UNIX stream")
def _():
    close(call("socket", 1, 1, 0))


@probe("socket AF_INET datagram")
def _():
    close(call("socket", 2, 2, 0))


@probe("socket AF_INET6 datagram")
def _():
    close(call("socket", 10, 2, 0))


@probe("socket AF_NETLINK route")
def _():
    close(call("socket", 16, 3, 0))


@probe("socket AF_PACKET raw")
def _():
    close(call("socket", 17, 3, 0))


@probe("socketpair AF_UNIX")
def _():
    pair = buffer(b"\0" * 8)
    call("socketpair", 1, 1, 0, pair)
    for fd in struct.unpack("ii", pair.raw):
        close(fd)


@probe("connect standard input")
def _():
    address = buffer(struct.pack("=H", 1) + b"/nonexistent-sandbox-socket\0")
    call("connect", 0, address, len(address.raw))


@probe("bind standard input")
def _():
    address = buffer(struct.pack("=H", 1) + b"/nonexistent-sandbox-socket\0")
    call("bind", 0, address, len(address.raw))


@probe("listen on standard input")
def _():
    call("listen", 0, 1)


@probe("accept4 on standard input")
def _():
    call("accept4", 0, 0, 0, os.O_NONBLOCK)


# --- Other processes ------------------------------------------------------------------------

@probe("kill the sibling with signal 0")
def _():
    call("kill", SIBLING, 0)


@probe("kill every process (-1) with signal 0")
def _():
    call("kill", -1, 0)


@probe("tkill the sibling with signal 0")
def _():
    call("tkill", SIBLING, 0)


@probe("tgkill the sibling with signal 0")
def _():
    call("tgkill", SIBLING, SIBLING, 0)


@probe("rt_sigqueueinfo the sibling with signal 0")
def _():
    # siginfo: signo 0, errno 0, code SI_QUEUE (-1), then pid and uid.
    info = buffer(struct.pack("=iiiiI", 0, 0, -1, os.getpid(), os.getuid()) + b"\0" * 108)
    call("rt_sigqueueinfo", SIBLING, 0, info)


@probe("pidfd_open the sibling")
def _():
    close(call("pidfd_open", SIBLING, 0))


@probe("pidfd_send_signal on standard input")
def _():
    call("pidfd_send_signal", 0, 0, 0, 0)


@probe("fcntl F_SETOWN the sibling")
def _():
    call("fcntl", 1, 8, SIBLING)  # F_SETOWN
    call("fcntl", 1, 8, 0)


@probe("fcntl F_SETFL O_ASYNC")
def _():
    flags = call("fcntl", 1, 3, 0)  # F_GETFL
    call("fcntl", 1, 4, flags | 0o20000)  # F_SETFL, O_ASYNC
    call("fcntl", 1, 4, flags)


@probe("fcntl F_SETLEASE on a listed file")
def _():
    fd = os.open(f"{INSIDE}/f", os.O_RDONLY)
    try:
        call("fcntl", fd, 1024, 0)  # F_SETLEASE, F_RDLCK
        call("fcntl", fd, 1024, 2)  # F_UNLCK
    finally:
        close(fd)


@probe("ptrace PTRACE_TRACEME")
def _():
    call("ptrace", 0, 0, 0, 0)


@probe("ptrace PTRACE_SEIZE the sibling")
def _():
    call("ptrace", 0x4206, SIBLING, 0, 0)


def vm_call(name, pid):
    """Copies 8 bytes between this process's memory and `pid`'s, at an address of this process.
    In another process the address may be unmapped: EFAULT comes after the kernel's access
    check, so it still says the call was let through."""
    source, target = buffer(b"probe..."), buffer(b"\0" * 8)
    iov = lambda b: buffer(struct.pack("=QQ", ctypes.addressof(b), 8))
    if name == "process_vm_readv":
        local, remote = iov(target), iov(source)
    else:
        local, remote = iov(source), iov(target)
    call(name, pid, local, 1, remote, 1, 0)


@probe("process_vm_readv of its own memory")
def _():
    # Landlock lets a process read its own memory; with its own ID only the filter can refuse.
    vm_call("process_vm_readv", os.getpid())


@probe("process_vm_writev of its own memory")
def _():
    vm_call("process_vm_writev", os.getpid())


@probe("process_vm_readv of the sibling")
def _():
    vm_call("process_vm_readv", SIBLING)


@probe("kcmp the sibling")
def _():
    call("kcmp", os.getpid(), SIBLING, 1, 0, 0)  # KCMP_VM


@probe("get_robust_list of the sibling")
def _():
    head, size = buffer(b"\0" * 8), buffer(b"\0" * 8)
    call("get_robust_list", SIBLING, head, size)


@probe("prlimit64 reads the sibling's limit")
def _():
    old = buffer(b"\0" * 16)
    call("prlimit64", SIBLING, 7, 0, old)  # RLIMIT_NOFILE


@probe("setpriority of the sibling")
def _():
    call("setpriority", 0, SIBLING, 5)  # PRIO_PROCESS


@probe("sched_setaffinity of the sibling")
def _():
    mask = buffer(b"\xff" * 128)
    call("sched_setaffinity", SIBLING, 128, mask)


@probe("sched_setscheduler of the sibling (SCHED_OTHER)")
def _():
    param = buffer(b"\0" * 4)
    call("sched_setscheduler", SIBLING, 0, param)


@probe("ioprio_set of the sibling")
def _():
    call("ioprio_set", 1, SIBLING, (2 << 13) | 4)  # IOPRIO_WHO_PROCESS, best effort 4


@probe("move_pages of the sibling (query)")
def _():
    call("move_pages", SIBLING, 0, 0, 0, 0, 0)


@probe("shmget a private segment")
def _():
    call("shmctl", call("shmget", 0, 4096, 0o600), 0, 0)  # IPC_RMID


@probe("msgget a private queue")
def _():
    call("msgctl", call("msgget", 0, 0o600), 0, 0)


@probe("semget a private set")
def _():
    call("semctl", call("semget", 0, 1, 0o600), 0, 0, 0)


@probe("mq_open a new queue")
def _():
    name = f"sandbox-expect-{os.getpid()}".encode()
    close(call("mq_open", name, os.O_CREAT | os.O_RDWR, 0o600, 0))
    call("mq_unlink", name)


@probe("futex FUTEX_CMP_REQUEUE, shared")
def _():
    word = buffer(b"\0" * 8)
    # Moves no waiter (there are none), from the word to the next one, when the word is 0;
    # without FUTEX_PRIVATE_FLAG, so the futexes could be another process's.
    call("futex", word, 4, 0, 1, ctypes.addressof(word) + 4, 0)


@probe("prlimit64 sets its own RLIMIT_CORE to what it is")
def _():
    old = buffer(b"\0" * 16)
    call("prlimit64", 0, 4, 0, old)  # RLIMIT_CORE, read
    call("prlimit64", 0, 4, old, 0)


@probe("TIOCSTI into the terminal")
def _():
    c = buffer(b"x")
    call("ioctl", 0, termios.TIOCSTI, c)


@probe("tcsetattr on the terminal")
def _():
    termios.tcsetattr(0, termios.TCSANOW, termios.tcgetattr(0))


@probe("TIOCSWINSZ on the terminal")
def _():
    size = buffer(b"\0" * 8)
    call("ioctl", 0, termios.TIOCGWINSZ, size)
    call("ioctl", 0, termios.TIOCSWINSZ, size)


@probe("vhangup")
def _():
    call("vhangup")


# --- The kernel's attack surface ------------------------------------------------------------

@probe("userfaultfd UFFD_USER_MODE_ONLY")
def _():
    close(call("userfaultfd", 1 | os.O_CLOEXEC))


@probe("perf_event_open on its own task, user space only")
def _():
    # struct perf_event_attr, version 0: PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, disabled,
    # exclude_kernel, exclude_hv.
    attr = buffer(struct.pack("=IIQQQQQIIQ", 1, 64, 1, 0, 0, 0, 1 | 1 << 5 | 1 << 6, 0, 0, 0))
    close(call("perf_event_open", attr, 0, -1, -1, 8))  # PERF_FLAG_FD_CLOEXEC


@probe("bpf BPF_OBJ_GET_INFO_BY_FD on standard input")
def _():
    attr = buffer(b"\0" * 16)  # bpf_fd 0, info_len 0, info NULL
    call("bpf", 15, attr, 16)


@probe("bpf BPF_PROG_LOAD a socket filter")
def _():
    insns = buffer(struct.pack("=BBhiBBhi", 0xB7, 0, 0, 0, 0x95, 0, 0, 0))  # r0 = 0; exit
    license_ = buffer(b"GPL\0")
    attr = buffer(struct.pack("=IIQQ", 1, 2, ctypes.addressof(insns), ctypes.addressof(license_))
                  + b"\0" * 104)
    close(call("bpf", 5, attr, 128))


@probe("keyctl KEYCTL_JOIN_SESSION_KEYRING")
def _():
    call("keyctl", 1, 0)


@probe("add_key to its process keyring")
def _():
    call("add_key", b"user", b"sandbox-expect", b"x", 1, -2)  # KEY_SPEC_PROCESS_KEYRING


@probe("request_key of a missing key")
def _():
    call("request_key", b"user", b"sandbox-expect-absent", 0, 0)


@probe("io_uring_setup")
def _():
    params = buffer(b"\0" * 120)
    close(call("io_uring_setup", 1, params))


@probe("io_uring_enter on a bad descriptor")
def _():
    call("io_uring_enter", -1, 0, 0, 0, 0, 0)


@probe("unshare CLONE_NEWUSER")
def _():
    call("unshare", 0x10000000)


@probe("unshare CLONE_NEWNS")
def _():
    call("unshare", 0x00020000)


@probe("setns on standard input")
def _():
    call("setns", 0, 0)


@probe("mount onto a missing folder")
def _():
    call("mount", b"none", b"/nonexistent-sandbox-expect", b"tmpfs", 0, 0)


@probe("umount2 a missing folder")
def _():
    call("umount2", b"/nonexistent-sandbox-expect", 0)


@probe("pivot_root to missing folders")
def _():
    call("pivot_root", b"/nonexistent-sandbox-expect", b"/nonexistent-sandbox-expect/old")


@probe("chroot to a missing folder")
def _():
    call("chroot", b"/nonexistent-sandbox-expect")


@probe("fsopen tmpfs")
def _():
    close(call("fsopen", b"tmpfs", 1))  # FSOPEN_CLOEXEC


@probe("fsconfig on a bad descriptor")
def _():
    call("fsconfig", -1, 0, b"ro", 0, 0)  # FSCONFIG_SET_FLAG


@probe("fsmount on a bad descriptor")
def _():
    call("fsmount", -1, 0, 0)


@probe("fspick a listed folder")
def _():
    close(call("fspick", AT_FDCWD, b"/usr", 1))  # FSPICK_CLOEXEC


@probe("move_mount from a bad descriptor")
def _():
    call("move_mount", -1, b"", AT_FDCWD, b"/nonexistent-sandbox-expect", 4)  # F_EMPTY_PATH


@probe("open_tree of a listed folder")
def _():
    close(call("open_tree", AT_FDCWD, b"/usr", 0o2000000))  # O_CLOEXEC


@probe("mount_setattr on a bad descriptor")
def _():
    attr = buffer(b"\0" * 32)
    call("mount_setattr", -1, b"", 0x1000, attr, 32)  # AT_EMPTY_PATH


@probe("name_to_handle_at of a listed folder")
def _():
    handle = buffer(struct.pack("=Ii", 128, 0) + b"\0" * 128)
    mount_id = buffer(b"\0" * 4)
    call("name_to_handle_at", AT_FDCWD, b"/usr", handle, mount_id, 0)


@probe("open_by_handle_at with a bad mount descriptor")
def _():
    handle = buffer(struct.pack("=Ii", 8, 1) + b"\0" * 8)
    call("open_by_handle_at", -1, handle, 0)


@probe("init_module of nothing")
def _():
    call("init_module", 0, 0, b"")


@probe("finit_module on a bad descriptor")
def _():
    call("finit_module", -1, b"", 0)


@probe("delete_module of a missing module")
def _():
    call("delete_module", b"sandbox_expect_absent", 0o4000)  # O_NONBLOCK


@probe("kexec_load of nothing")
def _():
    call("kexec_load", 0, 0, 0, 0)


@probe("kexec_file_load on bad descriptors")
def _():
    call("kexec_file_load", -1, -1, 0, b"", 0)


@probe("swapon a missing file")
def _():
    call("swapon", b"/nonexistent-sandbox-expect", 0)


@probe("swapoff a missing file")
def _():
    call("swapoff", b"/nonexistent-sandbox-expect")


@probe("reboot with a wrong magic number")
def _():
    call("reboot", 0, 0, 0, 0)


@probe("syslog SYSLOG_ACTION_SIZE_BUFFER")
def _():
    call("syslog", 10, 0, 0)


@probe("acct off")
def _():
    call("acct", 0)


@probe("ioperm turning ports off", x86_64_only=True)
def _():
    call("ioperm", 0x80, 1, 0)


@probe("iopl 0", x86_64_only=True)
def _():
    call("iopl", 0)


@probe("modify_ldt read", x86_64_only=True)
def _():
    table = buffer(b"\0" * 16)
    call("modify_ldt", 0, table, 16)


@probe("sethostname to its own name")
def _():
    name = os.uname().nodename.encode()
    call("sethostname", name, len(name))


@probe("clock_settime to the time it is")
def _():
    now = time.clock_gettime_ns(time.CLOCK_REALTIME)
    spec = buffer(struct.pack("=qq", now // 10**9, now % 10**9))
    call("clock_settime", 0, spec)


# --- No capability regained -------------------------------------------------------------------

@probe("capset every capability")
def _():
    header = buffer(struct.pack("=Ii", 0x20080522, 0))
    data = buffer(struct.pack("=6I", *[0xFFFFFFFF] * 6))
    call("capset", header, data)


@probe("prctl PR_CAP_AMBIENT_RAISE CAP_SYS_ADMIN")
def _():
    call("prctl", 47, 2, 21, 0, 0)


@probe("prctl PR_SET_SECUREBITS 0")
def _():
    call("prctl", 28, 0, 0, 0, 0)


# --- Running --------------------------------------------------------------------------------

def answer(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    except termios.error as e:
        code = e.args[0]
        return errno.errorcode.get(code, str(code))


def in_child(f):
    """Runs `f` in a child of its own and returns its answer. A child that `exec`s another
    program and exits 0 without answering counts as `ok`."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        result = answer(f)
        os.write(write_end, result.encode())
        os._exit(0)
    os.close(write_end)
    result = b""
    while True:
        chunk = os.read(read_end, 64)
        if not chunk:
            break
        result += chunk
    os.close(read_end)
    while True:
        _, status = os.waitpid(pid, 0)
        if os.WIFSTOPPED(status):  # a traced child stopped by a signal: end it
            os.kill(pid, 9)
            continue
        break
    if result:
        return result.decode()
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return "ok"
    return f"no answer (status {status})"


def drop_capabilities():
    """As the launcher does before Landlock: empty the bounding set, lock every securebit but
    KEEP_CAPS, clear the ambient set, empty the other sets; then no_new_privs."""
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    prctl = libc.prctl
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                      ctypes.c_ulong]
    def status():
        return dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines()
                    if ":\t" in line)
    # As the launcher decides: without CAP_SETPCAP (an ordinary user) the bounding set and the
    # securebits cannot change, and hold nothing the process could use.
    could_set_pcap = int(status()["CapEff"], 16) & (1 << 8) != 0
    if could_set_pcap:
        for cap in range(last + 1):
            if prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), f"dropping capability {cap}")
        if prctl(28, 0b11101111, 0, 0, 0) != 0:  # PR_SET_SECUREBITS
            raise OSError(ctypes.get_errno(), "locking the securebits")
    if prctl(47, 4, 0, 0, 0) != 0:  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
        raise OSError(ctypes.get_errno(), "clearing the ambient set")
    header = buffer(struct.pack("=Ii", 0x20080522, 0))
    call("capset", header, buffer(b"\0" * 24))
    if prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    fields = status()
    for field in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"]:
        print(f"status {field}={fields[field].strip()}", flush=True)
    for field in ["CapInh", "CapPrm", "CapEff", "CapAmb"]:
        if int(fields[field], 16) != 0:
            raise SystemExit(f"the control still holds {field} {fields[field]}")
    if could_set_pcap and int(fields["CapBnd"], 16) != 0:
        raise SystemExit(f"the control still holds CapBnd {fields['CapBnd']}")
    if fields["Seccomp"].strip() != "0":
        raise SystemExit("the control runs under seccomp")


def main():
    global SIBLING, INSIDE, OUTSIDE
    mode = sys.argv[1]
    if mode == "sibling":
        drop_capabilities()
        print("ready", flush=True)
        time.sleep(600)
        return
    SIBLING, INSIDE, OUTSIDE = int(sys.argv[2]), sys.argv[3], sys.argv[4]
    if mode == "control":
        drop_capabilities()
        try:
            os.setsid()
        except PermissionError:
            pass  # already the leader of a process group, which a session leader is too
        for name, f in PROBES:
            print(f"{name}={in_child(f)}", flush=True)
    elif mode == "run":
        for name, f in PROBES:
            print(f"{name}={answer(f)}", flush=True)
    else:
        raise SystemExit(f"unknown mode {mode}")


main()
