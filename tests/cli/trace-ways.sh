#!/bin/sh
# `ksym trace`'s two ways on one kernel, side by side (a guest script:
# GUEST_SCRIPTS_7.3 in mk/cli.mk): --way multi (one program, tracing_multi
# links) and --way aliases (one alias and link per function) attached at
# the same time to the same functions, then driven: getppid() called 23
# times by one process, and a dummy device made, brought up and removed
# 3 times (the dummy module's functions, reached through its own BTF
# object), then each trace is stopped with SIGINT, which prints its report.
# Both reports must list the same counts for every function,
# and getppid's must be at least 23 (another process may call it too).
# On a kernel without multi links, --way multi must fail with the
# documented message, and the default way must be aliases.
#
#   sh tests/cli/trace-ways.sh [build/ksym]
set -eu
ksym=${1:-build/ksym}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksym-ways.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "trace-ways: $*" >&2; exit 1; }

row=$(sh tools/guest/kernels.sh current 2> /dev/null) || row=none
if [ "$(sh tools/guest/kernels.sh get "$row" tracing_multi 2> /dev/null || echo unknown)" != yes ]; then
    if "$ksym" trace '__do_sys_getppid' --way multi --duration 1 > "$tmp/out" 2>&1; then
        fail "--way multi succeeded on a kernel without multi links: $(cat "$tmp/out")"
    fi
    grep -q "this kernel has no tracing_multi link\|loads neither a multi program" "$tmp/out" \
        || fail "--way multi: not the documented message: $(cat "$tmp/out")"
    echo "trace-ways: no multi links here: --way multi refused as documented"
    exit 0
fi

[ -d /sys/module/dummy ] || modprobe dummy || fail "the dummy module cannot be loaded"
# One report each, when the driving is over: each trace runs until it is
# sent SIGINT (its report at exit), not for a fixed time, which a busy
# machine can use up before the driving starts (it did: 0 hits). The
# 300 s duration only bounds a trace the script never reached.
pids=""
start() { # pattern way
    "$ksym" trace "$1" --way "$2" --duration 300 --interval 300 --top 1000 > "$tmp/$3.out" 2> "$tmp/$3.err" &
    pids="$pids $!"
}
start '__do_sys_getp*' multi getp-multi
start '__do_sys_getp*' aliases getp-aliases
start 'dummy`*' multi dummy-multi
start 'dummy`*' aliases dummy-aliases
# Until all four have attached (their first line, printed once SIGINT
# would give the report).
n=0
while [ "$(grep -l 'attached for' "$tmp"/*.out 2> /dev/null | wc -l)" -lt 4 ]; do
    n=$((n + 1))
    [ $n -lt 1200 ] || fail "not all attached after 120 s: $(cat "$tmp"/*.out "$tmp"/*.err)"
    sleep 0.1
done
grep -q 'tracing_multi link' "$tmp/getp-multi.out" || fail "multi: $(cat "$tmp/getp-multi.out")"
grep -q 'fentry programs attached' "$tmp/getp-aliases.out" || fail "aliases: $(cat "$tmp/getp-aliases.out")"
python3 -c 'import os
for _ in range(23): os.getppid()'
for k in 1 2 3; do
    ip link add ksymways0 type dummy && ip link set ksymways0 up && ip link del ksymways0
done
# shellcheck disable=SC2086 # the pids, one word each
kill -INT $pids 2> /dev/null || true # a trace that already failed: the checks below say how
wait
# The report's lines: "<count>  <function>".
for p in getp dummy; do
    for w in multi aliases; do
        sed -n '/^---/,$p' "$tmp/$p-$w.out" | grep -v '^---' | awk '{print $2, $1}' | sort > "$tmp/$p-$w.counts"
    done
    [ -s "$tmp/$p-multi.counts" ] || fail "$p: the multi report counts nothing: $(cat "$tmp/$p-multi.out")"
    if ! cmp -s "$tmp/$p-multi.counts" "$tmp/$p-aliases.counts"; then
        echo "trace-ways: $p: the two ways count differently (multi, then aliases):" >&2
        diff "$tmp/$p-multi.counts" "$tmp/$p-aliases.counts" >&2 || true
        exit 1
    fi
done
got=$(awk '$1 == "__do_sys_getppid" {print $2}' "$tmp/getp-multi.counts")
[ "${got:-0}" -ge 23 ] || fail "getppid counted ${got:-0} times, called 23"
grep -q '^dummy`dummy_setup ' "$tmp/dummy-multi.counts" || fail "dummy_setup did not fire: $(cat "$tmp/dummy-multi.counts")"
echo "trace-ways: multi and aliases count alike: $(wc -l < "$tmp/getp-multi.counts") getp functions (getppid $got)," \
    "$(wc -l < "$tmp/dummy-multi.counts") dummy functions"
