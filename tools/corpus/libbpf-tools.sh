#!/bin/sh
# Builds the corpus of real tools' BPF objects: the objects Debian's
# libbpf-tools package ships inside its 61 tools (bcc's libbpf-tools,
# compiled by Debian with its clang against bcc's vmlinux.h, each embedded
# in its tool by `bpftool gen skeleton`), cut out of the binaries (every
# little-endian 64-bit EM_BPF ELF image, ending at its section headers),
# one file per distinct object, named after the tool of shortest name that
# carries it (MANIFEST says which tools share it).
#
#   tools/corpus/libbpf-tools.sh OUT.tar.xz [VERSION]
#
# Needs: apt-get (the package is downloaded, not installed), dpkg-deb,
# python3, xz. The result is committed
# (tests/data/libbpf-tools-0.26/objects.tar.xz): the tests need none of
# the above.
set -eu
out=$(realpath -m "$1")
version=${2:-0.26.0+ds-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$work" && apt-get download "libbpf-tools=$version" > /dev/null 2>&1) ||
    { echo "libbpf-tools.sh: apt-get download libbpf-tools=$version failed" >&2; exit 1; }
dpkg-deb -x "$work"/libbpf-tools_*.deb "$work/root"
mkdir -p "$work/objects"
python3 - "$work/objects" "$version" "$work"/root/usr/sbin/* <<'PY'
import hashlib, os, struct, sys
# The shortest name first: fsdist names the object ext4dist, xfsdist... share.
out, version = sys.argv[1], sys.argv[2]
tools = sorted(sys.argv[3:], key=lambda p: (len(os.path.basename(p)), p))
seen = {}  # digest -> object name
manifest = []
for path in tools:
    tool = os.path.basename(path)
    data = open(path, 'rb').read()
    found = 0
    i = data.find(b"\x7fELF\x02\x01\x01")
    while i >= 0:
        if struct.unpack_from('<H', data, i + 18)[0] == 247:  # EM_BPF
            shoff = struct.unpack_from('<Q', data, i + 0x28)[0]
            shentsize, shnum = struct.unpack_from('<HH', data, i + 0x3a)
            image = data[i:i + shoff + shentsize * shnum]
            digest = hashlib.sha256(image).hexdigest()
            name = tool if found == 0 else f"{tool}.{found}"
            if digest not in seen:
                seen[digest] = name
                open(f"{out}/{name}.bpf.o", 'wb').write(image)
            manifest.append(f"{tool} {seen[digest]}.bpf.o {digest[:16]}")
            found += 1
        i = data.find(b"\x7fELF\x02\x01\x01", i + 1)
    if not found:
        sys.exit(f"no BPF object in {tool}")
with open(f"{out}/MANIFEST", 'w') as f:
    f.write(f"# Debian libbpf-tools {version}: tool, the object it embeds, sha256 prefix\n")
    f.write("\n".join(sorted(manifest)) + "\n")
PY
tar -C "$work/objects" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . | xz -9e > "$out"
echo "$(ls "$work/objects" | grep -c '\.bpf\.o$') objects from $(ls "$work/root/usr/sbin" | wc -l) tools -> $out"
