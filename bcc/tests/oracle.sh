#!/bin/sh
# libksym-bcc against the bcc of the system it runs on: every part whose
# oracle is that bcc library (libbcc_bpf.so.0 and libbcc.so.0 of package
# libbpfcc), that bcc's Python module and that bpftrace. bcc/tests/run.sh
# runs it twice: on this machine (Debian 12: bcc 0.26, bpftrace 0.17) and
# in the Debian 13 root (tools/root/run.sh: bcc 0.31, bpftrace 0.23.2).
#
#   oracle.sh BUILD/libksym-bcc.so.0      (built by run.sh --build; as root)
#
# Environment: OUT (the tests' build directory), KSYM_TESTDATA (the
# bundled kernels' files). Prints one "ok"/"FAIL" line per part; exit 1 on
# a failure.
set -u
lib=$1
OUT=${OUT:-build/bcc}
data=${KSYM_TESTDATA:-build/testdata}
# bcc's Python module is installed for the system's python3 (a PATH may
# name another first).
PY=/usr/bin/python3
bcc_version=$(basename "$(readlink -f /usr/lib/*/libbcc_bpf.so.0 2> /dev/null | head -n 1)" | sed 's/^libbcc_bpf\.so\.//')
where="bcc ${bcc_version:-?}"

fail=0
. bcc/tests/run-part.sh

# The tests' own snapshot directory (never /run/ksym).
snap=$(mktemp -d /tmp/ksym-bcc-snap-XXXXXX)
tmp=$(mktemp -d /tmp/ksym-bcc-test-XXXXXX)
trap 'rm -rf "$snap" "$tmp"' EXIT
export KSYM_BCC_LIB="$lib" KSYM_BCC_SNAPSHOT_DIR="$snap"
OUT=$OUT/$(echo "$where" | tr ' ' '-')
mkdir -p "$OUT"
bin=$(dirname "$OUT")

# The version whose answers it gives: the loaded bcc's (test_forward links
# libbcc_bpf.so.0), or KSYM_BCC_BCC_VERSION's; a bad value is ignored with
# a note.
v1=$(KSYM_BCC_DEBUG=1 LD_PRELOAD="$lib" "$bin/test_forward" 2>&1 | grep '^libksym-bcc .*: active')
v2=$(KSYM_BCC_DEBUG=1 KSYM_BCC_BCC_VERSION=0.28 LD_PRELOAD="$lib" "$bin/test_forward" 2>&1 | grep '^libksym-bcc .*: active')
v3=$(KSYM_BCC_DEBUG=1 KSYM_BCC_BCC_VERSION=x0.28 LD_PRELOAD="$lib" "$bin/test_forward" 2>&1 | grep -c 'KSYM_BCC_BCC_VERSION=x0.28 is not a version')
case "$v1|$v2|$v3" in
    *"answers of bcc $bcc_version (/"*"/libbcc_bpf.so.$bcc_version)"*"|"*"answers of bcc 0.28.0 (KSYM_BCC_BCC_VERSION)"*"|1")
        echo "ok   $where version: the loaded library's, or KSYM_BCC_BCC_VERSION's" ;;
    *) echo "FAIL $where version: '$v1', '$v2', $v3 notes of a bad value" >&2; fail=1 ;;
esac
run api "$bin/test_api"
run forward env LD_PRELOAD="$lib" "$bin/test_forward"

# The differential test: the running kernel, the bundled distro kernels
# (modules, BPF programs, ftrace and kprobe pages), and restricted kallsyms
# (all zeros). (run.sh adds, with this machine's bcc only, the variations
# of the shim that bcc's version does not change: no snapshot, ASan.)
run diff.live "$bin/diff"
for k in linux-6.1-cloud linux-6.12-cloud; do
    run "diff.$k" "$bin/diff" --file "$data/$k/kallsyms"
done
sed 's/^[0-9a-f]*/0000000000000000/' "$data/linux-6.1-cloud/kallsyms" > "$tmp/zeroed"
run diff.restricted "$bin/diff" --file "$tmp/zeroed"
if grep -q "^SKIP" "$OUT/diff.restricted.log" 2> /dev/null; then
    :
elif [ "$(grep -c '^libksym-bcc: /proc/kallsyms shows no kernel addresses' "$OUT/diff.restricted.log")" = 1 ]; then
    echo "ok   $where restricted: one line on stderr"
else
    echo "FAIL $where restricted: expected one line about hidden addresses on stderr:" >&2
    grep libksym-bcc "$OUT/diff.restricted.log" >&2
    fail=1
fi
run refresh "$bin/diff" --refresh "$data/linux-6.1-cloud/kallsyms" "$data/linux-6.1-cloud/modules"
# Callers that are not root, with and without CAP_SYSLOG, under this
# machine's kptr_restrict (the guests change it; root is diff.live).
run creds "$bin/creds" --not-root

# bcc's Python module through the interposer: BPF.ksym of every address
# +/-1 and BPF.ksymname, against the real libbcc in the same process.
run python.sweep env LD_LIBRARY_PATH="$(dirname "$lib")/ksym-bcc" $PY bcc/tests/pyksym.py sweep 1

# Unmodified bpftrace, with and without the preload (kprobes in the guest).
kp=
[ "${KSYM_GUEST:-}" = 1 ] && kp=--kprobes
run bpftrace sh bcc/tests/bpftrace.sh "$lib" "$bin/need" "$bin/ksym-bcc-wl" $kp

exit $fail
