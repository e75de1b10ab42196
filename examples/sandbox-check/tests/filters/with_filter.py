"""Runs a command under a seccomp filter, as a service manager or a container runtime would put
one in place: `with_filter.py kill|eperm CALL[,CALL...] -- COMMAND...`. The named calls are
killed (SECCOMP_RET_KILL_PROCESS) or answered EPERM; every other call is allowed.

`with_filter.py ACTION CALLS --as-container -- COMMAND...` installs the filter as a container
runtime does: with CAP_SYS_ADMIN (so as root) and without setting no_new_privs, which then stays
unset for COMMAND."""
import ctypes, os, platform, struct, sys

NUMBERS = {
    "x86_64": {"landlock_create_ruleset": 444, "landlock_add_rule": 445,
               "landlock_restrict_self": 446, "seccomp": 317, "setns": 308,
               "unshare": 272, "mount": 165, "ptrace": 101},
    "aarch64": {"landlock_create_ruleset": 444, "landlock_add_rule": 445,
                "landlock_restrict_self": 446, "seccomp": 277, "setns": 268,
                "unshare": 97, "mount": 40, "ptrace": 117},
}[platform.machine()]
action, calls = sys.argv[1], sys.argv[2].split(",")
command = sys.argv[sys.argv.index("--") + 1:]
as_container = "--as-container" in sys.argv[3:sys.argv.index("--")]
refuse = 0x80000000 if action == "kill" else 0x00050000 | 1
program = [struct.pack("HBBI", 0x20, 0, 0, 0)]  # load the call's number
for name in calls:
    program.append(struct.pack("HBBI", 0x15, 0, 1, NUMBERS[name]))  # equal: next; else skip
    program.append(struct.pack("HBBI", 0x06, 0, 0, refuse))
program.append(struct.pack("HBBI", 0x06, 0, 0, 0x7FFF0000))  # allow
code = b"".join(program)
buffer = ctypes.create_string_buffer(code)
fprog = struct.pack("HL", len(program), ctypes.addressof(buffer))
libc = ctypes.CDLL(None, use_errno=True)
if not as_container and libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
    sys.exit("no_new_privs: " + os.strerror(ctypes.get_errno()))
prog = ctypes.create_string_buffer(fprog)
if libc.prctl(22, 2, ctypes.c_void_p(ctypes.addressof(prog)), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
    sys.exit("seccomp: " + os.strerror(ctypes.get_errno()))
os.execv(command[0], command)
