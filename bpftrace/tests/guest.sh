#!/bin/sh
# The bpftrace fork against Debian's bpftrace 0.17, in the qemu guest (6.1:
# fentry, modules, tracefs). Run from the project directory:
#
#   make test-bpftrace-fork        (or: make guest-shell CMD='sh bpftrace/tests/guest.sh')
#
# Each case runs the same script through both (the fork's libksym path and
# 0.17's own), with `-c CMD` as the triggered workload, and checks:
# - "Attaching N probes": the same N (libksym's expansion against 0.17's
#   probe matcher, an independent implementation over the same BTF and
#   tracefs);
# - the same map keys (`@[probe]`: every function that fired, by name), and
#   counts the workload guarantees (dd's COUNT reads and writes of one
#   byte each are at least COUNT vfs_read/vfs_write calls);
# - fork only: `@[probe, func]`, where `probe` is the link's BPF cookie and
#   `func` the kernel's bpf_get_func_ip(): every pair must name the same
#   function, so each probe fires on its own function;
# - kaddr()/ksym() print the same, and kaddr is /proc/kallsyms' address;
# - a wildcard matching nothing: the same message and exit status.
# Exit 0 when every check passed.
set -u

fork=${BPFTRACE_FORK:-build/bpftrace-fork/bpftrace}
deb=${BPFTRACE_DEB:-/usr/bin/bpftrace}
count=200
dd="/usr/bin/dd if=/dev/zero of=/dev/null bs=1 count=$count status=none"
tmp=$(mktemp -d)
# bpftrace -c splits its command on spaces: the dummy device's script is a file.
echo 'ip link add ksymbt0 type dummy && ip link set ksymbt0 up && ip link del ksymbt0' > "$tmp/iplink.sh"
iplink="/bin/sh $tmp/iplink.sh"
fail=0
checks=0

for t in "$fork" "$deb"; do
    [ -x "$t" ] || { echo "FAIL no $t (make bpftrace-fork)"; exit 1; }
done
modprobe dummy 2> /dev/null || true

ok() { echo "ok   $*"; checks=$((checks + 1)); }
bad() { echo "FAIL $*"; fail=1; checks=$((checks + 1)); }

# run NAME TOOL PROG [CMD]: NAME.TOOL.out (stdout and stderr), NAME.TOOL.rc
run() {
    name=$1 tool=$2 prog=$3 cmd=${4:-}
    bin=$fork
    [ "$tool" = deb ] && bin=$deb
    if [ -n "$cmd" ]; then
        eval "\"\$bin\" -c \"$cmd\" -e \"\$prog\"" > "$tmp/$name.$tool.out" 2>&1
    else
        "$bin" -e "$prog" > "$tmp/$name.$tool.out" 2>&1
    fi
    echo $? > "$tmp/$name.$tool.rc"
}

attached() { sed -n 's/^Attaching \([0-9]*\) probes*\.\.\.$/\1/p' "$tmp/$1.$2.out"; }
keys() { sed -n 's/^@\[\(.*\)\]: [0-9]*$/\1/p' "$tmp/$1.$2.out" | sort; }
hits() { sed -n "s/^@\[$3\]: \([0-9]*\)$/\1/p" "$tmp/$1.$2.out"; }

show() {
    for tool in fork deb; do
        echo "  --- $tool (exit $(cat "$tmp/$1.$tool.rc"))"
        head -n 40 "$tmp/$1.$tool.out" | sed 's/^/  /'
    done
}

# compare NAME [KEY MIN]...: both ran, same N, same keys, KEY hit >= MIN in both.
compare() {
    name=$1
    shift
    nf=$(attached "$name" fork)
    nd=$(attached "$name" deb)
    if [ "$(cat "$tmp/$name.fork.rc")" != 0 ] || [ "$(cat "$tmp/$name.deb.rc")" != 0 ] || [ -z "$nf" ]; then
        bad "$name: a run failed"
        show "$name"
        return
    fi
    if [ "$nf" = "$nd" ]; then ok "$name: both attach $nf probes"; else bad "$name: fork attaches $nf, 0.17 $nd"; fi
    keys "$name" fork > "$tmp/$name.fork.keys"
    keys "$name" deb > "$tmp/$name.deb.keys"
    if cmp -s "$tmp/$name.fork.keys" "$tmp/$name.deb.keys" && [ -s "$tmp/$name.fork.keys" ]; then
        ok "$name: the same $(wc -l < "$tmp/$name.fork.keys") functions fired"
    else
        bad "$name: functions fired differ (or none)"
        diff "$tmp/$name.fork.keys" "$tmp/$name.deb.keys" | head -n 20 | sed 's/^/  /'
    fi
    while [ $# -ge 2 ]; do
        for tool in fork deb; do
            h=$(hits "$name" $tool "$1")
            if [ -n "$h" ] && [ "$h" -ge "$2" ]; then
                ok "$name: $tool: @[$1] = $h >= $2"
            else
                bad "$name: $tool: @[$1] = '${h}', want >= $2"
            fi
        done
        shift 2
    done
}

# 1. vmlinux wildcard, kfunc
p='kfunc:vmlinux:vfs_read* /pid == cpid/ { @[probe] = count(); }'
run vfs_read fork "$p" "$dd"
run vfs_read deb "$p" "$dd"
compare vfs_read kfunc:vmlinux:vfs_read $count

# 2. kretfunc
p='kretfunc:vmlinux:vfs_write* /pid == cpid/ { @[probe] = count(); }'
run vfs_write_ret fork "$p" "$dd"
run vfs_write_ret deb "$p" "$dd"
compare vfs_write_ret kretfunc:vmlinux:vfs_write $count

# 3. two attach points, one body
p='kfunc:vmlinux:vfs_read,kfunc:vmlinux:vfs_write /pid == cpid/ { @[probe] = count(); }'
run two fork "$p" "$dd"
run two deb "$p" "$dd"
compare two kfunc:vmlinux:vfs_read $count kfunc:vmlinux:vfs_write $count

# 4. a module's functions (through the module's BTF object)
if [ -d /sys/module/dummy ]; then
    p='kfunc:dummy:* { @[probe] = count(); }'
    run dummy fork "$p" "$iplink"
    run dummy deb "$p" "$iplink"
    compare dummy kfunc:dummy:dummy_setup 1
    tf=$(grep -c ' \[dummy\]$' /sys/kernel/tracing/available_filter_functions 2> /dev/null)
    echo "     (tracefs lists $tf functions of dummy)"
else
    bad "dummy: the module is not loaded (modprobe dummy)"
fi

# 5. each probe fires on its own function: probe (cookie) = func (func ip)
pair_check() { # NAME PROVIDER:MODULE
    out=$tmp/$1.fork.out
    n=$(grep -c '^@\[' "$out")
    mism=$(sed -n 's/^@\[\([^,]*\), \([^]]*\)\]: [0-9]*$/\1 \2/p' "$out" |
        awk -v pre="$2:" '$1 != pre $2' | head -n 5)
    if [ "$(cat "$tmp/$1.fork.rc")" = 0 ] && [ "$n" -ge "$3" ] && [ -z "$mism" ]; then
        ok "$1: $n (probe, func) pairs, each probe named by its own function"
    else
        bad "$1: $n pairs (want >= $3); mismatched: $mism"
        head -n 20 "$out" | sed 's/^/  /'
    fi
}
p='kfunc:vmlinux:vfs_* /pid == cpid/ { @[probe, func] = count(); }'
run pairs fork "$p" "$dd"
pair_check pairs kfunc:vmlinux 2
p='kretfunc:dummy:* { @[probe, func] = count(); }'
run pairs_dummy fork "$p" "$iplink"
pair_check pairs_dummy kretfunc:dummy 1

# 6. kaddr and ksym
p='BEGIN { printf("%lx %s\n", kaddr("vfs_read"), ksym(kaddr("vfs_read"))); exit(); }'
run kaddr fork "$p"
run kaddr deb "$p"
want=$(awk '$3 == "vfs_read" && NF == 3 { print $1; exit }' /proc/kallsyms | sed 's/^0*//')
lf=$(grep -v '^Attaching' "$tmp/kaddr.fork.out")
ld=$(grep -v '^Attaching' "$tmp/kaddr.deb.out")
if [ "$lf" = "$ld" ] && [ "$lf" = "$want vfs_read" ]; then
    ok "kaddr/ksym: both print '$lf' (kallsyms: $want)"
else
    bad "kaddr/ksym: fork '$lf', 0.17 '$ld', kallsyms $want"
fi

# 7. a wildcard matching nothing: 0.17's own message and status
p='kfunc:vmlinux:ksym_no_such_function_* { @ = count(); }'
run nothing fork "$p"
run nothing deb "$p"
if cmp -s "$tmp/nothing.fork.out" "$tmp/nothing.deb.out" &&
    cmp -s "$tmp/nothing.fork.rc" "$tmp/nothing.deb.rc"; then
    ok "no match: the same message ($(head -n 1 "$tmp/nothing.deb.out")), exit $(cat "$tmp/nothing.deb.rc")"
else
    bad "no match: outputs differ"
    show nothing
fi

rm -rf "$tmp"
if [ "$fail" = 0 ]; then
    echo "bpftrace fork: all $checks checks passed"
fi
exit $fail
