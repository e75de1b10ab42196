"""Runs a command under systemd's `SystemCallFilter=@system-service` as a unit would get it:
`system_service.py kill|eperm [EXTRA,CALLS] -- COMMAND...`.

The set is systemd's own, expanded by `systemd-analyze syscall-filter` (groups within groups),
and the filter is built with libseccomp, as systemd builds it: every call outside the set (and
EXTRA) kills the process (`kill`, systemd's default action) or is answered EPERM (`eperm`, as
with `SystemCallErrorNumber=EPERM`). Run as root, the filter is installed the way systemd
installs it for a unit without `NoNewPrivileges=`: with CAP_SYS_ADMIN, leaving no_new_privs
unset; otherwise no_new_privs is set first, as the kernel then requires."""
import ctypes
import os
import subprocess
import sys

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO_EPERM = 0x00050000 | 1


def expand(group, seen):
    """The calls of `group`, following `@groups` inside it."""
    listing = subprocess.run(["systemd-analyze", "syscall-filter", group],
                             capture_output=True, text=True, check=True).stdout
    calls = set()
    for line in listing.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        if word.startswith("@"):
            if word not in seen:
                seen.add(word)
                calls |= expand(word, seen)
        else:
            calls.add(word)
    return calls


def main():
    action = sys.argv[1]
    split = sys.argv.index("--")
    extra = sys.argv[2].split(",") if split > 2 and sys.argv[2] else []
    command = sys.argv[split + 1:]
    calls = expand("@system-service", {"@system-service"}) | set(extra)
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                     ctypes.c_uint]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    default = SCMP_ACT_KILL_PROCESS if action == "kill" else SCMP_ACT_ERRNO_EPERM
    ctx = lib.seccomp_init(default)
    if not ctx:
        sys.exit("seccomp_init failed")
    for name in sorted(calls):
        number = lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:
            continue  # a call of another architecture (oldolduname, the *32 calls)
        if lib.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, number, 0) != 0:
            sys.exit(f"seccomp_rule_add {name} failed")
    if os.geteuid() != 0:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            sys.exit("no_new_privs: " + os.strerror(ctypes.get_errno()))
    else:
        # libseccomp sets no_new_privs by default; systemd turns that off when it may.
        SCMP_FLTATR_CTL_NNP = 3
        lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        if lib.seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0:
            sys.exit("seccomp_attr_set failed")
    if lib.seccomp_load(ctx) != 0:
        sys.exit("seccomp_load failed")
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
