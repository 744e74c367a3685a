#!/bin/sh
# libksym-bcc's tests (make test-bcc):
#   run.sh BUILD/libksym-bcc.so.0 [--build]    (--build: only build them)
# The oracle is the real bcc (libbcc_bpf.so.0, package libbpfcc) and, for
# stacks, unmodified bpftrace; what needs root or the kernel says SKIP
# through c-tests/check.h's NEED_SKIP (KSYM_REQUIRE turns it into a failure).
# Environment: CC, CXX, OUT (build directory), KSYM_TESTDATA (the bundled
# kernels' files, build/testdata).
set -u
lib=$1
only_build=${2:-}
CC=${CC:-cc}
CXX=${CXX:-c++}
OUT=${OUT:-build/bcc}
data=${KSYM_TESTDATA:-build/testdata}
mkdir -p "$OUT"
CFLAGS="-std=gnu11 -Wall -Wextra -Werror -g -O2 -Iinclude"
SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

fail=0
run() {
    name=$1
    shift
    t0=$(date +%s)
    if "$@" > "$OUT/$name.log" 2>&1; then
        echo "ok   bcc $name ($(grep -v '^SKIP' "$OUT/$name.log" | tail -n 1); $(($(date +%s) - t0)) s)"
        grep '^SKIP' "$OUT/$name.log" | sed 's/^/     /' || true
    else
        echo "FAIL bcc $name" >&2
        tail -n 40 "$OUT/$name.log" >&2
        fail=1
    fi
}
build() {
    out=$1
    shift
    "$@" -o "$OUT/$out" || { echo "FAIL bcc: building $out" >&2; exit 1; }
}

build diff $CC $CFLAGS bcc/tests/diff.c -ldl
build test_api $CC $CFLAGS bcc/tests/test_api.c -ldl -lpthread
build test_fix $CC $CFLAGS bcc/tests/test_fix.c -ldl
build need $CC $CFLAGS bcc/tests/need.c -ldl
build ksym-bcc-wl $CC $CFLAGS bcc/tests/workload.c
# Linked with libbcc as bpftrace is (no -dev package: by its file name).
build test_forward $CC $CFLAGS bcc/tests/test_forward.c -l:libbcc_bpf.so.0 -ldl
$CC $CFLAGS -DKSYM_BCC_SORT_STATS -c bcc/stdsort.c -o "$OUT/stdsort.o" || exit 1
build test_stdsort $CXX -std=c++14 -Wall -Wextra -Werror -O2 bcc/tests/test_stdsort.cpp "$OUT/stdsort.o"
# The shim and the API test with ASan and UBSan.
build libksym-bcc-asan.so $CC $CFLAGS $SAN -fPIC -fvisibility=hidden -shared bcc/shim.c bcc/kcache.c \
    bcc/stdsort.c -Wl,--version-script=bcc/libksym-bcc.map -Wl,-rpath,"$(dirname "$lib")" \
    -L"$(dirname "$lib")" -lksym -ldl -lpthread
build test_api.asan $CC $CFLAGS $SAN bcc/tests/test_api.c -ldl -lpthread
build diff.asan $CC $CFLAGS $SAN bcc/tests/diff.c -ldl

[ "$only_build" = --build ] && exit 0

# Exports: bcc's six functions, nothing else.
exports=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ')
want="bcc_free_symcache bcc_symcache_new bcc_symcache_refresh bcc_symcache_resolve bcc_symcache_resolve_name bcc_symcache_resolve_no_demangle "
if [ "$exports" = "$want" ] && readelf -d "$lib" | grep -q 'SONAME.*\[libksym-bcc.so.0\]'; then
    echo "ok   bcc exports: $exports(soname libksym-bcc.so.0)"
else
    echo "FAIL bcc exports: '$exports', expected '$want'" >&2
    fail=1
fi

# The tests' own snapshot directory (never /run/ksym).
snap=$(mktemp -d /tmp/ksym-bcc-snap-XXXXXX)
tmp=$(mktemp -d /tmp/ksym-bcc-test-XXXXXX)
trap 'rm -rf "$snap" "$tmp"' EXIT
export KSYM_BCC_LIB="$lib" KSYM_BCC_SNAPSHOT_DIR="$snap"

run stdsort "$OUT/test_stdsort" "$data/linux-6.12-cloud/kallsyms"
run api "$OUT/test_api"
run api.valgrind valgrind -q --suppressions=bcc/tests/valgrind.supp --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect "$OUT/test_api"
run api.asan env KSYM_BCC_LIB="$OUT/libksym-bcc-asan.so" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
    "$OUT/test_api.asan"
run no-bcc env KSYM_BCC_FORWARD_LIB=/nonexistent/libbcc.so "$OUT/test_api" --no-bcc
run forward env LD_PRELOAD="$lib" "$OUT/test_forward"
for f in "" symbolize builtin module all; do
    run "fix${f:+.$f}" env KSYM_BCC_FIX=$f KSYM_BCC_SNAPSHOT_DIR=none "$OUT/test_fix"
done

# KSYM_BCC_DEBUG=1: one line saying it is active; nothing without it.
d1=$(KSYM_BCC_DEBUG=1 LD_PRELOAD="$lib" /bin/true 2>&1)
d0=$(LD_PRELOAD="$lib" /bin/true 2>&1)
if [ "$(echo "$d1" | grep -c '^libksym-bcc .*: active in pid')" = 1 ] && [ "$(echo "$d1" | wc -l)" = 1 ] && [ -z "$d0" ]; then
    echo "ok   bcc debug line ($d1)"
else
    echo "FAIL bcc debug line: with KSYM_BCC_DEBUG=1 '$d1', without '$d0'" >&2
    fail=1
fi

# The differential test: the running kernel, the bundled distro kernels
# (modules, BPF programs, ftrace and kprobe pages), the same without a
# snapshot, a file with a module's symbol inside the core kernel's range
# (with ASan), and restricted kallsyms (all zeros).
run diff.live "$OUT/diff"
for k in linux-6.1-cloud linux-6.12-cloud; do
    run "diff.$k" "$OUT/diff" --file "$data/$k/kallsyms"
done
run diff.no-snapshot env KSYM_BCC_SNAPSHOT_DIR=none "$OUT/diff" --file "$data/linux-6.1-cloud/kallsyms"
awk '{ print } /\t\[/ && !done { print "ffffffff81234567 t inside_the_core\t[fake]"; done = 1 }' \
    "$data/linux-6.1-cloud/kallsyms" > "$tmp/crafted"
run diff.crafted.asan env KSYM_BCC_LIB="$OUT/libksym-bcc-asan.so" ASAN_OPTIONS=detect_leaks=0 \
    "$OUT/diff.asan" --file "$tmp/crafted"
sed 's/^[0-9a-f]*/0000000000000000/' "$data/linux-6.1-cloud/kallsyms" > "$tmp/zeroed"
run diff.restricted "$OUT/diff" --file "$tmp/zeroed"
if [ -f "$OUT/diff.restricted.log" ] && grep -q "^SKIP" "$OUT/diff.restricted.log"; then
    :
elif [ "$(grep -c '^libksym-bcc: /proc/kallsyms shows no kernel addresses' "$OUT/diff.restricted.log")" = 1 ]; then
    echo "ok   bcc restricted: one line on stderr"
else
    echo "FAIL bcc restricted: expected one line about hidden addresses on stderr:" >&2
    grep libksym-bcc "$OUT/diff.restricted.log" >&2
    fail=1
fi
run refresh "$OUT/diff" --refresh "$data/linux-6.1-cloud/kallsyms" "$data/linux-6.1-cloud/modules"

# Unmodified bpftrace, with and without the preload (kprobes in the guest).
kp=
[ "${KSYM_GUEST:-}" = 1 ] && kp=--kprobes
run bpftrace sh bcc/tests/bpftrace.sh "$lib" "$OUT/need" "$OUT/ksym-bcc-wl" $kp

[ "$fail" = 0 ] && echo "bcc tests: all passed"
exit $fail
