#!/bin/sh
# Runs a command inside a qemu guest booted with one of Debian's stock
# kernels (tools/guest/prepare.sh; the kernel table tests/kernels.txt names
# them and the root each runs), as root, in a chroot of that root (this
# machine's /, or the Debian 13 root of tools/root/build.sh) shared
# read-only over virtio-9p under a tmpfs overlay. The project directory
# (the git top level of the current directory) is mounted read-write at its
# own path, /tmp and /run are tmpfs, and proc, sys, bpffs, tracefs and
# debugfs are mounted. The image's modules are in /lib/modules/$(uname -r),
# so modprobe works inside, and its headers in /usr/src.
#
#   sh tools/guest/run.sh [--kernel K] [--root host|debian13] [--modules m1,m2] [--timeout S] \
#       [--env NAME=VALUE]... [--mem MiB] [--cpus N] -- COMMAND [ARGS...]
#
# --kernel: a guest of the table (5.10, 6.1, 6.12, 7.3; default
# $KSYM_GUEST_KERNEL, else 6.1); --root: the table's root for it unless
# given. Inside: KSYM_GUEST=1, KSYM_KERNEL=<the table's name> and
# KSYM_REQUIRE=all (a skip of a kernel feature is a failure), after the
# caller's KSYM_* and RUST_BACKTRACE variables; --env comes last. The command's stdout and stderr come back here as it runs.
# Exit status: the command's; 124 when the guest times out (--timeout,
# default 900 s, the whole guest); 125 when the guest fails before the
# command runs (the failed step is named and the console log kept in
# build/guest/console-<kernel>.log).
#
# KSYM_GUEST_ACCEL=kvm boots with KVM instead of TCG (KVM cannot run these
# kernels on the development machines; TCG is the default).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
modules=""
kernel=${KSYM_GUEST_KERNEL:-6.1}
rootname=""
timeout_s=900
mem=4096
cpus=$(nproc 2> /dev/null || echo 2)
extra_env=""

usage() {
    sed -n '12,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

while [ $# -gt 0 ]; do
    case $1 in
        --modules) [ $# -ge 2 ] || usage; modules=$(echo "$2" | tr ',' ' '); shift 2 ;;
        --kernel) [ $# -ge 2 ] || usage; kernel=$2; shift 2 ;;
        --root) [ $# -ge 2 ] || usage; rootname=$2; shift 2 ;;
        --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
        --mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
        --cpus) [ $# -ge 2 ] || usage; cpus=$2; shift 2 ;;
        --env)
            [ $# -ge 2 ] || usage
            case $2 in *=*) ;; *) echo "run.sh: --env wants NAME=VALUE, not '$2'" >&2; exit 2 ;; esac
            extra_env="$extra_env
export ${2%%=*}=$(quote "${2#*=}")"
            shift 2
            ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) echo "run.sh: unknown option '$1'" >&2; usage ;;
    esac
done
[ $# -gt 0 ] || usage

cwd=$(pwd -P)
project=$(git rev-parse --show-toplevel 2> /dev/null || echo "$cwd")
project=$(cd "$project" && pwd -P)
case $cwd in "$project"|"$project"/*) ;; *)
    echo "run.sh: run it from inside the project ($project)" >&2; exit 2 ;; esac
case $project in *[!A-Za-z0-9_./+-]*)
    echo "run.sh: the project path '$project' has characters the kernel command line cannot carry" >&2
    exit 2 ;;
esac
command -v qemu-system-x86_64 > /dev/null 2>&1 ||
    { echo "run.sh: qemu-system-x86_64 is missing (sh tools/deps.sh test installs it)" >&2; exit 125; }

[ -n "$rootname" ] || rootname=$(sh "$here/kernels.sh" get "$kernel" root) || exit 125
case $rootname in
    host) rootdir=/ ;;
    debian13) rootdir=$(sh "$project/tools/root/build.sh") || exit 125 ;;
    *) echo "run.sh: unknown root '$rootname' (host, debian13)" >&2; exit 2 ;;
esac
kdir=$(sh "$here/prepare.sh" "$kernel" "$project/build/kernels") || exit 125
moddir=$(readlink "$kdir/modules")
moddir=${moddir#root/}
run=$project/build/guest/runs/$kernel-$$
rm -rf "$run"
mkdir -p "$run"
: > "$run/stdout"
: > "$run/stderr"

{
    echo "# written by tools/guest/run.sh"
    echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"
    env | grep -E '^(KSYM_[A-Za-z0-9_]*|RUST_BACKTRACE)=' | grep -v '^KSYM_GUEST' | while IFS= read -r kv; do
        echo "export ${kv%%=*}=$(quote "${kv#*=}")"
    done
    echo "export KSYM_GUEST=1 KSYM_KERNEL=$(quote "$kernel") KSYM_REQUIRE=all"
    echo "$extra_env"
    for m in $modules; do
        echo "modprobe $(quote "$m") || { echo \"guest: modprobe $m failed\" >&2; exit 125; }"
    done
    echo "cd $(quote "$cwd") || exit 125"
    printf 'exec'
    for a in "$@"; do printf ' %s' "$(quote "$a")"; done
    echo
} > "$run/cmd.sh"

accel=tcg,thread=multi
cpu=max
if [ "${KSYM_GUEST_ACCEL:-tcg}" = kvm ]; then accel=kvm; cpu=${KSYM_GUEST_CPU:-host}; fi

qpid=""
tpid=""
epid=""
cleanup() {
    for p in $qpid $tpid $epid; do kill "$p" 2> /dev/null || true; done
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM HUP

# One boot; the console, stdout and stderr files start empty.
boot() {
    : > "$run/console.log"
    rm -f "$run/status"
    timeout -k 10 "$timeout_s" qemu-system-x86_64 -nodefaults -no-user-config -no-reboot \
        -accel "$accel" -cpu "$cpu" -smp "$cpus" -m "$mem" \
        -display none -monitor none -serial "file:$run/console.log" \
        -kernel "$kdir/vmlinuz" -initrd "$kdir/initramfs.cpio.gz" \
        -append "console=ttyS0 panic=-1 loglevel=4 no_timer_check ksym.project=$project ksym.run=$run ksym.moddir=$moddir" \
        -virtfs "local,path=$rootdir,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap" \
        -virtfs "local,path=$project,mount_tag=project,security_model=passthrough,multidevs=remap" \
        -virtfs "local,path=$kdir/root,mount_tag=kernel,security_model=passthrough,readonly=on,multidevs=remap" \
        > "$run/qemu.log" 2>&1 &
    qpid=$!
    tail -n +1 -f --pid="$qpid" "$run/stdout" &
    tpid=$!
    tail -n +1 -f --pid="$qpid" "$run/stderr" >&2 &
    epid=$!
    rc=0
    wait "$qpid" || rc=$?
    qpid=""
    wait "$tpid" "$epid" 2> /dev/null || true
    tpid=""
    epid=""
}

boot
# A kernel that stops before the command starts (under emulation on a busy
# machine, e.g. "IO-APIC + timer doesn't work") gets one more boot; a
# failed step of init.sh or a failing command does not.
if [ "$rc" != 124 ] && [ ! -s "$run/status" ] && ! grep -q '^ksym-guest: ' "$run/console.log"; then
    echo "guest: the kernel stopped before init ran ($(grep -m1 -E 'panic|BUG|Oops' "$run/console.log" || echo 'no message')); booting once more" >&2
    cp "$run/console.log" "$run/console.first.log"
    boot
fi

keep_console() {
    cp "$run/console.log" "$project/build/guest/console-$kernel.log" 2> /dev/null || true
    echo "guest: console log: $project/build/guest/console-$kernel.log" >&2
}
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "guest: timed out after $timeout_s s ($(sed -n 's/^ksym-guest: //p' "$run/console.log" | tail -n 1))" >&2
    keep_console
    exit 124
fi
if [ ! -s "$run/status" ]; then
    failed=$(sed -n 's/^ksym-guest: FAILED: //p' "$run/console.log" | tail -n 1)
    if [ -n "$failed" ]; then
        echo "guest: boot failed at step: $failed" >&2
    else
        echo "guest: the guest stopped before the command ended (qemu exit $rc); last console lines:" >&2
        tail -n 20 "$run/console.log" >&2 || true
        cat "$run/qemu.log" >&2 || true
    fi
    keep_console
    exit 125
fi
status=$(cat "$run/status")
rm -rf "$run"
exit "$status"
