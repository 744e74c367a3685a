#!/bin/sh
# The fuzz targets' seed corpora, made from the repository's real data and
# fixtures, the same on every machine (make fuzz, make test-fuzz).
#   fuzz/corpus.sh OUT_DIR
set -eu
out=$1
rm -rf "$out"
for t in kallsyms ranges query vmlinux btf bpf_object kconfig snapshot stack; do
    mkdir -p "$out/$t"
    # Inputs that once failed, kept for ever.
    if [ -d "fuzz/regressions/$t" ]; then
        cp fuzz/regressions/$t/* "$out/$t/" 2>/dev/null || true
    fi
done
k=$out/kallsyms
i=0
for d in linux-6.1-cloud linux-6.12-cloud vm-6.18; do
    gzip -dc "tests/data/$d/kallsyms.gz" | head -n 150 > "$k/$d.head"
    gzip -dc "tests/data/$d/kallsyms.gz" | grep '\[' | head -n 150 > "$k/$d.modules" || true
    gzip -dc "tests/data/$d/kallsyms.gz" | tail -n 150 > "$k/$d.tail"
done
head -n 200 tests/fixtures/builtin/kallsyms > "$k/builtin.kallsyms"
head -n 200 tests/fixtures/builtin/kallmodsyms > "$k/builtin.kallmodsyms"
# Stacks: a table, a NUL, then 4-byte steps (selector, symbol index u16,
# offset byte; selector 3 takes 8 more bytes as an address).
steps='\000\001\000\005\001\002\000\377\002\003\000\001\000\100\000\000\003\000\000\000\000\000\000\201\377\377\377\001\007\000\020'
for f in "$k"/*.modules "$k"/*.tail "$k/builtin.kallmodsyms"; do
    { cat "$f"; printf "\000$steps$steps"; } > "$out/stack/$(basename "$f")"
done
for f in tests/fixtures/*/modules.builtin.ranges; do
    i=$((i + 1))
    head -c 8192 "$f" > "$out/ranges/ranges$i"
done
printf 'vfs_read\nvfs_read\nvfs_*\n' > "$out/query/plain"
printf 'ext4`ext4_*\next4_file_open\n' > "$out/query/module"
printf '*`[a-c]?_x*\\*\nab_x*\n' > "$out/query/class"
printf 'bpf`bpf_prog_*\nbpf_prog_0123456789abcdef_x\n' > "$out/query/pseudo"
for f in c-tests/bpf/*.bpf.o tools/bpf/count.bpf.o; do
    cp "$f" "$out/vmlinux/"
    cp "$f" "$out/bpf_object/"
done
cp fuzz/seeds/vmlinux-small.elf "$out/vmlinux/"
cp fuzz/seeds/vmlinux-small.btf "$out/btf/"
for m in crc7 nls_utf8 libcrc32c; do
    gzip -dc "tests/data/linux-6.1-cloud/btf/$m.gz" > "$out/btf/$m.btf"
done
corpus=build/testdata/bpf-selftests-6.1
if [ -d "$corpus" ]; then
    for f in $(ls -S "$corpus" | tail -n 12); do
        cp "$corpus/$f" "$out/bpf_object/"
    done
fi
# Real tools' objects: data sections whose variables need libbpf's offset
# fixups (the compiler left them zero).
tools=build/testdata/libbpf-tools-0.26
if [ -d "$tools" ]; then
    for f in $(ls -S "$tools" | grep '\.bpf\.o$' | tail -n 6); do
        cp "$tools/$f" "$out/bpf_object/tool-$f"
    done
fi
printf 'CONFIG_BPF=y\n# CONFIG_X is not set\nCONFIG_HZ=250\nCONFIG_S="abc"\nCONFIG_M=m\n' > "$out/kconfig/config"
gzip -n -c "$out/kconfig/config" > "$out/kconfig/config.gz"
# Snapshot damage: which snapshot (bit 0: BTF) and cut (bit 1), then
# (u32 offset, xor byte) patches; the snapshots themselves are written by
# the target at start.
sn=$out/snapshot
printf '\000' > "$sn/table"
printf '\001' > "$sn/btf"
printf '\000\320\007\000\000\001' > "$sn/table-byte"
printf '\001\130\002\000\000\100' > "$sn/btf-byte"
printf '\003\054\001\000\000\377' > "$sn/btf-cut"
printf '\002\210\023\000\000\000' > "$sn/table-cut"
echo "fuzz corpora in $out: $(find "$out" -type f | wc -l) files"
