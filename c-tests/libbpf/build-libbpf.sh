#!/bin/sh
# Builds the libbpf the oracle tests (c-tests/libbpf/) link: libbpf
# v1.7.0, static, from the C sources that crates.io's libbpf-sys 1.7.0
# vendors (fetched with `cargo vendor`, checksummed by cargo), into
#   $1/lib/libbpf.a  $1/include/bpf/*.h  $1/include/linux/*.h (its UAPI)
# Needs cargo, make, a C compiler, libelf-dev and zlib1g-dev. Test-only:
# nothing of the library links it.
set -eu

out=${1:?usage: build-libbpf.sh OUTDIR}
version=1.7.0
work="$out.work"
rm -rf "$work" "$out"
mkdir -p "$work/fetch"
cat > "$work/fetch/Cargo.toml" <<TOML
[package]
name = "ksym-libbpf-oracle-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "lib.rs"

[dependencies]
libbpf-sys = { version = "=$version", default-features = false }

[workspace]
TOML
: > "$work/fetch/lib.rs"
(cd "$work/fetch" && cargo vendor --quiet --versioned-dirs ../vendor > /dev/null)
src=$(echo "$work"/vendor/libbpf-sys-"$version"+v*/libbpf/src)
[ -f "$src/libbpf.c" ] || { echo "build-libbpf.sh: no libbpf sources in $src" >&2; exit 1; }
grep -q "LIBBPF_MINOR_VERSION 7" "$src/libbpf_version.h" \
    || { echo "build-libbpf.sh: $src is not libbpf 1.7" >&2; exit 1; }
make -s -C "$src" -j2 BUILD_STATIC_ONLY=y OBJDIR="$(cd "$work" && pwd)/obj" \
    DESTDIR="$(cd "$work" && pwd)/inst" PREFIX= LIBDIR=/lib INCLUDEDIR=/include \
    install install_uapi_headers > "$work/make.log" 2>&1 \
    || { tail -n 30 "$work/make.log" >&2; exit 1; }
mkdir -p "$out"
mv "$work/inst/lib" "$work/inst/include" "$out/"
rm -rf "$work"
echo "libbpf $version (libbpf-sys $version) built into $out"
