#!/bin/sh
# libksym-bcc's tests (make test-bcc):
#   run.sh BUILD/libksym-bcc.so.0 [--build]    (--build: only build them)
# The oracle is the real bcc (libbcc_bpf.so.0, package libbpfcc), its Python
# module and, for stacks, unmodified bpftrace: this machine's (bcc 0.26) and
# the Debian 13 root's (bcc 0.31), through bcc/tests/oracle.sh; here, the
# parts that do not depend on bcc's version. What needs root or the kernel
# says SKIP through c-tests/check.h's NEED_SKIP (KSYM_REQUIRE turns it into
# a failure).
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
where=bcc
. bcc/tests/run-part.sh
build() {
    out=$1
    shift
    "$@" -o "$OUT/$out" || { echo "FAIL bcc: building $out" >&2; exit 1; }
}

build diff $CC $CFLAGS bcc/tests/diff.c -ldl
build creds $CC $CFLAGS bcc/tests/creds.c -ldl
build test_api $CC $CFLAGS bcc/tests/test_api.c -ldl -lpthread
build test_fix $CC $CFLAGS bcc/tests/test_fix.c -ldl
build need $CC $CFLAGS bcc/tests/need.c -ldl
build ksym-bcc-wl $CC $CFLAGS bcc/tests/workload.c
# Linked with libbcc as bpftrace is (no -dev package: by its file name).
build test_forward $CC $CFLAGS bcc/tests/test_forward.c -l:libbcc_bpf.so.0 -ldl
$CC $CFLAGS -DKSYM_BCC_SORT_STATS -c bcc/stdsort.c -o "$OUT/stdsort.o" || exit 1
build test_stdsort $CXX -std=c++14 -Wall -Wextra -Werror -O2 bcc/tests/test_stdsort.cpp "$OUT/stdsort.o"
# The shim and the API test with ASan and UBSan.
build libksym-bcc-asan.so $CC $CFLAGS $SAN -fPIC -fvisibility=hidden -shared bcc/shim.c bcc/kcache.c bcc/core.c \
    bcc/real.c bcc/settings.c bcc/note.c bcc/stdsort.c -Wl,--version-script=bcc/libksym-bcc.map -Wl,-rpath,"$(dirname "$lib")" \
    -L"$(dirname "$lib")" -lksym -ldl -lpthread
build test_api.asan $CC $CFLAGS $SAN bcc/tests/test_api.c -ldl -lpthread
build diff.asan $CC $CFLAGS $SAN bcc/tests/diff.c -ldl

[ "$only_build" = --build ] && exit 0

# Exports: bcc's six functions and the counter, nothing else.
exports=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ')
want="bcc_free_symcache bcc_symcache_new bcc_symcache_refresh bcc_symcache_resolve bcc_symcache_resolve_name bcc_symcache_resolve_no_demangle ksym_bcc_counts "
if [ "$exports" = "$want" ] && readelf -d "$lib" | grep -q 'SONAME.*\[libksym-bcc.so.0\]'; then
    echo "ok   bcc exports: $exports(soname libksym-bcc.so.0)"
else
    echo "FAIL bcc exports: '$exports', expected '$want'" >&2
    fail=1
fi

# The interposer: no function of its own; libksym-bcc, then bcc's library
# by its absolute path (never a copy of it), found from $ORIGIN/..; and
# `make install` puts it in its own directory, nothing over bcc's.
ip=$(dirname "$lib")/ksym-bcc/libbcc.so.0
needed=$(readelf -d "$ip" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^libc\.so' | tr '\n' ' ')
own=$(nm -D --defined-only "$ip" | grep -c ' T ' || true)
installs=$(make -s -n install-bcc DESTDIR=/D PREFIX=/P | grep -o '/D/[^ ]*' | sort -u | tr '\n' ' ')
case $needed in
    "libksym-bcc.so.0 /"*"/libbcc.so.0 ")
        if [ "$own" = 0 ] && readelf -d "$ip" | grep -q 'RUNPATH.*\[\$ORIGIN/\.\.\]' &&
            [ "$installs" = "/D/P/lib /D/P/lib/ksym-bcc /D/P/lib/ksym-bcc/libbcc.so.0 /D/P/lib/libksym-bcc.so.0 /D/P/lib/$(readlink "$lib") " ]; then
            echo "ok   bcc interposer: needs $needed(RUNPATH \$ORIGIN/..), installs $installs"
        else
            echo "FAIL bcc interposer: $own functions of its own, installs '$installs'" >&2
            fail=1
        fi
        ;;
    *) echo "FAIL bcc interposer: needs '$needed', expected libksym-bcc.so.0 then bcc's libbcc.so.0 by path" >&2; fail=1 ;;
esac

# The tests' own snapshot directory (never /run/ksym).
snap=$(mktemp -d /tmp/ksym-bcc-snap-XXXXXX)
trap 'rm -rf "$snap"' EXIT
export KSYM_BCC_LIB="$lib" KSYM_BCC_SNAPSHOT_DIR="$snap"

run stdsort "$OUT/test_stdsort" "$data/linux-6.12-cloud/kallsyms"
run api.valgrind valgrind -q --suppressions=bcc/tests/valgrind.supp --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect "$OUT/test_api"
run api.asan env KSYM_BCC_LIB="$OUT/libksym-bcc-asan.so" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
    "$OUT/test_api.asan"
run no-bcc env KSYM_BCC_FORWARD_LIB=/nonexistent/libbcc.so "$OUT/test_api" --no-bcc
for f in "" symbolize builtin module all; do
    run "fix${f:+.$f}" env KSYM_BCC_FIX=$f KSYM_BCC_SNAPSHOT_DIR=none "$OUT/test_fix"
done

# KSYM_BCC_DEBUG=1: a line saying it is active and one at exit with the
# count of kernel answers; nothing without it.
d1=$(KSYM_BCC_DEBUG=1 LD_PRELOAD="$lib" /bin/true 2>&1)
d0=$(LD_PRELOAD="$lib" /bin/true 2>&1)
if [ "$(echo "$d1" | grep -c '^libksym-bcc .*: active in pid')" = 1 ] &&
    [ "$(echo "$d1" | grep -c '^libksym-bcc: pid [0-9]* exits: 0 kernel addresses answered')" = 1 ] &&
    [ "$(echo "$d1" | wc -l)" = 2 ] && [ -z "$d0" ]; then
    echo "ok   bcc debug lines ($d1)"
else
    echo "FAIL bcc debug lines: with KSYM_BCC_DEBUG=1 '$d1', without '$d0'" >&2
    fail=1
fi

# Variations of the shim that bcc's version does not change, against this
# machine's bcc: without a snapshot, and with ASan on a file with a
# module's symbol inside the core kernel's range.
tmp=$(mktemp -d /tmp/ksym-bcc-test-XXXXXX)
trap 'rm -rf "$snap" "$tmp"' EXIT
run diff.no-snapshot env KSYM_BCC_SNAPSHOT_DIR=none "$OUT/diff" --file "$data/linux-6.1-cloud/kallsyms"
awk '{ print } /\t\[/ && !done { print "ffffffff81234567 t inside_the_core\t[fake]"; done = 1 }' \
    "$data/linux-6.1-cloud/kallsyms" > "$tmp/crafted"
run diff.crafted.asan env KSYM_BCC_LIB="$OUT/libksym-bcc-asan.so" ASAN_OPTIONS=detect_leaks=0 \
    "$OUT/diff.asan" --file "$tmp/crafted"

# Everything whose oracle is bcc itself: this machine's bcc, then the
# Debian 13 root's (tools/root/run.sh), when it is built.
sh bcc/tests/oracle.sh "$lib" || fail=1
if [ -d build/root/debian13/usr ]; then
    sh tools/root/run.sh --env OUT="$OUT" --env KSYM_TESTDATA="$data" -- sh bcc/tests/oracle.sh "$lib" || fail=1
else
    "$OUT/need" root "the Debian 13 root is not built (make root): bcc 0.31 is not compared" || fail=1
fi

[ "$fail" = 0 ] && echo "bcc tests: all passed"
exit $fail
