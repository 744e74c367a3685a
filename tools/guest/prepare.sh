#!/bin/sh
# Prepares a guest kernel: Debian's stock kernel image of the suite the
# kernel table names (tests/kernels.txt), fetched with `apt-get download`
# through tools/guest/apt.sh and unpacked (never installed on this machine),
# with its headers (bcc's tools compile against them: Debian's kernels have
# no CONFIG_IKHEADERS), its module order from depmod, and a busybox
# initramfs that boots it under qemu and runs a command in a root shared
# over 9p (tools/guest/init.sh).
#
#   sh tools/guest/prepare.sh KERNEL [OUT]     (KERNEL: 5.10, 6.1, 6.12, 7.3; OUT: build/kernels)
#
# Prints the kernel's directory (OUT/<version>). The packages are fetched
# once per kernel version (the one the suite's linux-image-amd64 depends
# on, or KSYM_GUEST_VERSION), the initramfs built again only when this
# script or init.sh changed.
#
# Each image's differences are read from its own files, not from version
# numbers: modules compressed or not (.ko, .ko.xz, .ko.zst), drivers built in
# (modules.builtin), the image split over several packages (linux-binary-*,
# linux-modules-*), /lib or /usr/lib (merged /usr).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
name=${1:?usage: prepare.sh KERNEL [OUT]}
out=${2:-$top/build/kernels}
mkdir -p "$out"
out=$(cd "$out" && pwd)

step() { echo "guest $name: $*" >&2; }
die() { echo "guest $name: prepare failed: $*" >&2; exit 1; }

for tool in apt-get dpkg-deb depmod modprobe gzip xz readelf; do
    command -v "$tool" > /dev/null 2>&1 || die "'$tool' is missing (sh tools/deps.sh test installs it)"
done
[ -x /bin/busybox ] || die "/bin/busybox is missing (apt-get install busybox-static)"
! readelf -l /bin/busybox 2> /dev/null | grep -q INTERP ||
    die "/bin/busybox is not statically linked (apt-get install busybox-static)"

suite=$(sh "$here/kernels.sh" get "$name" suite) || exit 1
apt() { sh "$here/apt.sh" "$suite" "$@"; }
# A backports kernel is not the suite's default: ask for that suite's.
release_opt=""
case $suite in *-backports) release_opt="-o APT::Default-Release=$suite" ;; esac

ver=${KSYM_GUEST_VERSION:-}
if [ -z "$ver" ]; then
    # shellcheck disable=SC2086
    ver=$(apt apt-cache $release_opt depends linux-image-amd64 2> /dev/null |
        sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n 1)
    [ -n "$ver" ] || die "apt-cache cannot say which kernel $suite's linux-image-amd64 depends on"
fi
case $ver in "$name".*) ;; *) die "$suite's kernel is $ver, not $name.*: tests/kernels.txt names the wrong suite" ;; esac
dir=$out/$ver
ln -sfn "$ver" "$out/$name"
ird_out=$dir/initramfs.cpio.gz
if [ -f "$ird_out" ] && [ "$ird_out" -nt "$here/init.sh" ] && [ "$ird_out" -nt "$0" ]; then
    echo "$dir"
    exit 0
fi

# The packages, once per version: the image and the packages it is split
# into (those of its dependencies named after the same version), and the
# headers with their -common part.
core=${ver%-amd64}
if [ ! -f "$dir/.kernel" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/deb"
    pkgs="linux-image-$ver linux-headers-$ver"
    for p in linux-image-$ver linux-headers-$ver; do
        # shellcheck disable=SC2086
        more=$(apt apt-cache $release_opt depends "$p" 2> /dev/null |
            sed -n "s/^ *|\{0,1\}Depends: \(linux-\(binary\|modules\|headers\)-$core\(-amd64\|-common\)\{0,1\}\)$/\1/p")
        pkgs="$pkgs $more"
    done
    pkgs=$(echo "$pkgs" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ')
    step "downloading $pkgs"
    # shellcheck disable=SC2086
    (cd "$dir/deb" && apt apt-get $release_opt download $pkgs > "$dir/download.log" 2>&1) ||
        { cat "$dir/download.log" >&2; die "apt-get download $pkgs"; }
    for deb in "$dir"/deb/*.deb; do
        dpkg-deb -x "$deb" "$dir/root" || die "dpkg-deb -x $deb"
    done
    rm -rf "$dir/deb"
    # Merged /usr or not: the image's own layout says where things are.
    # (boot/vmlinuz-$ver, or lib/modules/$ver/vmlinuz where the image is split)
    vmlinuz=$(find "$dir/root" \( -name "vmlinuz-$ver" -o -path "*/modules/$ver/vmlinuz" \) -type f |
        head -n 1)
    [ -n "$vmlinuz" ] || die "no vmlinuz-$ver in the packages"
    ln -sf "${vmlinuz#"$dir/"}" "$dir/vmlinuz"
    moddir=$dir/root/lib/modules
    [ -d "$moddir/$ver/kernel" ] || moddir=$dir/root/usr/lib/modules
    [ -d "$moddir/$ver/kernel" ] || die "no lib/modules/$ver/kernel in the packages"
    ln -sfn "${moddir#"$dir/"}" "$dir/modules"
    # /lib/modules/$ver/build of the headers package, kept beside the modules.
    [ -d "$dir/root/usr/src/linux-headers-$ver" ] || die "no usr/src/linux-headers-$ver in the headers package"
    step "depmod $ver"
    depmod -b "${moddir%/lib/modules}" "$ver" || die "depmod"
    # The kernel's config: boot/config-$ver, or the headers' .config.
    config=$(find "$dir/root" -name "config-$ver" -type f | head -n 1)
    [ -n "$config" ] || config=$dir/root/usr/src/linux-headers-$ver/.config
    [ -f "$config" ] || die "no config-$ver and no .config in the headers"
    ln -sf "${config#"$dir/"}" "$dir/config"
    echo "$ver" > "$dir/.kernel"
fi

# The initramfs: busybox, the init script, and the modules that reach the
# host over virtio-9p and make the overlay, in modules.dep order,
# uncompressed (busybox's insmod reads plain ELF). Built-in ones are
# left out by modprobe itself.
step "initramfs"
moddir=$(cd "$dir/modules" && pwd -P)
ird=$dir/initramfs
rm -rf "$ird"
mkdir -p "$ird/bin" "$ird/modules" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/newroot"
cp /bin/busybox "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"
cp "$here/init.sh" "$ird/init"
chmod 0755 "$ird/init"
# A driver the config builds in (=y) needs no module; an image without
# modules.builtin (7.3's) would otherwise make modprobe look for one.
want=""
for m in virtio_pci:VIRTIO_PCI 9pnet_virtio:NET_9P_VIRTIO 9p:9P_FS overlay:OVERLAY_FS; do
    grep -q "^CONFIG_${m#*:}=y" "$dir/config" || want="$want ${m%%:*}"
done
[ -n "$want" ] || die "everything is built in: nothing to check the initramfs against"
# shellcheck disable=SC2086
modprobe -d "${moddir%/lib/modules}" -S "$ver" --show-depends -a $want |
    sed -n 's/^insmod \([^ ]*\).*/\1/p' | awk '!seen[$0]++' > "$dir/initramfs.modules"
[ -s "$dir/initramfs.modules" ] || die "modprobe --show-depends found no modules for 9p over virtio"
: > "$ird/modules/order"
while read -r ko; do
    base=$(basename "$ko")
    case $base in
        *.ko.xz) xz -dc "$ko" > "$ird/modules/${base%.xz}"; base=${base%.xz} ;;
        *.ko.zst) zstd -qdc "$ko" > "$ird/modules/${base%.zst}"; base=${base%.zst} ;;
        *.ko.gz) gzip -dc "$ko" > "$ird/modules/${base%.gz}"; base=${base%.gz} ;;
        *) cp "$ko" "$ird/modules/$base" ;;
    esac
    echo "$base" >> "$ird/modules/order"
done < "$dir/initramfs.modules"
(cd "$ird" && find . | /bin/busybox cpio -o -H newc 2> /dev/null | gzip -1 > "$ird_out.tmp") || die "cpio"
mv "$ird_out.tmp" "$ird_out"
rm -rf "$ird"
step "ready: $dir ($(wc -l < "$dir/initramfs.modules") initramfs modules)"
echo "$dir"
