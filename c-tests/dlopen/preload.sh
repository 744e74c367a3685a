#!/bin/sh
# libksym preloaded (LD_PRELOAD) into programs nobody built for it: Debian's
# bpftool and a small libbpf program. Their output must be the same as
# without it, and the library must really be in the process.
#   preload.sh LIBKSYM_SO LIBBPF_LIST_BINARY
set -u
lib=$1
list=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
n=0
LD_PRELOAD=$lib grep -q libksym /proc/self/maps || { echo "FAIL: LD_PRELOAD=$lib did not load it"; exit 1; }
same() {
    what=$1
    shift
    # Both runs must succeed: two runs that fail the same way (no
    # /sys/kernel/btf/vmlinux, a missing object) print the same and prove
    # nothing.
    if ! "$@" > "$out/plain" 2>&1; then
        echo "FAIL: $what fails without LD_PRELOAD:"
        head -5 "$out/plain"
        fail=1
        return
    fi
    if ! LD_PRELOAD=$lib "$@" > "$out/preload" 2>&1; then
        echo "FAIL: $what fails with LD_PRELOAD:"
        head -5 "$out/preload"
        fail=1
        return
    fi
    if cmp -s "$out/plain" "$out/preload"; then
        n=$((n + 1))
    else
        echo "FAIL: $what differs with LD_PRELOAD:"
        diff "$out/plain" "$out/preload" | head -5
        fail=1
    fi
}
if command -v bpftool > /dev/null; then
    same "bpftool version" bpftool version
    same "bpftool btf dump (1000 lines)" sh -c 'bpftool btf dump file /sys/kernel/btf/vmlinux > "$0" && head -1000 "$0"' "$out/dump"
    same "bpftool btf dump of an object" bpftool btf dump file c-tests/bpf/trace.bpf.o
else
    echo "FAIL: bpftool is not installed (.ci/run installs it)"
    fail=1
fi
same "libbpf program" "$list" c-tests/bpf/sections.bpf.o c-tests/bpf/aliases.bpf.o c-tests/bpf/trace.bpf.o
[ "$fail" = 0 ] && echo "preload: $n programs print the same with libksym preloaded"
exit $fail
