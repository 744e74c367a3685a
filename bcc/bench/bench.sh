#!/bin/sh
# make bench-bcc: bench.sh BUILD/libksym-bcc.so.0 [RUNS]
# - bench.c: bcc_symcache_new(-1) and the first 1,000 resolves from C,
#   against this machine's libbcc (0.26);
# - first.py: the first BPF.ksym from Python and bpftrace's first ksym(),
#   with and without libksym-bcc: this machine's bcc 0.26 and bpftrace
#   0.17, then the Debian 13 root's bcc 0.31 and bpftrace 0.23.2
#   (tools/root/run.sh), when it is built.
set -eu
OUT=${OUT:-build/bcc}
CC=${CC:-cc}
runs=${2:-${BENCH_RUNS:-11}}
mkdir -p "$OUT"
$CC -std=gnu11 -Wall -Wextra -Werror -O2 -o "$OUT/bench" bcc/bench/bench.c -ldl
"$OUT/bench" "$1" "$runs"
echo
echo "The first kernel symbol from Python and bpftrace, new process each, median of $runs (\`make bench-bcc\`):"
echo
/usr/bin/python3 bcc/bench/first.py "$1" "$runs"
if [ -d build/root/debian13/usr ]; then
    sh tools/root/run.sh -- /usr/bin/python3 bcc/bench/first.py "$1" "$runs" | sed 2d
else
    echo "(the Debian 13 root is not built: bcc 0.31 and bpftrace 0.23.2 are not measured)"
fi
