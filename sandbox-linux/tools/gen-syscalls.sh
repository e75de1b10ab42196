#!/bin/sh
# Rewrites the generated tables in src/syscalls.rs from a Linux source tree.
#
#     tools/gen-syscalls.sh /path/to/linux v6.18
#
# x86_64 takes the `common` and `64` rows of arch/x86/entry/syscalls/syscall_64.tbl; its `x32`
# rows are left out because the numbers filter refuses every x32 call. aarch64 takes the rows of
# scripts/syscall.tbl whose ABI arm64 builds: `common` and `64`, plus the ones
# arch/arm64/kernel/Makefile.syscalls adds (`renameat rlimit memfd_secret`; check that line when
# moving to a new kernel). Only the first three columns (number, ABI, name) are read.
#
# After regenerating, review every new name: a call the tables name is allowed unless a row of
# src/rules.rs refuses it, while a number they do not name answers ENOSYS.
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 LINUX_SOURCE_TREE VERSION" >&2
    exit 2
fi
linux=$1
version=$2
out=$(dirname "$0")/../src/syscalls.rs

rows() { # table file, comma-separated ABIs
    awk -v abis="$2" '
        BEGIN { n = split(abis, list, ","); for (i = 1; i <= n; i++) wanted[list[i]] = 1 }
        /^[0-9]/ && ($2 in wanted) {
            if ($3 in seen) { print "duplicate name " $3 > "/dev/stderr"; exit 1 }
            seen[$3] = 1
            printf "    (\"%s\", %d),\n", $3, $1
        }' "$1"
}

x86_64=$(rows "$linux/arch/x86/entry/syscalls/syscall_64.tbl" common,64)
aarch64=$(rows "$linux/scripts/syscall.tbl" common,64,renameat,rlimit,memfd_secret)

# Replaces the lines between each pair of markers, and the version line, keeping the rest.
tmp=$out.tmp
X86_64=$x86_64 AARCH64=$aarch64 awk -v version="$version" '
    /^\/\/ generated: x86_64 end$/ || /^\/\/ generated: aarch64 end$/ { skipping = 0 }
    skipping { next }
    /^pub const LINUX_VERSION: &str = / { print "pub const LINUX_VERSION: &str = \"" version "\";"; next }
    { print }
    /^\/\/ generated: x86_64 begin$/ { print ENVIRON["X86_64"]; skipping = 1 }
    /^\/\/ generated: aarch64 begin$/ { print ENVIRON["AARCH64"]; skipping = 1 }
' "$out" > "$tmp"
mv "$tmp" "$out"
