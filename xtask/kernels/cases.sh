# The cases `cargo xtask kernels` runs on every kernel it boots. The commands are the same on
# every kernel; what each must print and exit with depends on the kernel, and is asserted on the
# host (xtask/src/kernels.rs). Each step prints, on the serial console:
#
#   @@begin ID@@
#   @@ID| a line the command printed (standard output and standard error together)
#   @@end ID exit=N@@
#
# Lines the kernel prints in between carry no `@@ID|` prefix and are ignored. Every `*-control`
# step is the same action unconfined: it must work here, so a refusal under sandbox-check is the
# sandbox's doing, not the guest's.

B=/bin/busybox
SC=/sandbox-check

run() {
    id=$1
    shift
    echo "@@begin $id@@"
    { "$@" </dev/null 2>&1; echo "$?" >"/tmp/.exit-$id"; } | while IFS= read -r line || [ -n "$line" ]; do
        echo "@@$id| $line"
    done
    echo "@@end $id exit=$($B cat "/tmp/.exit-$id")@@"
}

# What was booted.
run uname $B uname -r -m
run lsm $B cat /sys/kernel/security/lsm

# The self-test: the launcher's attempts and the extras, one line each.
run selftest $SC

# A launch whose program prints a marker it computes, so the command line never contains it.
run marker $SC --exec $B -- $B sh -c 'echo marker-$((6 * 7))'

# Writing: a new file, and appending to one that exists (made by the control). Both go through
# open(2), where Landlock answers; afterwards, unconfined, neither changed.
run write-control $B sh -c 'echo control > /tmp/control-written; cat /tmp/control-written'
run write $SC --exec $B -- $B sh -c 'echo marker-$((6 * 7)) > /tmp/written'
run append $SC --exec $B -- $B sh -c 'echo marker-$((6 * 7)) >> /tmp/control-written'
run written $B sh -c 'if [ -e /tmp/written ]; then echo "/tmp/written exists"; else echo "/tmp/written absent"; fi; cat /tmp/control-written'

# Opening a socket (TCP to a closed port: unconfined the socket opens and the connection is
# refused).
run socket-control $B nc 127.0.0.1 9
run socket $SC --exec $B -- $B nc 127.0.0.1 9

# Starting a process.
run process-control $B sh -c "$B sleep 0 & wait \$!; echo child exited \$?"
run process $SC --exec $B -- $B sh -c "$B sleep 0 & wait \$!; echo child exited \$?"

# clone3 and a thread (probe.rs).
run probe-control /probe
run probe $SC --exec /probe -- /probe

# A crash. Where core_pattern is a pipe (systemd-coredump, apport), the kernel starts the helper
# it names as root, outside every sandbox, whatever RLIMIT_CORE says, except when it is exactly
# 1. The helper here leaves a marker; unconfined it must run, confined it must not.
run core-pattern $B sh -c 'echo "|/core-helper %p" > /proc/sys/kernel/core_pattern; cat /proc/sys/kernel/core_pattern'
run crash-control $B sh -c 'kill -SEGV $$'
run helper-control $B sh -c "$B sleep 1; $B ls /tmp | $B grep -c core-helper-ran; $B rm -f /tmp/core-helper-ran-*"
run crash $SC --exec $B -- $B sh -c 'kill -SEGV $$'
run helper $B sh -c "$B sleep 1; $B ls /tmp | $B grep -c core-helper-ran"

# Real-time scheduling: the application's limit allows it (a full root may raise it), the
# program's must not.
run rtprio-control $B sh -c 'ulimit -r 99; ulimit -r'
run rtprio $B sh -c "ulimit -r 99; $SC --exec $B -- $B sh -c 'ulimit -r'"

# The launch's own cgroup (the guest mounts cgroup v2): the program sits in sandbox-<pid> with
# the default memory and task bounds. Shell built-ins only, since the program can start nothing.
run cgroup $SC --exec $B --read /proc --read /sys/fs/cgroup -- $B sh -c 'read l < /proc/self/cgroup; echo "${l%%-*}"; read m < "/sys/fs/cgroup${l#0::}/memory.max"; echo "memory.max $m"; read p < "/sys/fs/cgroup${l#0::}/pids.max"; echo "pids.max $p"'

# Whether a launch moves a process into its cgroup: the kernel's cgroup_attach_task event fires
# for every move (cgroup.procs, or a thread by `tasks`), never for a process created inside a
# cgroup (clone3 with CLONE_INTO_CGROUP). The control moves a shell by cgroup.procs: one event.
# Then a whole launch, its cgroup made by sandbox-check and the launcher created inside it where
# the build trusts its C library with a raw clone (x86_64's glibc): no event into a launch's
# cgroup. aarch64's musl build forks plainly and the launcher moves itself in: one.
run attach-control $B sh -c "$B mount -t tracefs nodev /sys/kernel/tracing; T=/sys/kernel/tracing; echo 1 > \$T/events/cgroup/cgroup_attach_task/enable; echo > \$T/trace; $B mkdir /sys/fs/cgroup/moved; $B sh -c 'echo \$\$ > /sys/fs/cgroup/moved/cgroup.procs'; $B grep -c 'dst_path=/moved ' \$T/trace"
run attach $B sh -c "T=/sys/kernel/tracing; echo > \$T/trace; $SC --exec $B -- $B true; $B grep -c 'dst_path=/sandbox-' \$T/trace"

# The same count for the library's own launches (threaded-launcher, an application of it): a
# launch server's child and a single-threaded application's forked launch sequence are created
# inside their cgroup as sandbox-check's launcher is; an application with threads cannot fork
# soundly, executes a launcher, and that launcher moves itself in. The served launch, 300 ms
# after the server started, runs in a child the server parked: where that child had to move into
# its cgroup (aarch64's musl build), it moved while parked, named sandbox-parked, and those moves
# are left out of the count: none is on a launch's way.
TL=/threaded-launcher
run attach-served $B sh -c "T=/sys/kernel/tracing; echo > \$T/trace; $TL --via server --settle-ms 300 --exec $B -- $B true; $B grep 'dst_path=/sandbox-' \$T/trace | $B grep -vc 'comm=sandbox-parked'"
run attach-forked $B sh -c "T=/sys/kernel/tracing; echo > \$T/trace; $TL --via sandbox --exec $B -- $B true; $B grep -c 'dst_path=/sandbox-' \$T/trace"
run attach-threaded $B sh -c "T=/sys/kernel/tracing; echo > \$T/trace; $TL --via sandbox --threads 2 --exec $B -- $B true; $B grep -c 'dst_path=/sandbox-' \$T/trace"

# Memory held in a memory file counts in no RLIMIT_AS, only in the launch's memory cgroup: with a
# 64 MiB bound the program, not sandbox-check, is killed on the way to 128 MiB; unconfined it
# holds them.
run memfd-control /probe memfd 128
run memfd $SC --memory 64M --exec /probe -- /probe memfd 128

# A subtree delegated to an ordinary user, as systemd's Delegate= makes one: the user (1000) owns
# the folder and its cgroup.procs, cgroup.subtree_control and cgroup.threads, and the shell that
# becomes its sandbox-check sits in it. The launch moves it into a leaf once, enables the
# controllers, and the memory bound holds as above.
run delegated $B sh -c "echo '+memory +pids' > /sys/fs/cgroup/cgroup.subtree_control; $B chmod 1777 /tmp; $B mkdir /sys/fs/cgroup/delegated; cd /sys/fs/cgroup/delegated; $B chown 1000:1000 . cgroup.procs cgroup.subtree_control cgroup.threads; echo \$\$ > cgroup.procs; exec /probe as-user 1000 $SC --memory 64M --exec /probe -- /probe memfd 128"

# The probe list (sandbox-linux/tests/probes/list.rs), where the host packed it (aarch64 guests;
# x86_64's runs on the host, examples/sandbox-check/tests/probes.rs): the control unconfined,
# then the probes under sandbox-check, those that need the opt-in to local socket pairs apart.
if [ -f /probes-all.list ]; then
    run syscalls-control /probe syscalls control "$($B cat /probes-all.list)"
    run syscalls $SC --exec /probe -- /probe syscalls run "$($B cat /probes.list)"
    run syscalls-sockets $SC --policy /probes-sockets.toml --exec /probe -- /probe syscalls run "$($B cat /probes-sockets.list)"
fi

# The shipped profiles' work (x86_64 guests only, which hold the host's programs): each program
# unconfined, then under `sandbox-check --policy` with its profile. Written by the host
# (xtask/src/kernels/profiles.rs), which traced what each work opens and packed exactly that.
if [ -f /profiles.sh ]; then
    . /profiles.sh
fi
