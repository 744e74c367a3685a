#!/bin/sh
# make bench-bcc: bench.sh BUILD/libksym-bcc.so.0 [RUNS]
set -eu
OUT=${OUT:-build/bcc}
CC=${CC:-cc}
mkdir -p "$OUT"
$CC -std=gnu11 -Wall -Wextra -Werror -O2 -o "$OUT/bench" bcc/bench/bench.c -ldl
"$OUT/bench" "$1" "${2:-${BENCH_RUNS:-11}}"
