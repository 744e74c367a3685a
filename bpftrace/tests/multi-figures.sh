#!/bin/sh
# The bpftrace fork's figures for one fentry wildcard, in a guest whose
# root is the Debian 13 root (run from the project directory):
#
#   make guest-shell K=7.3 CMD='sh bpftrace/tests/multi-figures.sh [GLOB]'
#
# For the fork (tracing_multi links where the kernel has them), the fork
# with BPFTRACE_KSYM_NO_MULTI=1 (one program per function) and Debian 13's
# bpftrace 0.23.2: "Attaching N", the BPF programs of type tracing loaded
# while it runs (bpftool), its links by type (/proc/PID/fdinfo: the
# tracing_multi links and their functions, the one-function tracing
# links), and the seconds from start to exit with the workload (one run
# each: under TCG, compare within a run). GLOB defaults to vfs_*.
set -u
glob=${1:-vfs_*}
fork=${BPFTRACE_FORK:-build/bpftrace-fork/bpftrace}
deb=${BPFTRACE_DEB:-/usr/bin/bpftrace}
tmp=$(mktemp -d)
# The workload: what bpftrace (its parent) holds while it runs.
{
    echo "bpftool prog list 2> /dev/null | grep -c ': tracing ' > $tmp/progs"
    echo "for f in /proc/\$PPID/fdinfo/*; do"
    echo "    awk '/^link_type:/ { t = \$2 } /^cnt:/ { c = \$2 } END { if (t != \"\") print t, (c == \"\" ? 1 : c) }' \"\$f\""
    echo "done > $tmp/links"
} > "$tmp/seen.sh"
prog="fentry:vmlinux:$glob { @[probe] = count(); }"
echo "fentry:vmlinux:$glob on $(uname -r)"
printf '%-9s %6s %9s %9s %14s %8s %8s\n' tool exit attaching programs multi/fns tracing seconds
for tool in fork aliases deb; do
    case $tool in
        fork) set -- "$fork" ;;
        aliases) set -- env BPFTRACE_KSYM_NO_MULTI=1 "$fork" ;;
        deb) set -- "$deb" ;;
    esac
    : > "$tmp/progs"
    : > "$tmp/links"
    t0=$(date +%s%N)
    "$@" -c "/bin/sh $tmp/seen.sh" -e "$prog" > "$tmp/out" 2>&1
    rc=$?
    t1=$(date +%s%N)
    n=$(sed -n 's/^Attaching \([0-9]*\) probes*\.\.\.$/\1/p' "$tmp/out")
    m=$(awk '$1 == "tracing_multi" { n++; c += $2 } END { print n + 0 "/" c + 0 }' "$tmp/links")
    o=$(awk '$1 == "tracing" { n++ } END { print n + 0 }' "$tmp/links")
    printf '%-9s %6s %9s %9s %14s %8s %8s\n' "$tool" "$rc" "${n:--}" "$(cat "$tmp/progs")" "$m" "$o" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
    [ "$rc" = 0 ] || grep -m 3 -e ERROR -e WARNING "$tmp/out" | sed 's/^/    /'
done
rm -rf "$tmp"
