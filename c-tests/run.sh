#!/bin/sh
# Builds and runs the C tests against the copy of libksym installed in
# $STAGE, found through pkg-config ($PKG_CONFIG_PATH), four ways:
#   plain (shared library), under valgrind (no errors, no leaks),
#   ASan+UBSan, and statically linked with `pkg-config --static`.
# Also compiles the header as C++ and checks the .pc file.
set -eu

CC=${CC:-cc}
CXX=${CXX:-c++}
OUT=${OUT:-build/c-tests}
CFLAGS="-std=c99 -Wall -Wextra -Werror -pedantic -g -O1"
mkdir -p "$OUT"

cflags=$(pkg-config --cflags ksym)
libs=$(pkg-config --libs ksym)
libdir=$(pkg-config --variable=libdir ksym)
static_libs=$(pkg-config --static --libs-only-l ksym | sed 's/-lksym//')
echo "pkg-config: cflags '$cflags' libs '$libs' static '$static_libs' (version $(pkg-config --modversion ksym))"
[ "$libdir" = "$STAGE/lib" ] || { echo "libdir is $libdir, expected $STAGE/lib" >&2; exit 1; }
[ -f "$(pkg-config --variable=includedir ksym)/ksym.h" ] || { echo "ksym.h not installed" >&2; exit 1; }

# KSYM_SKIP_LOG (the Makefile sets it: target/tmp/ksym-skipped, the log
# make test prints): each skip of a plain run is appended to it as
# "SKIP <need> <test>: <why>" (check.h: NEED_SKIP); the valgrind, ASan and
# static runs skip the same and log nothing.
# BUILD_ONLY=1 (make test-c-build, for the guests): the plain builds only,
# nothing run.
fail=0
build_only=${BUILD_ONLY:-0}
run() {
    name=$1
    shift
    [ "$build_only" = 0 ] || return 0
    case $name in
        *.*) set -- env -u KSYM_SKIP_LOG "$@" ;;
        *) set -- env KSYM_SKIP_TEST="$name" "$@" ;;
    esac
    if "$@" > "$OUT/$name.log" 2>&1; then
        echo "ok   $name ($(tail -n 1 "$OUT/$name.log"))"
        # No skip is silent: its reason, once (the plain run says it; the
        # valgrind, ASan and static runs skip the same).
        case $name in
            *.*) ;;
            *) grep '^SKIP' "$OUT/$name.log" | sed 's/^/     /' || true ;;
        esac
    else
        echo "FAIL $name" >&2
        cat "$OUT/$name.log" >&2
        fail=1
    fi
}

have_valgrind=1
command -v valgrind > /dev/null 2>&1 || have_valgrind=0

# The bundled loader (tools/bpf_loader.h, tools/bpf_multi.h: internal, not
# installed), compiled once with the tests' flags, plain and with the
# sanitizers, into an archive each test links (only the tests that call it
# take anything from it).
loader_srcs="$(ls tools/bpf_loader_*.c) tools/bpf_multi.c"
mkdir -p "$OUT/loader" "$OUT/loader.asan"
rm -f "$OUT/libkl.a" "$OUT/libkl.asan.a"
for src in $loader_srcs; do
    o=$(basename "$src" .c).o
    $CC $CFLAGS $cflags -c -o "$OUT/loader/$o" "$src"
    $CC $CFLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
        $cflags -c -o "$OUT/loader.asan/$o" "$src"
done
ar rcs "$OUT/libkl.a" "$OUT"/loader/*.o
ar rcs "$OUT/libkl.asan.a" "$OUT"/loader.asan/*.o
kl="$OUT/libkl.a"

for src in c-tests/test_*.c; do
    t=$(basename "$src" .c)
    $CC $CFLAGS $cflags -o "$OUT/$t" "$src" "$kl" $libs -lpthread -Wl,-rpath,"$libdir"
    run "$t" "$OUT/$t"
    [ "$build_only" = 0 ] || continue
    if [ "$have_valgrind" = 1 ]; then
        run "$t.valgrind" valgrind -q --error-exitcode=99 --leak-check=full \
            --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect "$OUT/$t"
    else
        echo "SKIP $t.valgrind: valgrind is not installed" >&2
        fail=1
    fi
    $CC $CFLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
        $cflags -o "$OUT/$t.asan" "$src" "$OUT/libkl.asan.a" $libs -lpthread -Wl,-rpath,"$libdir"
    run "$t.asan" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1 "$OUT/$t.asan"
    $CC $CFLAGS $cflags -o "$OUT/$t.static" "$src" "$kl" "$libdir/libksym.a" $static_libs -lpthread
    if readelf -d "$OUT/$t.static" | grep -q 'libksym'; then
        echo "FAIL $t.static links libksym.so" >&2
        fail=1
    fi
    run "$t.static" "$OUT/$t.static"
done

run coverage sh c-tests/coverage.sh

# tools/bpf_abi.h spells out bpf_attr layouts: check them against the
# kernel's header (which needs GNU C).
$CC -std=gnu11 -Wall -Werror $cflags -o "$OUT/bpf_layout_check" c-tests/bpf_layout_check.c
run bpf_layout_check "$OUT/bpf_layout_check"

# dlopen'd by a plugin (not linked: the test loads $libdir/libksym.so
# itself), from several threads, dlclose'd; plain and under valgrind.
$CC -std=gnu11 -Wall -Wextra -Werror -g -O1 $cflags -o "$OUT/test_dlopen" c-tests/dlopen/test_dlopen.c -ldl -lpthread
run test_dlopen env KSYM_LIB="$libdir/libksym.so" "$OUT/test_dlopen"
if [ "$have_valgrind" = 1 ]; then
    run test_dlopen.valgrind env KSYM_LIB="$libdir/libksym.so" valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect "$OUT/test_dlopen"
fi

# libbpf 1.7 (build/libbpf-1.7: mk/objects.mk builds it) as the oracle of
# attach and relocation semantics, linked statically; the prepare test
# wraps syscall() to see each BPF_PROG_LOAD libbpf makes.
LIBBPF_ORACLE=${LIBBPF_ORACLE:-build/libbpf-1.7}
if [ ! -f "$LIBBPF_ORACLE/lib/libbpf.a" ]; then
    echo "FAIL libbpf oracle tests: no $LIBBPF_ORACLE/lib/libbpf.a (make libbpf-oracle)" >&2
    fail=1
else
    for src in c-tests/libbpf/test_*.c; do
        t=$(basename "$src" .c)
        case $t in *_next) continue ;; esac # libbpf-next's, below
        wrap=
        [ "$t" != test_libbpf_prepare ] || wrap=-Wl,--wrap=syscall
        $CC -std=gnu11 -Wall -Wextra -Werror -g -O1 -I"$LIBBPF_ORACLE/include" $cflags -o "$OUT/$t" "$src" \
            "$kl" $wrap "$LIBBPF_ORACLE/lib/libbpf.a" -lelf -lz $libs -Wl,-rpath,"$libdir"
        run "$t" "$OUT/$t"
    done
fi
# libbpf's newest source (build/libbpf-next: mk/objects.mk; the multi
# links of Linux 7.3, in no release) as the second oracle of prepare: the
# same corpus, multi.bpf.o's fentry.multi/fexit.multi/fsession.multi
# programs included, which libbpf 1.7 does not know. Plain build only;
# the guests run it on multi.bpf.o alone (tools/guest/tests.sh), where a
# module's section meets the module's BTF object.
LIBBPF_NEXT=${LIBBPF_NEXT:-build/libbpf-next}
if [ ! -f "$LIBBPF_NEXT/lib/libbpf.a" ]; then
    echo "FAIL libbpf-next oracle: no $LIBBPF_NEXT/lib/libbpf.a (make libbpf-next)" >&2
    fail=1
else
    $CC -std=gnu11 -Wall -Wextra -Werror -g -O1 -I"$LIBBPF_NEXT/include" $cflags -o "$OUT/test_libbpf_prepare_next" \
        c-tests/libbpf/test_libbpf_prepare.c "$kl" -Wl,--wrap=syscall "$LIBBPF_NEXT/lib/libbpf.a" -lelf -lz $libs \
        -Wl,-rpath,"$libdir"
    run test_libbpf_prepare_next "$OUT/test_libbpf_prepare_next"
    # Tests of libbpf-next alone (*_next.c): its multi links against
    # libksym's on the running kernel.
    for src in c-tests/libbpf/test_*_next.c; do
        t=$(basename "$src" .c)
        $CC -std=gnu11 -Wall -Wextra -Werror -g -O1 -I"$LIBBPF_NEXT/include" $cflags -o "$OUT/$t" "$src" \
            "$kl" -Wl,--wrap=syscall "$LIBBPF_NEXT/lib/libbpf.a" -lelf -lz $libs -Wl,-rpath,"$libdir"
        run "$t" "$OUT/$t"
    done
fi
# libbpf-dev (the system's libbpf, which bpftool uses) for the preload test.
if pkg-config --exists libbpf; then
    # Preloaded into bpftool and a libbpf program: the same output.
    $CC -std=gnu11 -Wall -Wextra -Werror -g -O1 -o "$OUT/libbpf_list" c-tests/dlopen/libbpf_list.c \
        $(pkg-config --libs libbpf)
    run preload sh c-tests/dlopen/preload.sh "$libdir/libksym.so" "$OUT/libbpf_list"
else
    echo "FAIL libbpf oracle tests: libbpf is not installed (apt-get install libbpf-dev; .ci/run does)" >&2
    fail=1
fi

for src in c-tests/test_*.cpp; do
    t=$(basename "$src" .cpp)
    $CXX -std=c++11 -Wall -Wextra -Werror -pedantic $cflags -o "$OUT/$t" "$src" $libs -Wl,-rpath,"$libdir"
    run "$t" "$OUT/$t"
done

[ "$fail" = 0 ] && echo "C tests: all passed"
exit $fail
