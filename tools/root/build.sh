#!/bin/sh
# Builds the Debian 13 (trixie) root the tests use for today's userland
# (bpftrace 0.23.2, bcc 0.31, libbpf 1.5, bpftool 7.5, LLVM 19): debootstrap
# minbase, then the packages of tools/root/debian13.packages installed by
# the root's own apt inside a mount namespace (nothing stays mounted, and
# this machine's apt configuration is never touched).
#
#   sh tools/root/build.sh [OUT]        (OUT: build/root/debian13)
#
# Prints OUT. The root is built once and kept, keyed by the package list
# and this script: it is built again only when either changed (into
# OUT.new, then moved in place). KSYM_APT_MIRROR picks the mirror.
# Needs root, debootstrap and unshare.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top/build/root/debian13}
list=$here/debian13.packages
mirror=${KSYM_APT_MIRROR:-http://deb.debian.org/debian}

die() { echo "root: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "building the Debian 13 root needs root (debootstrap, chroot)"
command -v debootstrap > /dev/null 2>&1 || die "debootstrap is missing (sh tools/deps.sh test installs it)"
command -v unshare > /dev/null 2>&1 || die "unshare is missing (util-linux)"

pkgs=$(sed -e 's/#.*//' "$list" | tr -s ' \t\n' ' ' | sed 's/^ //; s/ $//')
[ -n "$pkgs" ] || die "no packages in $list"
key=$(cat "$list" "$0" | sha256sum | cut -c1-16)
if [ -f "$out/.ksym-root" ] && [ "$(cat "$out/.ksym-root")" = "$key" ]; then
    echo "$out"
    exit 0
fi

t0=$(date +%s)
new=$out.new
rm -rf "$new"
mkdir -p "$new" "$top/build/apt/debootstrap-cache"
echo "root: debootstrap trixie (minbase) into $new" >&2
# The downloaded packages are kept (--cache-dir): a rebuild after a list
# change fetches only what is new.
debootstrap --variant=minbase --cache-dir="$top/build/apt/debootstrap-cache" \
    trixie "$new" "$mirror" > "$out.log" 2>&1 || { tail -n 30 "$out.log" >&2; die "debootstrap failed ($out.log)"; }

echo "root: installing $(echo "$pkgs" | wc -w) packages with the root's apt" >&2
# Inside a mount namespace: proc, sys and dev are bound for apt and the
# maintainer scripts and vanish with the namespace. The packages' own
# archives are shared with the debootstrap cache.
unshare -m sh -eu -c '
    r=$1; cache=$2; shift 2
    mount --make-rprivate /
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mkdir -p "$r/var/cache/apt/archives"
    mount --bind "$cache" "$r/var/cache/apt/archives"
    cp /etc/resolv.conf "$r/etc/resolv.conf" 2> /dev/null || true
    chroot "$r" apt-get -qq update
    DEBIAN_FRONTEND=noninteractive chroot "$r" apt-get -qq install -y --no-install-recommends "$@"
    chroot "$r" apt-get -qq clean
' sh "$new" "$top/build/apt/debootstrap-cache" $pkgs >> "$out.log" 2>&1 ||
    { tail -n 30 "$out.log" >&2; die "installing the packages failed ($out.log)"; }

# Versions the tests and docs name, for the log and docs/limits.md.
chroot "$new" dpkg-query -W -f='${Package} ${Version}\n' bpftrace libbpfcc libbpf1 bpftool llvm-19 python3 \
    > "$new/.ksym-versions" 2> /dev/null || true
echo "$key" > "$new/.ksym-root"
rm -rf "$out"
mv "$new" "$out"
echo "root: ready in $(($(date +%s) - t0)) s: $(tr '\n' ',' < "$out/.ksym-versions")" >&2
echo "$out"
