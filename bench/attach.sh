#!/bin/sh
# make bench-attach, in the 7.3 guest: bench/attach.c's four contenders on
# vfs_*, tcp_* and x* (libksym's list of each, handed to every one), then
# stock bpftrace 0.23.2 and the fork (bench/attach_bpftrace.py).
#
#   sh bench/attach.sh BENCH_ATTACH ROUNDS [FORK]
set -eu
bin=$1
rounds=$2
fork=${3:-}
echo "kernel $(uname -r), $(nproc) CPUs (TCG), $rounds rounds, medians; ulimit -n $(ulimit -n) (raised to $(ulimit -Hn) for (b) and (d))"
echo
echo "| glob | functions | contender | time to attached | teardown | peak RSS | attached |"
echo "|---|---|---|---|---|---|---|"
targets=$(mktemp)
for p in 'vfs_*' 'tcp_*' 'x*'; do
    "$bin" "$p" "$rounds" > "$targets.out"
    grep '^|' "$targets.out"
    grep -v '^|' "$targets.out" >> "$targets" || true
done
for p in 'vfs_*' 'x*'; do
    python3 bench/attach_bpftrace.py /usr/bin/bpftrace "$p" "$rounds"
    [ -z "$fork" ] || [ ! -x "$fork" ] || python3 bench/attach_bpftrace.py "$fork" "$p" "$rounds"
done
echo
cat "$targets"
rm -f "$targets" "$targets.out"
