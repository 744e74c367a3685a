#!/bin/sh
# Runs examples/multi.c (built) on the running kernel and checks it
# against what its row of the kernel table (tests/kernels.txt,
# tracing_multi) says the kernel has: exit 0 when right, 1 otherwise.
#
#   sh examples/run-multi.sh [MULTI]
#
# MULTI: the built example (default build/example-multi). With multi
# links, `plain` of c-tests/bpf/multi.bpf.o listed over `__do_sys_getp*`
# must count getppid() exactly as often as the example called it (17), in
# its process only. Without them, the example must say so and exit 3 (the
# body is then loaded as aliases: examples/aliases.c). A kernel with no
# row fails unless it is one of the two. Needs root; run from the
# project's directory.
set -u
example=${1:-build/example-multi}
calls=17
row=$(sh tools/guest/kernels.sh current 2> /dev/null) || row=
has=unknown
[ -z "$row" ] || has=$(sh tools/guest/kernels.sh get "$row" tracing_multi)
out=$("$example" c-tests/bpf/multi.bpf.o '__do_sys_getp*' $calls 2>&1)
rc=$?
counted=$(printf '%s\n' "$out" | awk '$1 == "vmlinux`__do_sys_getppid" { print $2 }')
if [ $rc = 0 ] && [ "$has" != no ] && [ "$counted" = $calls ]; then
    echo "ok   examples/multi.c: one multi link, getppid counted $counted times by cookie, as called (${row:-no row})"
elif [ $rc = 3 ] && [ "$has" != yes ] && printf '%s' "$out" | grep -q 'no multi links on this kernel'; then
    echo "ok   examples/multi.c: no multi links on ${row:-this kernel}: said so, as documented"
else
    echo "FAIL examples/multi.c on ${row:-a kernel without a row} (tracing_multi: $has), exit $rc:" >&2
    printf '%s\n' "$out" >&2
    exit 1
fi
