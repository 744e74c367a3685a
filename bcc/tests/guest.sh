#!/bin/sh
# libksym-bcc against a kernel with loadable modules and kprobes, in a qemu
# guest, as root, with KSYM_REQUIRE=all (a skip is a failure), against the
# bcc of the guest's root: Debian 12's (bcc 0.26, bpftrace 0.17: the 6.1
# guest) or Debian 13's (bcc 0.31, bpftrace 0.23.2: the 7.3 guest). Only
# what needs such a kernel (TCG is slow; the bundled kernels' files are
# compared on the host, bcc/tests/oracle.sh):
# - the differential test on the live /proc/kallsyms (modules, BPF
#   programs, ftrace trampolines), and a real module loaded between
#   refreshes;
# - callers that are not root, with and without CAP_SYSLOG, under
#   kptr_restrict 0 with perf_event_paranoid 1 (the host runs it with 2),
#   1 and 2 (root too), every 200th line; a caller whose addresses are
#   hidden and then shown, with the same caches; both settings are restored
#   on every exit;
# - user-space pids forwarded; BPF.ksym from Python through the interposer
#   (every 50th line);
# - unmodified bpftrace with kprobes whose stacks go through modules (9p's).
# bcc's Python tools are bcc/tests/tools.sh, a script of its own (6.12).
#
#   sh bcc/tests/guest.sh   (inside, from the project directory: make test-guest-K)
set -u
OUT=${OUT:-build/bcc}
lib=$(pwd)/build/libksym-bcc.so.0
PY=/usr/bin/python3
[ -x "$OUT/diff" ] || { echo "FAIL: $OUT/diff is not built (sh bcc/tests/run.sh $lib --build)"; exit 1; }
snap=$(mktemp -d /tmp/ksym-bcc-snap-XXXXXX)
kptr=$(cat /proc/sys/kernel/kptr_restrict)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
restore() {
    echo "$kptr" > /proc/sys/kernel/kptr_restrict
    echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid
}
trap 'restore; rm -rf "$snap"' EXIT
trap 'exit 1' INT TERM
export KSYM_BCC_LIB="$lib" KSYM_BCC_SNAPSHOT_DIR="$snap"
bcc=$(basename "$(readlink -f /usr/lib/*/libbcc_bpf.so.0 | head -n 1)")
echo "guest: $(uname -r), $(grep -c . /proc/modules 2>/dev/null || echo 0) modules, $bcc, $(bpftrace --version), KSYM_REQUIRE=${KSYM_REQUIRE:-}"
fail=0
# Each kernel's own log (the project directory is shared by guests).
log=$OUT/guest-$(uname -r).log
step() {
    t0=$(date +%s)
    if "$@" > "$log" 2>&1; then
        echo "ok   $* ($(tail -n 1 "$log"); $(($(date +%s) - t0)) s)"
    else
        echo "FAIL $*"
        tail -n 30 "$log"
        fail=1
    fi
}
# bcc rebuilds its map of every name at each lookup (a second under
# emulation): 5 names of each kind for bcc, every name against its rule.
step env KSYM_BCC_DIFF_NAMES=5 "$OUT/diff"
step "$OUT/diff" --modprobe dummy
# kptr_restrict 0 with perf_event_paranoid 2 is the host's (oracle.sh).
for setting in "0 1" "1 $paranoid" "2 $paranoid"; do
    echo "${setting% *}" > /proc/sys/kernel/kptr_restrict
    echo "${setting#* }" > /proc/sys/kernel/perf_event_paranoid
    who=--not-root
    [ "${setting% *}" = 2 ] && who=
    step env KSYM_BCC_DIFF_EVERY=200 "$OUT/creds" $who
    restore
done
step "$OUT/creds" --lifted
step env LD_PRELOAD="$lib" "$OUT/test_forward"
step env LD_LIBRARY_PATH="$(dirname "$lib")/ksym-bcc" $PY bcc/tests/pyksym.py sweep 50
step sh bcc/tests/bpftrace.sh "$lib" "$OUT/need" "$OUT/ksym-bcc-wl" --kprobes
[ "$fail" = 0 ] && echo "bcc guest tests ($bcc): all passed"
exit $fail
