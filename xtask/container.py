#!/usr/bin/python3
"""Runs a command in a container made the way Docker makes one, with `runc` and no image.

    container.py KIND -- PROGRAM [ARGS]...

KIND is `defaults` (root, Docker's 14 capabilities, its seccomp profile, a writable /tmp as the
image's writable layer gives), `read-only` (the same with a read-only root and no writable /tmp,
as `docker run --read-only`), `user` (uid and gid 1000 with no effective capability, as
`--user 1000`), `sys-admin` (`--cap-add SYS_ADMIN`), `bare-etc` (as `defaults`, but its `/etc`
holds only the few files a minimal image has, copied from the host, and no `/etc/ld.so.cache`
or `/etc/localtime`: as distroless or Alpine-like images and roots assembled from a host's
folders are) or `rootless` (run by an ordinary user: the
container's root is that user, mapped in a user namespace, as rootless podman makes it). The seccomp profile is the one Debian 12's
`golang-github-containers-common` (later: `containers-common`) ships for podman (`/usr/share/containers/seccomp.json`, Docker's profile in
Docker's format); its rules that depend on capabilities or architectures are resolved here for
the capabilities the container gets, as Docker does before handing the profile to runc.

The root is the host's `/usr`, `/etc` and the folders named below, bound read-only: no image can
be pulled on the machines this runs on. The exit status is the container's (runc's); a program
killed by a signal shows as 128 + the signal, as `docker run` shows it.
"""

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

PROFILE = "/usr/share/containers/seccomp.json"

# What `docker run` grants by default (moby's `DefaultCapabilities`).
DOCKER_CAPS = [
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
    "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
]

ARCH = {"x86_64": ("amd64", "SCMP_ARCH_X86_64"), "aarch64": ("arm64", "SCMP_ARCH_AARCH64")}

# Folders of the host bound read-only into the container's root.
BOUND = ["/usr", "/etc", "/opt", "/root", "/home", "/var", "/work"]

# The `bare-etc` root's whole /etc: what a minimal image ships, copied from the host. No loader
# cache: the point of the kind.
BARE_ETC = ["passwd", "group", "nsswitch.conf", "hosts"]


def kernel_at_least(version):
    have = [int(p) for p in platform.release().split("-")[0].split(".")[:2]]
    want = [int(p) for p in version.split(".")[:2]]
    return have >= want


def resolve(profile, caps):
    """Docker's profile format to the OCI runtime's: each rule kept only where its `includes`
    hold and its `excludes` do not, for these capabilities on this architecture."""
    arch, scmp = ARCH[platform.machine()]
    rules = []
    for rule in profile["syscalls"]:
        inc, exc = rule.get("includes", {}), rule.get("excludes", {})
        if inc.get("caps") and not all(c in caps for c in inc["caps"]):
            continue
        if inc.get("arches") and arch not in inc["arches"]:
            continue
        if inc.get("minKernel") and not kernel_at_least(inc["minKernel"]):
            continue
        if any(c in caps for c in exc.get("caps", [])) or arch in exc.get("arches", []):
            continue
        out = {"names": rule["names"], "action": rule["action"]}
        for key in ("args", "errnoRet"):
            if rule.get(key) is not None:
                out[key] = rule[key]
        rules.append(out)
    arches = [scmp]
    for entry in profile.get("archMap", []):
        if entry["architecture"] == scmp:
            arches += entry.get("subArchitectures", [])
    seccomp = {"defaultAction": profile["defaultAction"], "architectures": arches,
               "syscalls": rules}
    if "defaultErrnoRet" in profile:
        seccomp["defaultErrnoRet"] = profile["defaultErrnoRet"]
    return seccomp


def config(kind, argv, bundle):
    caps = list(DOCKER_CAPS) + (["CAP_SYS_ADMIN"] if kind == "sys-admin" else [])
    effective = [] if kind == "user" else caps
    env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME=" + ("/" if kind == "user" else "/root")]
    for key in ("TMPDIR", "XDG_RUNTIME_DIR", "LANG"):
        if key in os.environ:
            env.append(f"{key}={os.environ[key]}")
    with open(PROFILE) as f:
        seccomp = resolve(json.load(f), caps)
    mounts = [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
         "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
         "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs",
         "options": ["nosuid", "noexec", "nodev", "ro"]},
        {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
         "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]},
    ]
    for folder in BOUND:
        if kind == "bare-etc" and folder == "/etc":
            continue
        if os.path.isdir(folder) and not os.path.islink(folder):
            mounts.append({"destination": folder, "type": "bind", "source": folder,
                           "options": ["rbind", "ro"]})
    if kind != "read-only":
        mounts.append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                       "options": ["nosuid", "nodev", "mode=1777"]})
    # The program's own folder, wherever the checkout is, and last: CI clones under /tmp, and a
    # mount made after it on /tmp would hide it.
    program_dir = os.path.dirname(os.path.realpath(argv[0]))
    mounts.append({"destination": program_dir, "type": "bind", "source": program_dir,
                   "options": ["rbind", "ro"]})
    namespaces = ["pid", "network", "ipc", "uts", "mount", "cgroup"]
    linux_extra = {}
    if kind == "rootless":
        namespaces.append("user")
        linux_extra = {
            "uidMappings": [{"containerID": 0, "hostID": os.getuid(), "size": 1}],
            "gidMappings": [{"containerID": 0, "hostID": os.getgid(), "size": 1}],
        }
        # An ordinary user may not mount sysfs or cgroup outside a network namespace it owns,
        # nor make device nodes: as rootless podman does, bind the host's instead.
        for m in mounts:
            if m["type"] in ("sysfs", "cgroup"):
                m.update({"type": "bind", "source": m["destination"],
                          "options": ["rbind", "nosuid", "noexec", "nodev", "ro"]})
        mounts = [m for m in mounts if m["destination"] not in ("/dev/pts", "/dev/mqueue")]
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": 1000, "gid": 1000} if kind == "user" else {"uid": 0, "gid": 0},
            "args": argv,
            "env": env,
            "cwd": "/",
            "capabilities": {"bounding": caps, "effective": effective,
                             "permitted": effective, "inheritable": []},
            "noNewPrivileges": False,
        },
        "root": {"path": os.path.join(bundle, "rootfs"), "readonly": True},
        "hostname": "container",
        "mounts": mounts,
        "linux": {
            "namespaces": [{"type": t} for t in namespaces],
            **linux_extra,
            "seccomp": seccomp,
            "maskedPaths": ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
                            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                            "/proc/sched_debug", "/proc/scsi", "/sys/firmware"],
            "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                              "/proc/sysrq-trigger"],
        },
    }


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    kind, argv = sys.argv[1], sys.argv[3:]
    runc = shutil.which("runc")
    if runc is None:
        sys.exit("container.py: runc is not installed")
    bundle = tempfile.mkdtemp(prefix="sandbox-container-")
    try:
        rootfs = os.path.join(bundle, "rootfs")
        os.mkdir(rootfs)
        for name in ("bin", "lib", "lib64", "sbin"):
            target = os.path.join("/", name)
            if os.path.islink(target):
                os.symlink(os.readlink(target), os.path.join(rootfs, name))
        for name in ("proc", "dev", "sys", "tmp"):
            os.mkdir(os.path.join(rootfs, name))
        if kind == "bare-etc":
            etc = os.path.join(rootfs, "etc")
            os.mkdir(etc)
            for name in BARE_ETC:
                if os.path.isfile(os.path.join("/etc", name)):
                    shutil.copyfile(os.path.join("/etc", name), os.path.join(etc, name))
        with open(os.path.join(bundle, "config.json"), "w") as f:
            json.dump(config(kind, argv, bundle), f)
        name = f"sandbox-matrix-{os.getpid()}"
        state = []
        if kind == "rootless":
            # runc keeps its state in a folder the user owns.
            state = ["--root", os.path.join(bundle, "state"), "--rootless", "true"]
        done = subprocess.run([runc, *state, "run", "--bundle", bundle, name])
        subprocess.run([runc, *state, "delete", "--force", name], stderr=subprocess.DEVNULL)
        sys.exit(done.returncode if done.returncode >= 0 else 128 - done.returncode)
    finally:
        shutil.rmtree(bundle, ignore_errors=True)


if __name__ == "__main__":
    main()
