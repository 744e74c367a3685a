#!/bin/sh
# Writes, on this machine, the list of parts a guest kernel runs
# (tools/guest/tests.sh runs them inside and fails when one did not run):
#
#   sh tools/guest/parts.sh KERNEL RUST_LIST C_DIR [SCRIPT...] > parts.list
#
# One line per part:
#   rust NAME PATH FILTER COUNT   a Rust test binary: the tests whose names start with FILTER
#                                 (- for all), COUNT of them (`--list`, run here)
#   c NAME PATH                   a C test (the plain build in C_DIR)
#   script NAME PATH              a script, run with sh from the project directory
#
# Only what depends on the running kernel goes into a guest (TCG is 10-30x
# slower than this machine; the bundled-data tests run on the host): of the
# Rust binaries, the tests named live_* and the binaries of WHOLE (every
# test in them reads the running kernel: its BTF, its boot id); of the C
# tests, all but HOST_C (bundled data, the API's shape, the installed
# headers). tests/snapshot.rs and tests/struct_ops.rs need root but read the
# bundled kernels only: they run on the host.
#
# C_ALT (environment: NAME=PATH words) runs another build of a C test in
# its place (test_libbpf_corpus against libbpf 1.5 in the 6.12 guest).
# C_HOST (environment: names) keeps more C tests on the host for this
# kernel: what the host's run already covers for it (test_libbpf_prepare
# on 6.12 and 7.3, whose BTF features are the host's).
set -eu

kernel=$1
rust_list=$2
c_dir=$3
shift 3
WHOLE="btf_snapshot"
HOST_C="test_bpf test_check test_resolve test_threads test_sz test_libbpf_vars test_kind_names test_dlopen test_cxx"

die() { echo "parts.sh: $*" >&2; exit 1; }
[ -s "$rust_list" ] || die "no Rust test list $rust_list"
[ -d "$c_dir" ] || die "no C test directory $c_dir (make test-c-build)"

echo "# the parts of the $kernel guest, written by tools/guest/parts.sh"
while read -r bin; do
    [ -n "$bin" ] || continue
    name=$(basename "$bin" | sed 's/-[0-9a-f]*$//')
    case " $WHOLE " in
        *" $name "*) filter="" ;;
        *) filter=live_ ;;
    esac
    # A binary that cannot list its tests is a broken build, not a binary
    # without kernel tests.
    listed=$("$bin" --list $filter 2> /dev/null) || die "$bin --list failed"
    n=$(printf '%s\n' "$listed" | grep -c ': test$' || true)
    [ "$n" -gt 0 ] || continue
    echo "rust $name $bin ${filter:--} $n"
done < "$rust_list"

found=0
for t in "$c_dir"/test_*; do
    case $t in *.valgrind | *.asan | *.static | *.log | *.o) continue ;; esac
    [ -x "$t" ] || continue
    name=$(basename "$t")
    case " $HOST_C ${C_HOST:-} " in *" $name "*) continue ;; esac
    for alt in ${C_ALT:-}; do
        [ "${alt%%=*}" = "$name" ] || continue
        t=${alt#*=}
        [ -x "$t" ] || die "no $t (C_ALT for $name)"
    done
    echo "c $name $t"
    found=$((found + 1))
done
[ "$found" -gt 0 ] || die "no C tests in $c_dir"

for s in "$@"; do
    [ -f "$s" ] || die "no script $s"
    echo "script $s $s"
done
