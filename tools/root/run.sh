#!/bin/sh
# Runs a command in the Debian 13 root (tools/root/build.sh) on this
# machine's kernel: a chroot inside a mount namespace, with proc, sys
# (bpffs, tracefs, debugfs where the host has them), dev, a private /tmp
# and the project directory at its own path. Every mount vanishes with the
# namespace, so the root can be removed at any time.
#
#   sh tools/root/run.sh [--root DIR] [--env NAME=VALUE]... -- COMMAND [ARGS...]
#
# The command runs as root from the current directory (which must be inside
# the project), with PATH, HOME and LANG of the root, the caller's KSYM_*
# and RUST_BACKTRACE variables, and KSYM_ROOT=debian13. Exit status: the
# command's; 125 when the root cannot be entered.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=""
envs=""
while [ $# -gt 0 ]; do
    case $1 in
        --root) root=$2; shift 2 ;;
        --env)
            case $2 in *=*) ;; *) echo "root/run.sh: --env wants NAME=VALUE" >&2; exit 2 ;; esac
            envs="$envs
$2"
            shift 2
            ;;
        --) shift; break ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { sed -n '8p' "$0" | sed 's/^# //' >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "root/run.sh: needs root (chroot, mount namespace)" >&2; exit 125; }

cwd=$(pwd -P)
project=$(git -C "$here" rev-parse --show-toplevel 2> /dev/null || (cd "$here/../.." && pwd -P))
project=$(cd "$project" && pwd -P)
case $cwd in "$project" | "$project"/*) ;; *)
    echo "root/run.sh: run it from inside the project ($project)" >&2
    exit 2
    ;;
esac
[ -n "$root" ] || root=$(sh "$here/build.sh") || exit 125
root=$(cd "$root" && pwd -P)

# The caller's KSYM_* and RUST_BACKTRACE, then --env, then the root's own.
keep=$(env | grep -E '^(KSYM_[A-Za-z0-9_]*|RUST_BACKTRACE)=' | grep -v '^KSYM_ROOT=' || true)

exec unshare -m --propagation private sh -eu -c '
    r=$1; project=$2; cwd=$3; keep=$4; envs=$5; shift 5
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
    mount -t tmpfs -o mode=0755 tmpfs "$r/run"
    mkdir -p "$r$project"
    mount --rbind "$project" "$r$project"
    # A worktree or symlinked build/ may reach outside the project: what the
    # project links to under /work is visible at its own path too.
    for d in $(find "$project/build" -maxdepth 1 -type l 2> /dev/null); do
        t=$(readlink -f "$d")
        case $t in "$project"/*) ;; *)
            [ -d "$t" ] && [ ! -d "$r$t/." ] && mkdir -p "$r$t" && mount --rbind "$t" "$r$t" ;;
        esac
    done
    cp /etc/resolv.conf "$r/etc/resolv.conf" 2> /dev/null || true
    old_ifs=$IFS
    IFS="
"
    set -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 KSYM_ROOT=debian13 $keep $envs sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
    IFS=$old_ifs
    exec chroot "$r" "$@"
' sh "$root" "$project" "$cwd" "$keep" "$envs" "$@"
