#!/bin/sh
# /init of the guest's initramfs (busybox sh; tools/guest/prepare.sh puts it
# there). It loads the virtio/9p modules, mounts the root it is given (this
# machine's /, or the Debian 13 root) read-only under a tmpfs overlay, the
# project directory read-write, and the kernel image's modules and headers,
# then runs the run directory's cmd.sh in a chroot and powers off. Every step
# names itself on the console; a failed one prints "ksym-guest: FAILED: <step>"
# and powers off, so tools/guest/run.sh can say which.
#
# Kernel command line: ksym.project=DIR ksym.run=DIR (absolute host paths,
# the run directory inside the project directory), ksym.moddir=PATH (where
# the kernel packages keep lib/modules: lib/modules or usr/lib/modules).
export PATH=/bin

step() { echo "ksym-guest: $*"; }
fail() {
    echo "ksym-guest: FAILED: $*"
    poweroff -f
    sleep 10
}

/bin/busybox mount -t proc proc /proc || fail "mount /proc"
/bin/busybox --install -s /bin
mount -t sysfs sys /sys || fail "mount /sys"
mount -t devtmpfs dev /dev || fail "mount /dev"

project=
rundir=
moddir=
for arg in $(cat /proc/cmdline); do
    case $arg in
        ksym.project=*) project=${arg#ksym.project=} ;;
        ksym.run=*) rundir=${arg#ksym.run=} ;;
        ksym.moddir=*) moddir=${arg#ksym.moddir=} ;;
    esac
done
[ -n "$project" ] && [ -n "$rundir" ] && [ -n "$moddir" ] ||
    fail "ksym.project=, ksym.run= and ksym.moddir= on the kernel command line"

step "loading $(wc -l < /modules/order) modules for 9p"
while read -r ko; do
    insmod "/modules/$ko" || fail "insmod $ko"
done < /modules/order

step "mounting the root"
opts=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /lower /rw
mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower || fail "mount 9p hostroot (the root to run in)"
# That root stays read-only; the guest writes to a tmpfs above it.
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "mount the tmpfs for the overlay"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
    fail "mount the overlay of the host's root on /newroot"

step "mounting proc, sys, dev, tmpfs, the project, bpffs, tracefs, debugfs, the image's modules and headers"
r=/newroot
mount -t proc proc $r/proc || fail "mount $r/proc"
mount -t sysfs sys $r/sys || fail "mount $r/sys"
mount -t devtmpfs dev $r/dev || fail "mount $r/dev"
mount -t devpts devpts $r/dev/pts 2> /dev/null || true
mount -t tmpfs -o mode=1777 tmpfs $r/tmp || fail "mount tmpfs on /tmp"
mount -t tmpfs -o mode=0755 tmpfs $r/run || fail "mount tmpfs on /run"
mkdir -p $r/run/shm
# The project after the tmpfs mounts: a clone under /tmp or /run stays visible.
mkdir -p "$r$project" || fail "mkdir $project"
mount -t 9p -o "$opts,cache=mmap" project "$r$project" || fail "mount 9p project on $project (read-write)"
[ -f "$r$rundir/cmd.sh" ] || fail "no $rundir/cmd.sh through the project mount"
mount -t bpf bpf $r/sys/fs/bpf || fail "mount bpffs on /sys/fs/bpf"
mount -t tracefs tracefs $r/sys/kernel/tracing || fail "mount tracefs"
mount -t debugfs debugfs $r/sys/kernel/debug || fail "mount debugfs"
# The kernel's unpacked packages: its modules on /lib/modules, its headers
# on /usr/src (the modules' build and source links point there).
mkdir -p /kernel $r/lib/modules $r/usr/src || fail "mkdir /lib/modules /usr/src"
mount -t 9p -o "$opts,ro,cache=loose" kernel /kernel || fail "mount 9p kernel (the image's packages)"
mount -o bind "/kernel/$moddir" $r/lib/modules || fail "bind $moddir on /lib/modules"
mount -o bind /kernel/usr/src $r/usr/src || fail "bind usr/src on /usr/src"
[ -d "$r/lib/modules/$(uname -r)" ] || fail "no /lib/modules/$(uname -r) in the image's modules"
chroot $r test -d "/lib/modules/$(uname -r)/build/include" || fail "no headers at /lib/modules/$(uname -r)/build"

ip link set lo up || fail "ip link set lo up (loopback for the TCP tests)"

step "running $rundir/cmd.sh"
chroot $r /bin/sh "$rundir/cmd.sh" >> "$r$rundir/stdout" 2>> "$r$rundir/stderr" < /dev/null
echo $? > "$r$rundir/status"
sync
step "done: status $(cat "$r$rundir/status")"
poweroff -f
sleep 10
