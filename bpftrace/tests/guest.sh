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
# - kaddr()/ksym() print the same (the fork through libksym's table), and
#   kaddr is /proc/kallsyms' address; the fork's kaddr("module`name");
# - a wildcard matching nothing: the same message and exit status;
# - fork only: a module unloaded between expansion and attach gives one
#   warning per function of it, and the other probes attach.
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

# 6. kaddr and ksym (the fork: libksym's table; 0.17: /proc/kallsyms and
# bcc's symbol cache): the same output for a vmlinux function, a module's
# function's address, an address inside a function and one in no symbol;
# kaddr equal to /proc/kallsyms' address (read here with awk); a module's
# function by name, `name` and `module`name` (the fork only: 0.17 resolves
# no module symbol by name); an unknown name (the same error).
kallsyms_addr() { # NAME [MODULE]
    if [ -n "${2:-}" ]; then
        awk -v n="$1" -v m="[$2]" '$3 == n && $4 == m { print $1; exit }' /proc/kallsyms
    else
        awk -v n="$1" '$3 == n && NF == 3 { print $1; exit }' /proc/kallsyms
    fi | sed 's/^0*//'
}
vr=$(kallsyms_addr vfs_read)
ds=$(kallsyms_addr dummy_setup dummy)
p='BEGIN { printf("%lx %s\n", kaddr("vfs_read"), ksym(kaddr("vfs_read"))); printf("%s\n", ksym(0x'$ds')); printf("%s %s\n", ksym(kaddr("vfs_read") + 5), ksym(0)); exit(); }'
run kaddr fork "$p"
run kaddr deb "$p"
want="$vr vfs_read
dummy_setup
vfs_read 0"
lf=$(grep -v '^Attaching' "$tmp/kaddr.fork.out")
ld=$(grep -v '^Attaching' "$tmp/kaddr.deb.out")
if [ "$lf" = "$ld" ] && [ "$lf" = "$want" ] && [ -n "$vr" ] && [ -n "$ds" ]; then
    ok "kaddr/ksym: both print the same 3 lines, kallsyms' addresses ($vr, $ds)"
else
    bad "kaddr/ksym: fork '$lf', 0.17 '$ld', want '$want'"
fi
# A module's symbol by name: 0.17 cannot (its kallsyms reader splits on
# spaces, and a module's line ends in "\t[dummy]"); the fork takes both
# spellings.
p='BEGIN { printf("%lx %s\n", kaddr("dummy_setup"), ksym(kaddr("dummy_setup"))); printf("%lx %s\n", kaddr("dummy`dummy_setup"), ksym(kaddr("dummy`dummy_setup"))); exit(); }'
run kaddr_mod fork "$p"
lf=$(grep -v '^Attaching' "$tmp/kaddr_mod.fork.out")
if [ "$lf" = "$ds dummy_setup
$ds dummy_setup" ]; then
    ok "kaddr(\"dummy_setup\"), kaddr(\"dummy\`dummy_setup\"): $ds dummy_setup (kallsyms: $ds)"
else
    bad "kaddr of a module's function: fork '$lf', kallsyms $ds"
fi
p='BEGIN { printf("%lx\n", kaddr("ksym_no_such_symbol")); exit(); }'
run kaddr_none fork "$p"
run kaddr_none deb "$p"
if cmp -s "$tmp/kaddr_none.fork.out" "$tmp/kaddr_none.deb.out" &&
    cmp -s "$tmp/kaddr_none.fork.rc" "$tmp/kaddr_none.deb.rc" && [ "$(cat "$tmp/kaddr_none.deb.rc")" != 0 ]; then
    ok "kaddr of an unknown name: the same error ($(head -n 1 "$tmp/kaddr_none.deb.out")), exit $(cat "$tmp/kaddr_none.deb.rc")"
else
    bad "kaddr of an unknown name: outputs differ"
    show kaddr_none
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

# 8. A module unloaded between the expansion and the attach: the fork
# expands dummy's functions and vfs_*, then stops itself
# (BPFTRACE_KSYM_STOP_BEFORE_ATTACH: attaching 80 functions takes less than
# a second here, too short a window to hit from outside); dummy is unloaded
# and the fork continued. Each of dummy's functions gets its own warning,
# the vfs_ probes attach and count dd's reads, and the run exits 0.
if [ -d /sys/module/dummy ]; then
    nd=$(attached dummy fork)
    p='kfunc:dummy:* { @d[probe] = count(); } kfunc:vmlinux:vfs_* /pid == cpid/ { @[probe] = count(); }'
    out=$tmp/gone.fork.out
    BPFTRACE_KSYM_STOP_BEFORE_ATTACH=1 "$fork" -c "$dd" -e "$p" > "$out" 2>&1 &
    bpid=$!
    state=
    i=0
    while [ "$state" != T ] && [ $i -lt 600 ] && kill -0 $bpid 2> /dev/null; do
        state=$(sed 's/^.*) \(.\).*$/\1/' /proc/$bpid/stat 2> /dev/null)
        i=$((i + 1))
        sleep 0.1
    done
    links=$(ls -l /proc/$bpid/fd 2> /dev/null | grep -c 'bpf_link')
    rmmod dummy 2> "$tmp/rmmod.err"
    rmmod_rc=$?
    kill -CONT $bpid
    wait $bpid
    rc=$?
    modprobe dummy 2> /dev/null || true
    warned=$(grep -c '^WARNING: kfunc:dummy:.*skipping\.$' "$out")
    fired=$(sed -n 's/^@\[kfunc:vmlinux:vfs_read\]: \([0-9]*\)$/\1/p' "$out")
    dfired=$(grep -c '^@d\[' "$out")
    if [ "$state" = T ] && [ "$links" = 0 ] && [ "$rmmod_rc" = 0 ] && [ "$rc" = 0 ] && [ -n "$nd" ] &&
        [ "$warned" = "$nd" ] && [ "${fired:-0}" -ge $count ] && [ "$dfired" = 0 ]; then
        ok "module gone before attach: $warned warnings, one per dummy function ($(grep -m1 '^WARNING: kfunc:dummy:' "$out")); vfs_read counted $fired"
    else
        bad "module gone before attach: state '$state', $links links when stopped, rmmod $rmmod_rc ($(cat "$tmp/rmmod.err")), exit $rc, $warned warnings for $nd functions, vfs_read '$fired', $dfired dummy keys"
        head -n 30 "$out" | sed 's/^/  /'
    fi
else
    bad "module gone: dummy is not loaded"
fi

rm -rf "$tmp"
if [ "$fail" = 0 ]; then
    echo "bpftrace fork: all $checks checks passed"
fi
exit $fail
