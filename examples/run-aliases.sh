#!/bin/sh
# Runs examples/aliases.c (built) on the running kernel and checks what it
# read against the events it drove: exit 0 when right, 1 otherwise.
#
#   sh examples/run-aliases.sh [ALIASES [NEED]]
#
# ALIASES: the built example (default build/example-aliases, which
# `make build/example-aliases` builds). Its object is c-tests/bpf/task_events.bpf.o:
# `count` and two aliases of it, each attached to its own tracepoint
# (sched_process_fork, task_newtask, task_rename), all loaded from one
# copy of the instructions. With 3 forks and 5 renames of the example's
# own process, the map must count 3 * 2 + 5 = 11 (a fork runs the fork
# and newtask programs), no more (other processes are filtered out by
# the .rodata option) and no less.
# Needs root and kernel BTF; where the machine has neither, NEED (tests/
# cli/need.c built: a SKIP line, a failure under KSYM_REQUIRE) says so,
# and without NEED that is a failure. Run from the project's directory.
set -u
example=${1:-build/example-aliases}
need=${2:-}
obj=c-tests/bpf/task_events.bpf.o
forks=3
renames=5
want=$((forks * 2 + renames))

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
    why="examples/aliases.c loads BPF programs: needs root and /sys/kernel/btf/vmlinux"
    [ -n "$need" ] && exec "$need" kernel "$why"
    echo "FAIL $why"
    exit 1
fi
out=$("$example" "$obj" "$forks" "$renames" 2>&1)
rc=$?
fail() {
    echo "FAIL examples/aliases.c: $1"
    echo "$out" | sed 's/^/  /'
    exit 1
}
[ "$rc" = 0 ] || fail "exit status $rc"
# One line per program: `program NAME: MODULE`TARGET, N instructions at ADDRESS`.
progs=$(echo "$out" | grep -c '^program ')
copies=$(echo "$out" | sed -n 's/^program .* at \(0x[0-9a-f]*\)$/\1/p' | sort -u | wc -l)
targets=$(echo "$out" | sed -n 's/^program \([a-z_]*\): vmlinux`\([a-z_]*\),.*/\1=\2/p' | sort | tr '\n' ' ')
count=$(echo "$out" | sed -n 's/^count \([0-9]*\)$/\1/p')
[ "$progs" = 3 ] || fail "$progs programs loaded and attached, not 3"
[ "$copies" = 1 ] || fail "the programs have $copies copies of the instructions, not one"
[ "$targets" = "count=sched_process_fork count_newtask=task_newtask count_rename=task_rename " ] ||
    fail "attach targets: $targets"
[ "$count" = "$want" ] || fail "the map counted ${count:-nothing}; $forks forks and $renames renames make $want"
echo "ok   examples/aliases.c: 3 programs from one copy, each on its own tracepoint; $count events counted, as driven"
