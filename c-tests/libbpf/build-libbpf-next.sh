#!/bin/sh
# Builds libbpf's newest source (c-tests/libbpf/src/README.md: the
# multi links of Linux 7.3, in no release), static, into
#   $1/lib/libbpf.a  $1/include/bpf/*.h  $1/include/linux/*.h (its UAPI)
# Needs make, a C compiler, libelf-dev, zlib1g-dev and pkg-config.
# Test-only: nothing of the library links it.
set -eu

out=${1:?usage: build-libbpf-next.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
tarball=$here/src/libbpf-f7081a6baf3f.tar.gz
want=235de7132bf3ec261d1206b6df060a9e062665bd0549ca74a965d0b26f7f122a
got=$(sha256sum "$tarball" | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "build-libbpf-next.sh: $tarball: sha256 $got, expected $want" >&2; exit 1; }
work="$out.work"
rm -rf "$work" "$out"
mkdir -p "$work"
tar -xzf "$tarball" -C "$work"
src=$work/libbpf-f7081a6baf3f/src
grep -q "bpf_program__attach_tracing_multi" "$src/libbpf.h" \
    || { echo "build-libbpf-next.sh: $src has no multi links" >&2; exit 1; }
make -s -C "$src" -j2 BUILD_STATIC_ONLY=y OBJDIR="$(cd "$work" && pwd)/obj" \
    DESTDIR="$(cd "$work" && pwd)/inst" PREFIX= LIBDIR=/lib INCLUDEDIR=/include \
    install install_uapi_headers > "$work/make.log" 2>&1 \
    || { tail -n 30 "$work/make.log" >&2; exit 1; }
mkdir -p "$out"
mv "$work/inst/lib" "$work/inst/include" "$out/"
rm -rf "$work"
echo "libbpf f7081a6baf3f (newest source, multi links) built into $out"
