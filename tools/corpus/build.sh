#!/bin/sh
# Builds the corpus of real BPF programs the differential tests relocate:
# the kernel's own BPF selftests (tools/testing/selftests/bpf/progs/*.c of
# Debian's linux-source-6.1), compiled with clang-19 against a vmlinux.h
# that bpftool generates from this machine's kernel BTF and libbpf-dev's
# headers, every object that compiles kept, DWARF stripped (BTF kept).
#
#   tools/corpus/build.sh OUT.tar.xz
#
# Needs: linux-source-6.1, clang-19, llvm-19, bpftool, libbpf-dev, xz.
# The result is committed (tests/data/bpf-selftests-6.1/objects.tar.xz):
# the tests need none of the above.
set -eu
out=$(realpath -m "$1")
src=${LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
clang=${BPF_CLANG:-clang-19}
strip=${BPF_STRIP:-llvm-strip-19}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tar -xJf "$src" -C "$work" --wildcards \
    'linux-source-6.1/tools/testing/selftests/bpf/*' \
    'linux-source-6.1/tools/include/*' 'linux-source-6.1/tools/lib/bpf/*'
S=$work/linux-source-6.1/tools/testing/selftests/bpf
T=$work/linux-source-6.1/tools
mkdir -p "$work/inc/bpf" "$work/obj" "$work/logs"
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$work/inc/vmlinux.h"
cp /usr/include/bpf/*.h "$work/inc/bpf/"
resdir=$($clang -print-resource-dir)

ok=0 bad=0
for c in "$S"/progs/*.c; do
    n=$(basename "$c" .c)
    if $clang -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -mlittle-endian \
        -I "$work/inc" -I "$S" -I "$S/progs" -I "$T/include/uapi" \
        -idirafter "$resdir/include" -idirafter /usr/include/x86_64-linux-gnu -idirafter /usr/include \
        -Wno-compare-distinct-pointer-types -w \
        -c "$c" -o "$work/obj/$n.bpf.o" > "$work/logs/$n.log" 2>&1; then
        $strip -g "$work/obj/$n.bpf.o"
        ok=$((ok + 1))
    else
        rm -f "$work/obj/$n.bpf.o"
        bad=$((bad + 1))
    fi
done
echo "compiled $ok, failed $bad"
# Deterministic archive: sorted names, fixed owner and time.
(cd "$work/obj" && ls | LC_ALL=C sort > ../list &&
    tar --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - -T ../list) | xz -9e > "$out"
ls -l "$out"
