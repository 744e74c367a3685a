#!/bin/sh
# libksym-bcc against a kernel with loadable modules and kprobes: the qemu
# guest (Debian's 6.1 kernel), as root, with KSYM_REQUIRE=all (a skip is a
# failure). Only what needs that kernel (TCG is slow): the differential
# test on the live /proc/kallsyms (modules, BPF programs, ftrace
# trampolines), a real module loaded between refreshes, user-space pids
# forwarded, and unmodified bpftrace with kprobes whose stacks go through
# modules (9p's).
#
#   make test-guest-bcc     (builds on the host, then runs this in the guest)
#   sh bcc/tests/guest.sh   (inside, from the project directory)
set -u
OUT=${OUT:-build/bcc}
lib=$(pwd)/build/libksym-bcc.so.0
[ -x "$OUT/diff" ] || { echo "FAIL: $OUT/diff is not built (sh bcc/tests/run.sh $lib --build)"; exit 1; }
snap=$(mktemp -d /tmp/ksym-bcc-snap-XXXXXX)
trap 'rm -rf "$snap"' EXIT
export KSYM_BCC_LIB="$lib" KSYM_BCC_SNAPSHOT_DIR="$snap"
echo "guest: $(uname -r), $(grep -c . /proc/modules 2>/dev/null || echo 0) modules, KSYM_REQUIRE=${KSYM_REQUIRE:-}"
fail=0
step() {
    t0=$(date +%s)
    if "$@"; then echo "ok   $* ($(($(date +%s) - t0)) s)"; else echo "FAIL $*"; fail=1; fi
}
step "$OUT/diff"
step "$OUT/diff" --modprobe dummy
step env LD_PRELOAD="$lib" "$OUT/test_forward"
step sh bcc/tests/bpftrace.sh "$lib" "$OUT/need" "$OUT/ksym-bcc-wl" --kprobes
[ "$fail" = 0 ] && echo "bcc guest tests: all passed"
exit $fail
