#!/bin/sh
# Builds the bpftrace fork: bpftrace 0.23.2's release source, our patches
# (bpftrace/patches/*.patch, applied in order with patch -p1), linked with
# libksym through `pkg-config ksym`, compiled inside the Debian 13 root
# (tools/root/: LLVM 19, libbpf 1.5, bcc 0.31; the build dependencies are
# in tools/root/debian13.packages).
#
#   sh bpftrace/build.sh [OUT]        (default build/bpftrace-fork; `make bpftrace-fork`)
#
# BPFTRACE_SRC      the release tarball, or an unpacked tree (default:
#                   bpftrace/src/bpftrace-0.23.2.tar.gz, upstream's release
#                   tarball kept in the repository because no package
#                   source this machine reaches carries it; its sha256 is
#                   checked)
# OUT/stage         libksym, `make install PREFIX=OUT/stage DESTDIR=` (built here)
# OUT/pristine-0.23.2  the unpacked release, once
# OUT/bpftrace-0.23.2  the patched tree; only files whose patched text changed
#                   are rewritten, so rebuilds are incremental
# OUT/build         cmake's build directory, kept
# OUT/bpftrace      the binary (it runs in the Debian 13 root: the 6.12 and
#                   7.3 guests' root, or tools/root/run.sh here)
#
# JOBS (default 2) is make's -j. libksym is linked statically (libksym.a and
# its Libs.private); the rest (LLVM, libbpf, libbcc) is the root's.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=${1:-$top/build/bpftrace-fork}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/stage
jobs=${JOBS:-2}
ver=0.23.2
sha256=0d388b78885400e0d06b3de42cd23aa813d37754c6268b9038e283c728ba18ba

say() { echo "bpftrace-fork: $*"; }
die() { echo "bpftrace-fork: $*" >&2; exit 1; }

case $out in "$top"/*) ;; *) die "OUT must be inside the project ($top): the root sees only the project" ;; esac

say "libksym into $stage"
make -C "$top" --no-print-directory install PREFIX="$stage" DESTDIR= > "$out/libksym-install.log" 2>&1 ||
    { tail -n 30 "$out/libksym-install.log" >&2; exit 1; }

if [ ! -d "$out/pristine-$ver" ]; then
    src_in=${BPFTRACE_SRC:-$here/src/bpftrace-$ver.tar.gz}
    tmp=$out/.fetch
    rm -rf "$tmp" && mkdir -p "$tmp"
    if [ -d "$src_in" ]; then
        say "copying $src_in"
        cp -a "$src_in" "$tmp/bpftrace-$ver"
    elif [ -f "$src_in" ]; then
        if [ -z "${BPFTRACE_SRC:-}" ]; then
            [ "$(sha256sum < "$src_in" | cut -c1-64)" = "$sha256" ] || die "$src_in: not bpftrace $ver's release (sha256)"
        fi
        say "unpacking $src_in"
        tar -xzf "$src_in" -C "$tmp"
    else
        die "no bpftrace $ver source: set BPFTRACE_SRC to its release tarball or tree ($src_in is not there)"
    fi
    [ -f "$tmp/bpftrace-$ver/src/bpftrace.cpp" ] || die "$src_in: no bpftrace-$ver/src/bpftrace.cpp in it"
    mv "$tmp/bpftrace-$ver" "$out/pristine-$ver"
    rm -rf "$tmp"
fi

# The patched tree, written where it differs from what is there.
src=$out/bpftrace-$ver
apply=$out/.apply
rm -rf "$apply"
cp -a "$out/pristine-$ver" "$apply"
for p in "$here"/patches/*.patch; do
    patch -p1 -s -d "$apply" < "$p" || die "$p does not apply"
done
find "$apply" -name '*.orig' -delete
[ -d "$src" ] || cp -a "$out/pristine-$ver" "$src"
(cd "$apply" && find . -type f) | while read -r f; do
    if ! cmp -s "$apply/$f" "$src/$f"; then
        mkdir -p "$(dirname "$src/$f")"
        cp "$apply/$f" "$src/$f"
        echo "$f"
    fi
done > "$out/changed.list"
rm -rf "$apply"
[ -s "$out/changed.list" ] && say "patched: $(tr '\n' ' ' < "$out/changed.list")"

[ -f "$stage/lib/pkgconfig/ksym.pc" ] || die "no ksym.pc in $stage"
# A build directory of another source (the 0.17 fork's) is started over.
if [ -f "$out/build/CMakeCache.txt" ] &&
    ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$out/build/CMakeCache.txt"; then
    say "build directory of another source: starting over"
    rm -rf "$out/build"
fi
mkdir -p "$out/build"
# In the root: cmake once, then make (incremental).
cat > "$out/build/.root-build.sh" << EOF
set -eu
export PKG_CONFIG_PATH=$stage/lib/pkgconfig
cd $out/build
if [ ! -f CMakeCache.txt ]; then
    echo "bpftrace-fork: cmake (in the Debian 13 root)"
    cmake $src -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF > $out/cmake.log 2>&1 ||
        { tail -n 30 $out/cmake.log >&2; exit 1; }
fi
echo "bpftrace-fork: make -j$jobs bpftrace (in the Debian 13 root)"
make -j$jobs bpftrace > $out/make.log 2>&1 ||
    { grep -B2 -A8 'error' $out/make.log | head -n 60 >&2; exit 1; }
EOF
(cd "$top" && sh tools/root/run.sh -- sh "$out/build/.root-build.sh")
cp "$out/build/src/bpftrace" "$out/bpftrace.tmp" && mv "$out/bpftrace.tmp" "$out/bpftrace"
say "built $out/bpftrace"
