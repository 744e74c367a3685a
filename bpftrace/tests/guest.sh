#!/bin/sh
# The bpftrace fork against Debian 13's unmodified bpftrace 0.23.2
# (/usr/bin/bpftrace, the oracle), in a qemu guest whose root is the
# Debian 13 root (6.12: fentry, cookies, func_ip, module BTF, tracefs).
# Run from the project directory:
#
#   make test-bpftrace-fork    (or: make guest-shell K=6.12 CMD='sh bpftrace/tests/guest.sh')
#
# Both binaries run the same scripts with the same workload; outputs are
# compared after dropping only the "Attaching N probes..." line (compared
# on its own) and, in kstack, the frames in BPF code (the program and its
# trampoline, whose addresses differ by construction). The workload (dd and readlink, filtered by comm) makes the
# same system calls in every run, so counts are compared too. Checks:
# - "Attaching N": the same N (the fork: libksym's expansion intersected
#   with bpftrace's matcher; 0.23.2: one program per match);
# - the kernel's list of functions with a trampoline attached
#   (tracefs' enabled_functions, read by the workload while both run) is
#   the same set;
# - one script with several probes: `probe` and `func` (fentry, and
#   kretfunc: `func` prints through bpftrace's kernel symbolizer, as
#   ksym() does), `args.regs->dx` and `retval` (fexit), `args->regs->dx`
#   (kfunc), `kstack` (fentry): identical map output;
# - the fork only, against the kernel: every (probe, func) pair names one
#   function (`probe` comes from the alias's own index, `func` from
#   bpf_get_func_ip);
# - a module's functions (dummy, driven by `ip link`): the same keys;
# - a wildcard matching nothing: the same message and exit status.
# Exit 0 when every check passed.
set -u

fork=${BPFTRACE_FORK:-build/bpftrace-fork/bpftrace}
deb=${BPFTRACE_DEB:-/usr/bin/bpftrace}
count=200
tmp=$(mktemp -d)
fail=0
checks=0

ok() { echo "ok   $*"; checks=$((checks + 1)); }
bad() { echo "FAIL $*"; fail=1; checks=$((checks + 1)); }

for t in "$fork" "$deb"; do
    [ -x "$t" ] || { echo "FAIL no $t (make bpftrace-fork)"; exit 1; }
done
v=$("$deb" --version 2>&1)
case $v in *v0.23.2*) ;; *) echo "FAIL $deb is '$v', not bpftrace 0.23.2 (the Debian 13 root)"; exit 1 ;; esac
modprobe dummy 2> /dev/null || true
tracing=/sys/kernel/tracing
[ -r $tracing/enabled_functions ] || tracing=/sys/kernel/debug/tracing

# bpftrace -c splits its command on spaces: the workloads are files.
cat > "$tmp/work.sh" << EOF
/usr/bin/dd if=/dev/zero of=/dev/null bs=1 count=$count status=none
/usr/bin/readlink /proc/self/exe > /dev/null
cat $tracing/enabled_functions > "\$1"
EOF
echo 'ip link add ksymbt0 type dummy && ip link set ksymbt0 up && ip link del ksymbt0' > "$tmp/iplink.sh"

# run NAME TOOL PROG [CMD]: NAME.TOOL.out (stdout and stderr), NAME.TOOL.rc
run() {
    name=$1 tool=$2 prog=$3 cmd=${4:-}
    bin=$fork
    [ "$tool" = deb ] && bin=$deb
    t0=$(date +%s)
    if [ -n "$cmd" ]; then
        "$bin" -c "$cmd" -e "$prog" > "$tmp/$name.$tool.out" 2>&1
    else
        "$bin" -e "$prog" > "$tmp/$name.$tool.out" 2>&1
    fi
    echo $? > "$tmp/$name.$tool.rc"
    echo "     ($name: $tool ran $(($(date +%s) - t0)) s)"
}
attached() { sed -n 's/^Attaching \([0-9]*\) probes*\.\.\.$/\1/p' "$tmp/$1.$2.out"; }
rc() { cat "$tmp/$1.$2.rc"; }
# The output without "Attaching N" and kstack's frames in BPF code (the
# program and its trampoline: 0.23.2 prints them as bpf_trampoline_ID or
# as the last kallsyms symbol before them, plus an offset of millions).
# Map entries with equal values print in hash order: each entry is joined
# into one line (kstack keys span several) and the entries sorted.
body() {
    grep -v -e '^Attaching [0-9]* probes*\.\.\.$' -e '^ *bpf_prog_[0-9a-f]*_' -e '^ *bpf_trampoline_[0-9]*+' \
        -e '^ *[A-Za-z0-9_.]*+[0-9]\{7,\}$' "$tmp/$1.$2.out" |
        awk '/^@/ { if (e != "") print e; e = $0; next } e != "" { e = e " | " $0; next } { print }
            END { if (e != "") print e }' | sort
}
show() {
    for tool in fork deb; do
        echo "  --- $tool (exit $(rc "$1" $tool))"
        head -n 40 "$tmp/$1.$tool.out" | sed 's/^/  /'
    done
}
# Functions with a trampoline (direct call) attached, from the kernel.
tramps() { awk '/direct|tramp/ { print $1 }' "$1" | sort -u; }

# pair_check NAME PREFIX MIN: in the fork's output, every PREFIXfn, func]
# entry has fn = func: `probe` (the alias's own index) names the function
# the kernel says fired (bpf_get_func_ip); at least MIN such entries.
pair_check() {
    pairs=$(sed -n "s/^$2\([^,]*\), \([^]]*\)\]: [0-9]*\$/\1 \2/p" "$tmp/$1.fork.out")
    n=$(echo "$pairs" | grep -c .)
    mism=$(echo "$pairs" | awk '$1 != $2' | head -n 5)
    if [ "$n" -ge "$3" ] && [ -z "$mism" ]; then
        ok "$1: $n (probe, func) pairs of $2, each probe named by the function the kernel says fired"
    else
        bad "$1: $n (probe, func) pairs of $2 (want >= $3); mismatched: $mism"
    fi
}

# 1. Several probes in one script, both spellings, wildcards only.
p='fentry:vmlinux:vfs_read* /comm == "dd" || comm == "readlink"/ { @r[probe, func] = count(); }
kretfunc:vmlinux:vfs_write* /comm == "dd"/ { @w[probe, func] = count(); }
fexit:vmlinux:__x64_sys_read* /comm == "dd" || comm == "readlink"/ { @a[probe, args.regs->dx, retval] = count(); }
kfunc:vmlinux:__x64_sys_write* /comm == "dd"/ { @b[probe, args->regs->dx] = count(); }
fentry:vmlinux:ksys_write* /comm == "dd"/ { @k[probe, kstack(4)] = count(); }'
run main fork "$p" "/bin/sh $tmp/work.sh $tmp/main.fork.enabled"
run main deb "$p" "/bin/sh $tmp/work.sh $tmp/main.deb.enabled"
nf=$(attached main fork)
nd=$(attached main deb)
if [ "$(rc main fork)" != 0 ] || [ "$(rc main deb)" != 0 ] || [ -z "$nf" ]; then
    bad "main: a run failed"
    show main
else
    if [ "$nf" = "$nd" ]; then ok "main: both attach $nf probes"; else bad "main: the fork attaches $nf, 0.23.2 $nd"; fi
    tramps "$tmp/main.fork.enabled" > "$tmp/main.fork.tramps"
    tramps "$tmp/main.deb.enabled" > "$tmp/main.deb.tramps"
    if [ -s "$tmp/main.fork.tramps" ] && cmp -s "$tmp/main.fork.tramps" "$tmp/main.deb.tramps"; then
        ok "main: the kernel lists the same $(wc -l < "$tmp/main.fork.tramps") functions with a trampoline"
    else
        bad "main: functions with a trampoline differ (or none): < fork, > 0.23.2"
        diff "$tmp/main.fork.tramps" "$tmp/main.deb.tramps" | head -n 20 | sed 's/^/  /'
    fi
    body main fork > "$tmp/main.fork.body"
    body main deb > "$tmp/main.deb.body"
    for m in r w a b k; do
        grep -q "^@$m\[" "$tmp/main.deb.body" || bad "main: 0.23.2 printed no @$m (the workload did not fire it)"
    done
    if cmp -s "$tmp/main.fork.body" "$tmp/main.deb.body"; then
        ok "main: identical output, $(grep -c '^@' "$tmp/main.deb.body") map entries (probe, func, args, retval, kstack)"
    else
        bad "main: outputs differ: < fork, > 0.23.2"
        diff "$tmp/main.fork.body" "$tmp/main.deb.body" | head -n 40 | sed 's/^/  /'
    fi
    pair_check main '@r\[fentry:vmlinux:' 1
    pair_check main '@w\[fexit:vmlinux:' 1
fi

# 2. A module's functions, through its BTF object.
if [ -d /sys/module/dummy ]; then
    p='fentry:dummy:* { @[probe] = count(); } kretfunc:dummy:* { @x[probe, func] = count(); }'
    run dummy fork "$p" "/bin/sh $tmp/iplink.sh"
    run dummy deb "$p" "/bin/sh $tmp/iplink.sh"
    nf=$(attached dummy fork)
    nd=$(attached dummy deb)
    body dummy fork | sed 's/: [0-9]*$//' | sort > "$tmp/dummy.fork.keys"
    body dummy deb | sed 's/: [0-9]*$//' | sort > "$tmp/dummy.deb.keys"
    if [ "$(rc dummy fork)" = 0 ] && [ "$(rc dummy deb)" = 0 ] && [ -n "$nf" ] && [ "$nf" = "$nd" ] &&
        grep -q '^@\[fentry:dummy:' "$tmp/dummy.deb.keys" && cmp -s "$tmp/dummy.fork.keys" "$tmp/dummy.deb.keys"; then
        ok "dummy: both attach $nf probes, the same $(grep -c '^@' "$tmp/dummy.deb.keys") keys"
        pair_check dummy '@x\[fexit:dummy:' 3
    else
        bad "dummy: attach $nf against $nd, or keys differ: < fork, > 0.23.2"
        diff "$tmp/dummy.fork.keys" "$tmp/dummy.deb.keys" | head -n 20 | sed 's/^/  /'
        show dummy
    fi
else
    bad "dummy: the module is not loaded (modprobe dummy)"
fi

# 3. A wildcard matching nothing: 0.23.2's own message and status.
p='fentry:vmlinux:ksym_no_such_function_* { @ = count(); }'
run nothing fork "$p"
run nothing deb "$p"
if cmp -s "$tmp/nothing.fork.out" "$tmp/nothing.deb.out" && [ "$(rc nothing fork)" = "$(rc nothing deb)" ]; then
    ok "no match: the same message ($(head -n 1 "$tmp/nothing.deb.out")), exit $(rc nothing deb)"
else
    bad "no match: outputs differ"
    show nothing
fi

rm -rf "$tmp"
if [ "$fail" = 0 ]; then
    echo "bpftrace fork: all $checks checks passed"
fi
exit $fail
