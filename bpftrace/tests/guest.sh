#!/bin/sh
# The bpftrace fork against Debian 13's unmodified bpftrace 0.23.2
# (/usr/bin/bpftrace, the oracle), in a qemu guest: 6.12, whose root is the
# Debian 13 root (fentry, cookies, func_ip, module BTF, tracefs), 7.3
# (the same root, and tracing_multi links: the fork loads one program per
# wildcard there), and 5.10 (no cookies, no func_ip, no module BTF), whose
# boot runs this machine's Debian 12: there the script runs in a chroot of
# the Debian 13 root. Run from the project directory:
#
#   make test-bpftrace-fork [BPFTRACE_FORK_K=7.3|5.10]
#   (or: make guest-shell K=6.12 CMD='sh bpftrace/tests/guest.sh', K=7.3, K=5.10)
#
# Both binaries run the same scripts with the same workload; outputs are
# compared after dropping only the "Attaching N probes..." line (compared
# on its own), the fork's line saying a body falls back from a multi
# program to one program per function (checked on its own), and, in
# kstack, the frames in BPF code (the program and its trampoline, whose
# addresses differ by construction). The workload (dd and readlink,
# filtered by comm) makes the same system calls in every run, so counts
# are compared too. Checks:
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
# - --emit-elf: one program per wildcard in the fork's object, one per
#   function in 0.23.2's;
# - a module's functions (dummy, driven by `ip link`): the same keys;
# - the links, as the kernel describes them (/proc/PID/fdinfo of
#   bpftrace's link fds, read by the workload): on a kernel with
#   tracing_multi links (7.3), the fork attaches each wildcard whose body
#   reads neither `args` nor `retval` with one tracing_multi link, and the
#   two that do (refused by the verifier as multi: no typed arguments)
#   with one link per function, each fallback said in one line; 0.23.2
#   one link per function; elsewhere, both one link per function;
# - a function the kernel refuses (`fentry:vmlinux:migrate_*`: migrate_disable
#   and migrate_enable are on its deny list): 0.23.2 fails the whole probe,
#   naming one; the fork warns once for each function 0.23.2 cannot load
#   alone, and the kernel lists every other function with a trampoline;
# - a wildcard matching nothing: the same message and exit status;
# - 5.10: `probe` without cookies or func_ip (the per-alias index), and
#   `func` refused by both with the same error.
# 7.3 runs the cases whose code differs there (main, links, dummy,
# refused); --emit-elf and the empty wildcard are 6.12's.
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

modprobe dummy 2> /dev/null || true
# A guest whose root is not the Debian 13 root (5.10 boots this machine's
# Debian 12): the fork and its oracle need Debian 13's userland, so the
# script runs again in a chroot of the project's Debian 13 root.
v=$("$deb" --version 2>&1)
case $v in *v0.23.2*) ;; *)
    project=$(pwd -P)
    r=$project/build/root/debian13
    if [ -n "${KSYM_BPFTRACE_CHROOT:-}" ] || [ ! -x "$r/usr/bin/bpftrace" ]; then
        echo "FAIL $deb is '$v', not bpftrace 0.23.2, and no Debian 13 root at $r (make root)"
        exit 1
    fi
    echo "     ($deb is '$v': running in a chroot of $r)"
    mount -t proc proc "$r/proc" && mount --rbind /sys "$r/sys" && mount --rbind /dev "$r/dev" &&
        mount -t tmpfs tmpfs "$r/tmp" && mkdir -p "$r$project" && mount --rbind "$project" "$r$project" ||
        { echo "FAIL mounting into $r"; exit 1; }
    exec chroot "$r" env KSYM_BPFTRACE_CHROOT=1 KSYM_KERNEL="${KSYM_KERNEL:-}" \
        sh -c 'cd "$1" && exec sh bpftrace/tests/guest.sh' sh "$project"
    ;;
esac
for t in "$fork" "$deb"; do
    [ -x "$t" ] || { echo "FAIL no $t (make bpftrace-fork)"; exit 1; }
done
# What the kernel has (tests/kernels.txt; KSYM_KERNEL names the guest's row).
has() { [ "$(sh tools/guest/kernels.sh get "${KSYM_KERNEL:-}" "$1" 2> /dev/null)" != no ]; }
# A kernel without func_ip (5.10) runs only what depends on the kernel (the
# per-alias index without cookies, func refused): 0.23.2 is slow there.
full=1
has func_ip || full=0
multi=0
has tracing_multi && multi=1
tracing=/sys/kernel/tracing
[ -r $tracing/enabled_functions ] || tracing=/sys/kernel/debug/tracing

# bpftrace -c splits its command on spaces: the workloads are files.
# work.sh ENABLED [LINKS]: the kernel's functions with a trampoline, and
# bpftrace's links as the kernel describes them (its parent is bpftrace):
# one line per link, its type and its count of functions.
cat > "$tmp/links.sh" << 'EOF'
for f in /proc/$1/fdinfo/*; do
    awk '/^link_type:/ { t = $2 } /^cnt:/ { c = $2 } END { if (t != "") print t, (c == "" ? 1 : c) }' "$f"
done
EOF
cat > "$tmp/work.sh" << EOF
/usr/bin/dd if=/dev/zero of=/dev/null bs=1 count=$count status=none
/usr/bin/readlink /proc/self/exe > /dev/null
cat $tracing/enabled_functions > "\$1"
[ -z "\$2" ] || sh $tmp/links.sh \$PPID > "\$2"
EOF
cat > "$tmp/iplink.sh" << EOF
ip link add ksymbt0 type dummy && ip link set ksymbt0 up && ip link del ksymbt0
sh $tmp/links.sh \$PPID > "\$1"
EOF

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
# The fork's line for a body the kernel refuses as one multi program.
fallback=': the kernel refuses the body as one multi program ('
# The output without "Attaching N" and that line, and a kstack without its frames in BPF
# code: those above the probe's own function (the program and its
# trampoline, printed as bpf_trampoline_ID or as whatever kallsyms symbol
# precedes them, by whichever symbol cache was read when). Map entries
# with equal values print in hash order: each entry is joined into one
# line (kstack keys span several) and the entries sorted.
body() {
    grep -v -e '^Attaching [0-9]* probes*\.\.\.$' -e "^WARNING: .*$fallback" "$tmp/$1.$2.out" |
        awk 'function flush() {
                if (e == "") return
                if (n > 1 && fn != "") {
                    for (i = 2; i <= n && f[i] !~ "^ *" fn "\\+"; i++) ;
                    if (i <= n) { e = f[1]; for (; i <= n; i++) e = e " | " f[i] }
                }
                print e; e = ""; n = 0
            }
            /^@/ { flush(); e = $0; n = 1; f[1] = $0
                   fn = $0; sub(/^@[a-z]*\[[a-z]*:[^:]*:/, "", fn); sub(/,.*/, "", fn); next }
            e != "" { e = e " | " $0; f[++n] = $0; next }
            { print }
            END { flush() }' | sort
}
show() {
    for tool in fork deb; do
        echo "  --- $tool (exit $(rc "$1" $tool))"
        head -n 40 "$tmp/$1.$tool.out" | sed 's/^/  /'
    done
}
# Functions with a trampoline (direct call) attached, from the kernel: the
# function's line says so, or (7.3) the line after it.
tramps() { awk '$1 !~ /^(direct|tramp)/ { f = $1 } /direct|tramp/ { print f }' "$1" | sort -u; }

# links NAME TOOL TYPE: how many links of TYPE bpftrace held, and their
# functions, as the kernel describes them (fdinfo: link_type, cnt).
links() { awk -v t="$3" '$1 == t { n++; c += $2 } END { print n + 0, c + 0 }' "$tmp/$1.$2.links"; }
# links_check NAME TOOL MULTI FALLBACKS N: TOOL held MULTI tracing_multi
# links, and one tracing link for each other function, N in all; the
# probes it said fall back from a multi program are FALLBACKS (sorted),
# each in the verifier's words (bpf_multi_func has no typed argument).
links_check() {
    set -- "$1" "$2" "$3" "$4" "$5" "$(links "$1" "$2" tracing_multi)" "$(links "$1" "$2" tracing)"
    said=$(sed -n "s/^WARNING: \(.*\)$fallback.*/\1/p" "$tmp/$1.$2.out" | sort | tr '\n' ' ' | sed 's/ $//')
    why=$(grep -c "^WARNING: .*${fallback}.*bpf_multi_func" "$tmp/$1.$2.out")
    if [ "${6% *}" = "$3" ] && [ $((${6#* } + ${7#* })) = "$5" ] && [ "${7% *}" = "${7#* }" ] &&
        [ "$said" = "$4" ] && { [ -z "$4" ] || [ "$why" = "$(echo "$4" | wc -w)" ]; }; then
        ok "$1: $2: the kernel shows ${6% *} tracing_multi links (${6#* } functions) and ${7% *} tracing links, $5 functions${4:+; multi refused for $4}"
    else
        bad "$1: $2: the kernel shows ${6% *} tracing_multi links (${6#* } functions) and ${7% *} tracing links, want $3 and $5 functions in all; multi refused for '$said' ($why with the verifier's words), want '$4'"
    fi
}

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
# Without bpf_get_func_ip in fentry (5.10) both refuse `func` (case 4):
# there `probe` alone is compared, 0.23.2's one program per function being
# the oracle for which function fired.
f=', func'
has func_ip || f=''
p='fentry:vmlinux:vfs_read* /comm == "dd" || comm == "readlink"/ { @r[probe'$f'] = count(); }
kretfunc:vmlinux:vfs_write* /comm == "dd"/ { @w[probe'$f'] = count(); }
fexit:vmlinux:__x64_sys_read* /comm == "dd" || comm == "readlink"/ { @a[probe, args.regs->dx, retval] = count(); }
kfunc:vmlinux:__x64_sys_write* /comm == "dd"/ { @b[probe, args->regs->dx] = count(); }
fentry:vmlinux:ksys_write* /comm == "dd"/ { @k[probe, kstack(4)] = count(); }'
run main fork "$p" "/bin/sh $tmp/work.sh $tmp/main.fork.enabled $tmp/main.fork.links"
run main deb "$p" "/bin/sh $tmp/work.sh $tmp/main.deb.enabled $tmp/main.deb.links"
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
        ok "main: identical output, $(grep -c '^@' "$tmp/main.deb.body") map entries (probe${f:+, func}, args, retval, kstack)"
    else
        bad "main: outputs differ: < fork, > 0.23.2"
        diff "$tmp/main.fork.body" "$tmp/main.deb.body" | head -n 40 | sed 's/^/  /'
    fi
    if [ -n "$f" ]; then
        pair_check main '@r\[fentry:vmlinux:' 2
        pair_check main '@w\[fexit:vmlinux:' 1
    elif grep -q '^@r\[fentry:vmlinux:vfs_readlink\]' "$tmp/main.fork.body"; then
        ok "main: no func_ip: vfs_readlink, not the first of vfs_read*, counted under its own name (its per-alias index)"
    else
        bad "main: no func_ip: no @r[fentry:vmlinux:vfs_readlink] in the fork's output"
    fi
    # With tracing_multi links: the three bodies that read neither args nor
    # retval (@r, @w, @k) as one link each, the two that do (@a, @b) one
    # link per function, each said once (the verifier's own words).
    # 0.23.2, and the fork elsewhere: one link per function.
    if [ $multi = 1 ]; then
        links_check main fork 3 "fentry:vmlinux:__x64_sys_write* fexit:vmlinux:__x64_sys_read*" "$nf"
    else
        links_check main fork 0 "" "$nf"
    fi
    links_check main deb 0 "" "$nd"
fi

# One body per wildcard: the fork's object has one program for each of the
# script's 5 wildcards, 0.23.2's one per function (its "Attaching N").
# Not with tracing_multi links (7.3): codegen's, the same there.
[ $full = 1 ] && [ $multi = 0 ] && {
"$fork" --emit-elf "$tmp/main.fork.o" -e "$p" > /dev/null 2>&1
"$deb" --emit-elf "$tmp/main.deb.o" -e "$p" > /dev/null 2>&1
progs() { readelf -sW "$1" 2> /dev/null | awk '$4 == "FUNC" && $5 == "GLOBAL"' | grep -c .; }
pf=$(progs "$tmp/main.fork.o")
pd=$(progs "$tmp/main.deb.o")
if [ "$pf" = 5 ] && [ -n "$nd" ] && [ "$pd" = "$nd" ]; then
    ok "main: --emit-elf: the fork's object has $pf programs ($(wc -c < "$tmp/main.fork.o") bytes), 0.23.2's $pd ($(wc -c < "$tmp/main.deb.o") bytes)"
else
    bad "main: --emit-elf: the fork's object has '$pf' programs (want 5), 0.23.2's '$pd' (want its $nd)"
fi
}

# 2. A module's functions, through its BTF object.
if ! has module_btf; then
    echo "skip dummy: this kernel has no module BTF (fentry on a module's functions needs it)"
elif [ -d /sys/module/dummy ]; then
    p='fentry:dummy:* { @[probe] = count(); } kretfunc:dummy:* { @x[probe, func] = count(); }'
    run dummy fork "$p" "/bin/sh $tmp/iplink.sh $tmp/dummy.fork.links"
    run dummy deb "$p" "/bin/sh $tmp/iplink.sh $tmp/dummy.deb.links"
    nf=$(attached dummy fork)
    nd=$(attached dummy deb)
    body dummy fork | sed 's/: [0-9]*$//' | sort > "$tmp/dummy.fork.keys"
    body dummy deb | sed 's/: [0-9]*$//' | sort > "$tmp/dummy.deb.keys"
    if [ "$(rc dummy fork)" = 0 ] && [ "$(rc dummy deb)" = 0 ] && [ -n "$nf" ] && [ "$nf" = "$nd" ] &&
        grep -q '^@\[fentry:dummy:' "$tmp/dummy.deb.keys" && cmp -s "$tmp/dummy.fork.keys" "$tmp/dummy.deb.keys"; then
        ok "dummy: both attach $nf probes, the same $(grep -c '^@' "$tmp/dummy.deb.keys") keys"
        pair_check dummy '@x\[fexit:dummy:' 3
        # A module's functions: one tracing_multi link each, loaded with
        # the module's BTF object.
        links_check dummy fork $((2 * multi)) "" "$nf"
    else
        bad "dummy: attach $nf against $nd, or keys differ: < fork, > 0.23.2"
        diff "$tmp/dummy.fork.keys" "$tmp/dummy.deb.keys" | head -n 20 | sed 's/^/  /'
        show dummy
    fi
else
    bad "dummy: the module is not loaded (modprobe dummy)"
fi

# 3. A wildcard matching nothing: 0.23.2's own message and status (not on
# 7.3: codegen's, the same there).
p='fentry:vmlinux:ksym_no_such_function_* { @ = count(); }'
[ $full = 1 ] && [ $multi = 0 ] && run nothing fork "$p" && run nothing deb "$p"
if [ $full = 0 ] || [ $multi = 1 ]; then
    :
elif cmp -s "$tmp/nothing.fork.out" "$tmp/nothing.deb.out" && [ "$(rc nothing fork)" = "$(rc nothing deb)" ]; then
    ok "no match: the same message ($(head -n 1 "$tmp/nothing.deb.out")), exit $(rc nothing deb)"
else
    bad "no match: outputs differ"
    show nothing
fi

# 4. `func` where fentry has no bpf_get_func_ip (5.10): 0.23.2's error,
# kept by the fork.
if ! has func_ip; then
    p='fentry:vmlinux:vfs_read* { @[func] = count(); }'
    run func_ip fork "$p"
    run func_ip deb "$p"
    if cmp -s "$tmp/func_ip.fork.out" "$tmp/func_ip.deb.out" && [ "$(rc func_ip fork)" = "$(rc func_ip deb)" ] &&
        [ "$(rc func_ip deb)" != 0 ]; then
        ok "func without func_ip: the same error ($(grep -m1 ERROR "$tmp/func_ip.deb.out")), exit $(rc func_ip deb)"
    else
        bad "func without func_ip: outputs differ"
        show func_ip
    fi
fi

# 5. Functions the kernel refuses inside a wildcard: migrate_disable and
# migrate_enable are on its deny list (BPF trampolines may not call into
# them). 0.23.2 fails the whole probe, naming the first; the fork skips each
# with one warning and attaches the rest. The oracles: 0.23.2 on each
# warned function alone (it must fail), and the kernel's functions with a
# trampoline during the fork's run (every other function bpftrace lists).
if [ $full = 1 ]; then
    p='fentry:vmlinux:migrate_* { @[probe] = count(); }'
    run refused fork "$p" "/bin/sh $tmp/work.sh $tmp/refused.fork.enabled $tmp/refused.fork.links"
    run refused deb "$p" "/bin/sh $tmp/work.sh $tmp/refused.deb.enabled"
    "$deb" -l 'fentry:vmlinux:migrate_*' | sed -n 's/^fentry:vmlinux://p' | sort > "$tmp/refused.list"
    sed -n 's/^WARNING: fentry:vmlinux:\([^:]*\): \(loading\|attaching\) failed: .*, skipping\.$/\1/p' \
        "$tmp/refused.fork.out" | sort > "$tmp/refused.warned"
    sed -n 's/^WARNING: fentry:vmlinux:\([^:]*\): bpftrace matches it, libksym does not expand to it, skipping\.$/\1/p' \
        "$tmp/refused.fork.out" | sort > "$tmp/refused.skipped"
    first=$(sed -n 's/^ERROR: Error loading BPF program for fentry_vmlinux_\(.*\)_[0-9]*\. .*/\1/p' "$tmp/refused.deb.out" | head -n 1)
    alone=""
    for fn in $(cat "$tmp/refused.warned"); do
        run "refused_$fn" deb "fentry:vmlinux:$fn { @ = count(); }" "/bin/true"
        if [ "$(rc "refused_$fn" deb)" = 0 ] ||
            ! grep -q "^ERROR: Error loading BPF program for fentry_vmlinux_${fn}_1\." "$tmp/refused_$fn.deb.out"; then
            alone="$alone $fn"
        fi
    done
    sort "$tmp/refused.warned" "$tmp/refused.skipped" | comm -23 "$tmp/refused.list" - > "$tmp/refused.want"
    tramps "$tmp/refused.fork.enabled" | grep -x -F -f "$tmp/refused.list" > "$tmp/refused.tramps"
    nw=$(grep -c . "$tmp/refused.warned")
    if [ "$(rc refused fork)" = 0 ] && [ "$(rc refused deb)" != 0 ] && [ "$nw" -ge 1 ] && [ -n "$first" ] &&
        grep -qx "$first" "$tmp/refused.warned" && [ -z "$alone" ] &&
        [ "$(attached refused fork)" = "$(attached refused deb)" ] &&
        [ -s "$tmp/refused.want" ] && cmp -s "$tmp/refused.want" "$tmp/refused.tramps"; then
        ok "refused: 0.23.2 fails the probe ($first); the fork warns for $(tr '\n' ' ' < "$tmp/refused.warned")(each refused alone by 0.23.2) and the kernel lists the other $(grep -c . "$tmp/refused.tramps") with a trampoline"
    else
        bad "refused: the fork exits $(rc refused fork), 0.23.2 $(rc refused deb) naming '$first'; warned: $(tr '\n' ' ' < "$tmp/refused.warned"); not refused alone by 0.23.2: '$alone'; trampolines: < want, > the kernel's"
        diff "$tmp/refused.want" "$tmp/refused.tramps" | head -n 20 | sed 's/^/  /'
        show refused
    fi
    [ $multi = 1 ] && [ -s "$tmp/refused.fork.links" ] &&
        echo "     (refused: the fork's links: $(links refused fork tracing_multi) tracing_multi, $(links refused fork tracing) tracing)"
fi

rm -rf "$tmp"
if [ "$fail" = 0 ]; then
    echo "bpftrace fork: all $checks checks passed"
fi
exit $fail
