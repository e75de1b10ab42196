"""Makes each call of the probe list (sandbox-linux/tests/probes/list.rs) and prints its answer,
one line a call: `INDEX=ok` or `INDEX=ERRNO` (the number).

    syscall.py run LIST      in this process: the confined run
    syscall.py control LIST  first drop every capability, set no_new_privs and start a session
                             of its own, as the launcher does, with no Landlock and no seccomp

LIST holds one call a line: `INDEX NR A0 A1 A2 A3 A4 A5 FORKS`, each argument a number or `P`
(this process's ID) or `-P` (its negation, its group once it leads a session). FORKS is 1 for a
call that would start a process if the filter let it through: its child exits at once, and the
control leaves it out (`INDEX=skipped`). The process runs under RLIMIT_NPROC 0 first, so an
ordinary user's fork fails even then.
"""

import ctypes
import os
import resource
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def drop_capabilities():
    # struct __user_cap_header_struct { u32 version; int pid; } with _LINUX_CAPABILITY_VERSION_3,
    # and two zeroed struct __user_cap_data_struct: nothing effective, permitted or inheritable.
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    os.setsid()


def value(token):
    if token == "P":
        return os.getpid()
    if token == "-P":
        return -os.getpid()
    return int(token)


def main():
    mode, listing = sys.argv[1], sys.argv[2]
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    if mode == "control":
        drop_capabilities()
    for line in listing.splitlines():
        index, nr, *rest = line.split()
        *args, forks = rest
        if forks == "1" and mode == "control":
            print(f"{index}=skipped", flush=True)
            continue
        ctypes.set_errno(0)
        result = libc.syscall(ctypes.c_long(int(nr)), *(ctypes.c_long(value(a)) for a in args))
        if forks == "1" and result == 0:
            os._exit(0)
        answer = ctypes.get_errno() if result == -1 else "ok"
        # Line by line, so a probe that kills the process still leaves the answers before it.
        print(f"{index}={answer}", flush=True)


main()
