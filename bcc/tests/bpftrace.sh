#!/bin/sh
# Unmodified bpftrace (Debian 12's 0.17, Debian 13's 0.23.2: both symbolize
# kernel addresses with bcc_symcache_new(-1) and bcc_symcache_resolve, one
# call per answer printed, no cache of their own) run twice at the same
# time, without and with LD_PRELOAD=libksym-bcc.so.0, on the same events:
# the same ksym() answers and the same kstack stacks (counts aside). The
# proof that the answers came from libksym is its count (KSYM_BCC_DEBUG's
# line at exit): as many kernel addresses answered by libksym as answers
# printed, and as many with a symbol as printed names.
#
#   bpftrace.sh LIBKSYM_BCC NEED WORKLOAD [--kprobes]
#
# Both runs read one copy of /proc/kallsyms, bind-mounted over it in a mount
# namespace: bcc's choice among several names at one address depends on
# every line of the file, and the lines of BPF programs change when either
# bpftrace loads or unloads its own (two runs of plain bpftrace a moment
# apart can differ there). The copy has the running kernel's addresses,
# so the stacks are real.
#
# ksym() is asked, in BEGIN, for every address several names share (up to
# 200), 150 random addresses inside symbols and 150 inside modules' ones.
# Stacks: system call tracepoints, sched_switch and the functions of
# hrtimer_start (ksym() of a function pointer), filtered on the workload's
# name; with --kprobes (the guest) also kprobe:vfs_read,
# kprobe:virtqueue_add_sgs and kprobe:p9_client_read, whose stacks go
# through the 9p modules.
set -u
lib=$1
need=$2
wl=$3
kprobes=${4:-}

if [ "$(id -u)" != 0 ]; then
    exec "$need" kernel "bpftrace needs root"
fi
command -v bpftrace > /dev/null || { echo "FAIL: bpftrace is not installed (tools/deps.sh test installs it)"; exit 1; }
if [ "$kprobes" = --kprobes ] && [ ! -e /sys/kernel/tracing/kprobe_events ] && [ ! -e /sys/kernel/debug/tracing/kprobe_events ]; then
    "$need" kprobes "no kprobe_events in tracefs: the stacks come from tracepoints only" || exit 1
    kprobes=
fi

out=$(mktemp -d /tmp/ksym-bcc-bpftrace-XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
cp /proc/kallsyms "$out/kallsyms"
mkdir -m 700 "$out/snap"

# The addresses for ksym(), from the copy (bcc keeps every type but data).
awk -v seed=7 '
    BEGIN { srand(seed) }
    $2 ~ /^[bBdDrR]$/ || $1 ~ /^0000/ { next }
    { n[$1]++; if (NF > 3) mod[++m] = $1; all[++k] = $1 }
    END {
        for (a in n) if (n[a] > 1 && s < 200) { print a; s++ }
        for (i = 0; i < 150 && k; i++) printf "%s+%d\n", all[int(rand() * k) + 1], int(rand() * 64)
        for (i = 0; i < 150 && m; i++) printf "%s+%d\n", mod[int(rand() * m) + 1], int(rand() * 64)
    }' "$out/kallsyms" > "$out/addrs"
{
    echo 'BEGIN {'
    while IFS=+ read -r a off; do
        printf '    printf("ksym %%s\\n", ksym(0x%s + %s));\n' "$a" "${off:-0}"
    done < "$out/addrs"
    echo '}'
    cat << 'EOF'
tracepoint:syscalls:sys_enter_getpid, tracepoint:syscalls:sys_enter_openat, tracepoint:syscalls:sys_enter_read,
tracepoint:syscalls:sys_enter_nanosleep /comm == "ksym-bcc-wl"/ { @sys[kstack] = count(); }
tracepoint:sched:sched_switch /comm == "ksym-bcc-wl"/ { @switch[kstack] = count(); }
tracepoint:timer:hrtimer_start /comm == "ksym-bcc-wl"/ { @timer[ksym(args->function)] = count(); }
EOF
    if [ "$kprobes" = --kprobes ]; then
        # vfs_read's callers; and functions the 9p modules call or are (the
        # guest's root is 9p), where the kernel has them.
        for f in vfs_read virtqueue_add_sgs p9_client_read; do
            grep -q " $f\b" "$out/kallsyms" &&
                echo "kprobe:$f /comm == \"ksym-bcc-wl\"/ { @$f[kstack] = count(); }"
        done
    fi
} > "$out/script.bt"
nks=$(wc -l < "$out/addrs")

# Both runs in one mount namespace that has the copy over /proc/kallsyms.
unshare -m --propagation unchanged sh -c '
    set -u
    out=$1 lib=$2 wl=$3 nks=$4
    { mount --make-rprivate / 2> /dev/null || mount --make-rprivate /proc; } && mount --bind "$out/kallsyms" /proc/kallsyms || exit 3
    # bpftrace finds tracepoints in tracefs, which a fresh machine may not
    # have mounted: mounted here, in this namespace only.
    [ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing || exit 4
    bpftrace "$out/script.bt" > "$out/plain.out" 2> "$out/plain.err" &
    p1=$!
    KSYM_BCC_DEBUG=1 KSYM_BCC_SNAPSHOT_DIR="$out/snap" LD_PRELOAD="$lib" \
        bpftrace "$out/script.bt" > "$out/preload.out" 2> "$out/preload.err" &
    p2=$!
    # Attached when BEGIN has printed all its lines.
    for i in $(seq 1 240); do
        a=$(grep -c "^ksym " "$out/plain.out" 2> /dev/null || true)
        b=$(grep -c "^ksym " "$out/preload.out" 2> /dev/null || true)
        [ "${a:-0}" -ge "$nks" ] && [ "${b:-0}" -ge "$nks" ] && break
        kill -0 $p1 2> /dev/null && kill -0 $p2 2> /dev/null || break
        sleep 0.5
    done
    "$wl"
    sleep 1
    kill -INT $p1 $p2 2> /dev/null
    wait $p1
    wait $p2
' sh "$out" "$lib" "$wl" "$nks" || {
    echo "FAIL: the mount namespace or bpftrace failed ($?)"
    for f in plain.err preload.err; do echo "--- $f"; sed -n '1,20p' "$out/$f" 2> /dev/null; done
    exit 1
}

# One line per ksym() answer, and per map entry without its count, sorted.
normalize() {
    awk '
        /^ksym / { print; next }
        /^@[a-z0-9_]*\[$/ { key = $0; frames = ""; inside = 1; next }
        inside && /^\]: / { print key frames; inside = 0; next }
        inside { gsub(/^ +/, ""); frames = frames ";" $0; next }
        /^@[a-z0-9_]*\[.*\]: [0-9]+$/ { sub(/: [0-9]+$/, ""); print }
    ' "$1" | sort
}
normalize "$out/plain.out" > "$out/plain.norm"
normalize "$out/preload.out" > "$out/preload.norm"

fail=0
if grep -q "^libksym-bcc" "$out/plain.err"; then echo "FAIL: libksym-bcc in the plain run"; fail=1; fi
# What the preloaded run printed: ksym() lines, the frames of its stacks
# and the keys of @timer (ksym() of a function pointer); names are those
# that are not an address (0x...).
printed=$(awk '
    /^ksym / { n++; if ($2 !~ /^0x/) named++; next }
    /^@timer\[/ { n++; if ($0 !~ /^@timer\[0x/) named++; next }
    /^@[a-z0-9_]*\[$/ { inside = 1; next }
    inside && /^\]: / { inside = 0; next }
    inside { n++; if ($1 !~ /^0x/) named++ }
    END { print n + 0, named + 0 }' "$out/preload.out")
counted=$(sed -n 's/^libksym-bcc: pid [0-9]* exits: \([0-9]*\) kernel addresses answered by libksym (\([0-9]*\) with a symbol).*/\1 \2/p' "$out/preload.err")
if [ -z "$counted" ] || [ "$counted" != "$printed" ]; then
    echo "FAIL: the preloaded bpftrace printed $printed kernel answers (all, named); libksym-bcc counted '${counted:-no line at exit}'"
    fail=1
fi
answers=$(grep -c "^ksym " "$out/plain.norm" || true)
stacks=$(grep -c "^@[a-z0-9_]*\[;" "$out/plain.norm" || true)
frames=$(grep "^@[a-z0-9_]*\[;" "$out/plain.norm" | tr ';' '\n' | grep -c '+' || true)
if [ "$answers" -lt "$nks" ] || [ "$stacks" -lt 2 ]; then
    echo "FAIL: too little output ($answers ksym() answers of $nks, $stacks stacks)"
    sed -n '1,20p' "$out/plain.err"
    fail=1
fi
if ! cmp -s "$out/plain.norm" "$out/preload.norm"; then
    echo "FAIL: bpftrace prints differently with LD_PRELOAD=$lib:"
    diff "$out/plain.norm" "$out/preload.norm" | head -20
    fail=1
fi
# Frames of modules (the copy says which names are modules').
modframes=$(grep "^@[a-z0-9_]*\[;" "$out/plain.norm" | tr ';' '\n' | sed -n 's/+[0-9]*$//p' | sort -u |
    awk 'NR == FNR { if (NF > 3 && $4 !~ /^\[(bpf|__builtin__)/) m[$3] = 1; next } m[$1]' "$out/kallsyms" - | wc -l)
if [ "$kprobes" = --kprobes ] && [ "$modframes" -eq 0 ]; then
    "$need" modules "no stack went through a module's function" || fail=1
fi
[ "$fail" = 0 ] && echo "bpftrace $(bpftrace --version | sed 's/^bpftrace v//'): $answers ksym() answers and $stacks stacks ($frames frames, $modframes distinct ones in modules) the same with and without LD_PRELOAD=libksym-bcc.so.0; libksym-bcc counted the $(echo "$printed" | cut -d' ' -f1) answers printed"
exit $fail
