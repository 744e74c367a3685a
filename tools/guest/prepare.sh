#!/bin/sh
# Prepares the second kernel: Debian's stock kernel image, fetched with
# `apt-get download` and unpacked (never installed on this machine), its
# module order from depmod, and a busybox initramfs that boots it under qemu
# and runs a command of this machine's root filesystem (tools/guest/init.sh).
#
#   sh tools/guest/prepare.sh [OUT]     (OUT: build/guest)
#
# Prints the kernel's directory (OUT/<version>). The package is fetched
# once per kernel version, the initramfs built again only when this script
# or init.sh changed.
# KSYM_GUEST_KERNEL=<version> (e.g. 6.1.0-57-amd64) picks the image;
# otherwise the one Debian's linux-image-amd64 depends on.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/guest}
mkdir -p "$out"
out=$(cd "$out" && pwd)

step() { echo "guest: $*" >&2; }
die() { echo "guest: prepare failed: $*" >&2; exit 1; }

for tool in apt-get dpkg-deb depmod modprobe gzip readelf; do
    command -v "$tool" > /dev/null 2>&1 || die "'$tool' is missing (sh tools/deps.sh test installs it)"
done
[ -x /bin/busybox ] || die "/bin/busybox is missing (apt-get install busybox-static)"
! readelf -l /bin/busybox 2> /dev/null | grep -q INTERP ||
    die "/bin/busybox is not statically linked (apt-get install busybox-static)"

ver=${KSYM_GUEST_KERNEL:-}
if [ -z "$ver" ]; then
    ver=$(apt-cache depends linux-image-amd64 2> /dev/null |
        sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n 1)
    [ -n "$ver" ] || die "apt-cache cannot say which kernel linux-image-amd64 depends on (apt-get update?)"
fi
dir=$out/$ver
ird_out=$dir/initramfs.cpio.gz
if [ -f "$ird_out" ] && [ "$ird_out" -nt "$here/init.sh" ] && [ "$ird_out" -nt "$0" ]; then
    echo "$dir"
    exit 0
fi

# The kernel package, once per version.
if [ ! -f "$dir/.kernel" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/deb"
    step "downloading linux-image-$ver"
    (cd "$dir/deb" && apt-get download "linux-image-$ver" > "$dir/download.log" 2>&1) ||
        { cat "$dir/download.log" >&2; die "apt-get download linux-image-$ver"; }
    step "unpacking $(ls "$dir/deb")"
    dpkg-deb -x "$dir"/deb/*.deb "$dir/root" || die "dpkg-deb -x"
    rm -rf "$dir/deb"
    [ -f "$dir/root/boot/vmlinuz-$ver" ] || die "no boot/vmlinuz-$ver in the package"
    ln -sf "root/boot/vmlinuz-$ver" "$dir/vmlinuz"
    step "depmod $ver"
    depmod -b "$dir/root" "$ver" || die "depmod -b $dir/root $ver"
    echo "$ver" > "$dir/.kernel"
fi

# The initramfs: busybox, the init script, and the modules that reach the
# host's root over virtio-9p, in modules.dep order.
step "initramfs"
ird=$dir/initramfs
mkdir -p "$ird/bin" "$ird/modules" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/newroot"
cp /bin/busybox "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"
cp "$here/init.sh" "$ird/init"
chmod 0755 "$ird/init"
modprobe -d "$dir/root" -S "$ver" --show-depends -a virtio_pci 9pnet_virtio 9p overlay |
    sed -n 's/^insmod \([^ ]*\).*/\1/p' | awk '!seen[$0]++' > "$dir/initramfs.modules"
[ -s "$dir/initramfs.modules" ] || die "modprobe --show-depends found no modules for 9p over virtio"
: > "$ird/modules/order"
while read -r ko; do
    name=$(basename "$ko")
    cp "$ko" "$ird/modules/$name"
    echo "$name" >> "$ird/modules/order"
done < "$dir/initramfs.modules"
(cd "$ird" && find . | /bin/busybox cpio -o -H newc 2> /dev/null | gzip -1 > "$ird_out.tmp") || die "cpio"
mv "$ird_out.tmp" "$ird_out"
rm -rf "$ird"
step "ready: $dir ($(wc -l < "$dir/initramfs.modules") initramfs modules)"
echo "$dir"
