#!/bin/sh
# Builds the libbpf oracle tests that need no bpf_object__prepare (libbpf
# 1.6 added it) against the libbpf of the root this runs in: Debian 13's
# libbpf 1.5 (tools/root/run.sh runs it there), statically, with libksym
# from the staged install (make test-c-build). Into OUT/.
#
#   sh tools/root/run.sh -- sh c-tests/libbpf/build-root.sh STAGE OUT
set -eu

stage=${1:?usage: build-root.sh STAGE OUT}
out=${2:?usage: build-root.sh STAGE OUT}
lib=$(find /usr/lib -name libbpf.a | head -n 1)
[ -n "$lib" ] || { echo "build-root.sh: no libbpf.a in this root (libbpf-dev)" >&2; exit 1; }
mkdir -p "$out/loader"
# The bundled loader (tools/bpf_loader.h), compiled once for both.
for src in tools/bpf_loader_*.c tools/bpf_multi.c; do
    cc -std=gnu11 -Wall -Wextra -Werror -g -O1 -I"$stage/include" -c -o "$out/loader/$(basename "$src" .c).o" "$src"
done
rm -f "$out/libkl.a"
ar rcs "$out/libkl.a" "$out"/loader/*.o
for t in test_libbpf_corpus test_libbpf_vars; do
    cc -std=gnu11 -Wall -Wextra -Werror -g -O1 -I"$stage/include" -o "$out/$t" "c-tests/libbpf/$t.c" \
        "$out/libkl.a" "$lib" -lelf -lz -L"$stage/lib" -lksym -Wl,-rpath,"$stage/lib"
done
echo "built test_libbpf_corpus test_libbpf_vars against $(dpkg-query -W -f='libbpf ${Version}' libbpf-dev 2> /dev/null)"
