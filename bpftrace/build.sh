#!/bin/sh
# Builds the bpftrace fork: Debian's bpftrace 0.17 source, our patches
# (bpftrace/patches/*.patch, applied in order with patch -p1), linked with
# libksym through `pkg-config ksym`.
#
#   sh bpftrace/build.sh [OUT]        (default build/bpftrace-fork; `make bpftrace-fork`)
#
# OUT/stage         libksym, `make install PREFIX=OUT/stage DESTDIR=`
# OUT/pristine-0.17.0  `apt-get source bpftrace`, once (needs a deb-src entry:
#                   sh tools/deps.sh bpftrace-fork)
# OUT/bpftrace-0.17.0  the patched tree; only files whose patched text changed
#                   are rewritten, so rebuilds are incremental
# OUT/build         cmake's build directory, kept
# OUT/bpftrace      the binary
#
# JOBS (default 2) is make's -j. libksym is linked statically (libksym.a and
# its Libs.private): the binary runs in the guest without LD_LIBRARY_PATH and
# does not change when the stage is rebuilt.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=${1:-$top/build/bpftrace-fork}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/stage
jobs=${JOBS:-2}
ver=0.17.0

say() { echo "bpftrace-fork: $*"; }

say "libksym into $stage"
make -C "$top" --no-print-directory install PREFIX="$stage" DESTDIR= > "$out/libksym-install.log" 2>&1 ||
    { tail -n 30 "$out/libksym-install.log" >&2; exit 1; }

if [ ! -d "$out/pristine-$ver" ]; then
    say "apt-get source bpftrace (Debian's $ver)"
    tmp=$out/.fetch
    rm -rf "$tmp" && mkdir -p "$tmp"
    (cd "$tmp" && apt-get source -q "bpftrace=$ver-1") > "$out/fetch.log" 2>&1 ||
        { cat "$out/fetch.log" >&2; echo "no deb-src entry? sh tools/deps.sh bpftrace-fork" >&2; exit 1; }
    mv "$tmp/bpftrace-$ver" "$out/pristine-$ver"
    rm -rf "$tmp"
fi

# The patched tree, written where it differs from what is there.
src=$out/bpftrace-$ver
apply=$out/.apply
rm -rf "$apply"
cp -a "$out/pristine-$ver" "$apply"
for p in "$here"/patches/*.patch; do
    patch -p1 -s -d "$apply" < "$p" || { echo "bpftrace-fork: $p does not apply" >&2; exit 1; }
done
[ -d "$src" ] || cp -a "$out/pristine-$ver" "$src"
changed=0
(cd "$apply" && find . -type f) | while read -r f; do
    if ! cmp -s "$apply/$f" "$src/$f"; then
        mkdir -p "$(dirname "$src/$f")"
        cp "$apply/$f" "$src/$f"
        echo "$f"
    fi
done > "$out/changed.list"
rm -rf "$apply"
[ -s "$out/changed.list" ] && say "patched: $(tr '\n' ' ' < "$out/changed.list")"

export PKG_CONFIG_PATH="$stage/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --exists ksym || { echo "bpftrace-fork: pkg-config finds no ksym in $stage" >&2; exit 1; }
mkdir -p "$out/build"
if [ ! -f "$out/build/CMakeCache.txt" ]; then
    say "cmake"
    (cd "$out/build" && cmake "$src" -DBUILD_TESTING=OFF -DUSE_SYSTEM_BPF_BCC=1 \
        -DCMAKE_BUILD_TYPE=Release -DLLVM_REQUESTED_VERSION=14) > "$out/cmake.log" 2>&1 ||
        { tail -n 30 "$out/cmake.log" >&2; exit 1; }
fi
say "make -j$jobs bpftrace"
make -C "$out/build" -j"$jobs" bpftrace > "$out/make.log" 2>&1 ||
    { grep -B2 -A8 'error' "$out/make.log" | head -n 60 >&2; exit 1; }
cp "$out/build/src/bpftrace" "$out/bpftrace.tmp" && mv "$out/bpftrace.tmp" "$out/bpftrace"
say "built $out/bpftrace"
