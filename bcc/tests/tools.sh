#!/bin/sh
# bcc's Python tools with libksym-bcc's interposer, against the same tools
# without it, in a guest (kprobes, modules, the kernel's headers for the
# tools' C): stackcount -K, trace -K, offcputime -K and profile -K, all five
# processes at once on one run of the workload, which they follow by pid.
#
#   tools.sh [LIBKSYM_BCC WORKLOAD]   (default: build/'s; from the project directory)
#
# make test runs it in the 6.12 guest only (GUEST_SCRIPTS_6.12: bcc 0.31's
# tools, Debian 13's): each tool compiles its C with clang, which takes
# most of a minute per tool under TCG.
# - stackcount -K of p9_client_rpc (the guest's root is 9p: the workload's
#   100 opens reach it through the 9p and 9pnet modules), run plain and
#   through the interposer: the same stacks, counts aside. trace -K of the
#   first 50 calls of p9_client_walk (it ends by itself) runs through the
#   interposer only: its perf buffer drops events under emulation, so two
#   runs print different sets, and each of its answers is checked
#   in-process (below).
# - offcputime -K and profile -K print different stacks each run: each
#   runs once, through the interposer, and every kernel address it
#   symbolizes is checked against the real libbcc's answer in the same
#   process (bcc/tests/pyksym.py tool), as are the interposed stackcount's
#   and trace's.
# pyksym.py also checks that libksym-bcc's counter rose by one per answer.
# The runs share one copy of /proc/kallsyms, bind-mounted over it in a
# mount namespace (bcc's choice among several names at one address depends
# on every line of the file, and the tools' own BPF programs add lines).
set -u
lib=${1:-$(pwd)/build/libksym-bcc.so.0}
wl=${2:-$(pwd)/build/bcc/ksym-bcc-wl}
PY=/usr/bin/python3
ip=$(dirname "$lib")/ksym-bcc
[ "$(id -u)" = 0 ] || { echo "FAIL: tools.sh runs as root"; exit 1; }
for t in stackcount trace offcputime profile; do
    command -v $t-bpfcc > /dev/null || { echo "FAIL: $t-bpfcc is missing (package bpfcc-tools)"; exit 1; }
done

out=$(mktemp -d /tmp/ksym-bcc-tools-XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
cp /proc/kallsyms "$out/kallsyms"

unshare -m --propagation unchanged sh -c '
    set -u
    out=$1 ip=$2 wl=$3 PY=$4
    { mount --make-rprivate / 2> /dev/null || mount --make-rprivate /proc; } && mount --bind "$out/kallsyms" /proc/kallsyms || exit 3
    mkfifo "$out/go"
    "$wl" --wait < "$out/go" &
    w=$!
    t() { # name mode tool args...
        n=$1 m=$2 tool=$(command -v "$3")
        shift 3
        if [ "$m" = plain ]; then
            $PY -u bcc/tests/pyksym.py plain "$tool" "$@"
        else
            LD_LIBRARY_PATH=$ip $PY -u bcc/tests/pyksym.py tool "$tool" "$@"
        fi > "$out/$n.out" 2> "$out/$n.err" &
        echo $! > "$out/$n.pid"
    }
    t stackcount.plain plain stackcount-bpfcc -K -p $w p9_client_rpc
    t stackcount.ksym tool stackcount-bpfcc -K -p $w p9_client_rpc
    t trace.ksym tool trace-bpfcc -K -b 256 -M 50 -p $w p9_client_walk
    t offcputime.ksym tool offcputime-bpfcc -K -p $w
    t profile.ksym tool profile-bpfcc -K -p $w
    runs="stackcount.plain stackcount.ksym trace.ksym offcputime.ksym profile.ksym"
    # Every tool attached, or one failed (its own error is the report):
    # 25 minutes at most (five clang builds at once, under emulation, on a
    # busy machine). A tool attached late would miss events.
    ready=0
    for i in $(seq 1 1500); do
        ready=0
        for r in $runs; do
            grep -q "^pyksym: attached" "$out/$r.err" 2> /dev/null && ready=$((ready + 1))
            kill -0 "$(cat "$out/$r.pid")" 2> /dev/null || ready=99
        done
        [ $ready -ge 5 ] && break
        sleep 1
    done
    [ $ready = 5 ] || echo "not every tool attached ($ready of 5) after $i s" > "$out/attach.err"
    echo go > "$out/go"
    wait $w
    sleep 2
    for r in $runs; do kill -INT "$(cat "$out/$r.pid")" 2> /dev/null; done
    for r in $runs; do wait "$(cat "$out/$r.pid")"; echo $? > "$out/$r.rc"; done
' sh "$out" "$ip" "$wl" "$PY" || { echo "FAIL: the mount namespace or the workload failed ($?)"; exit 1; }

fail=0
[ -s "$out/attach.err" ] && { echo "FAIL: $(cat "$out/attach.err")"; fail=1; }
for r in stackcount.plain stackcount.ksym trace.ksym offcputime.ksym profile.ksym; do
    if [ "$(cat "$out/$r.rc" 2> /dev/null)" != 0 ]; then
        echo "FAIL: $r exited with $(cat "$out/$r.rc" 2> /dev/null)"
        tail -n 15 "$out/$r.err"
        fail=1
    fi
done
# stackcount: each stack (frames joined) once, counts aside.
stacks() {
    awk '/^ +[0-9]+$/ { if (s != "") print s; s = ""; next }
         /^  / { sub(/^ +/, ""); s = s ";" $0; next }' "$1" | sort
}
# trace: each distinct event (its header and stack as one line), for the
# module frames below.
events() {
    awk '/^[0-9]+ +[0-9]+ / { if (e != "") print e; e = $0; next }
         /^        / { sub(/^ +/, ""); e = e ";" $0; next }
         END { if (e != "") print e }' "$1" | sort -u
}
stacks "$out/stackcount.plain.out" > "$out/stackcount.plain.norm"
stacks "$out/stackcount.ksym.out" > "$out/stackcount.ksym.norm"
events "$out/trace.ksym.out" > "$out/trace.ksym.norm"
n=$(grep -c . "$out/stackcount.plain.norm")
if [ "$n" -lt 2 ]; then
    echo "FAIL: stackcount printed $n stacks"
    head -n 20 "$out/stackcount.plain.out" "$out/stackcount.plain.err"
    fail=1
elif ! cmp -s "$out/stackcount.plain.norm" "$out/stackcount.ksym.norm"; then
    echo "FAIL: stackcount prints differently through libksym-bcc's interposer:"
    diff "$out/stackcount.plain.norm" "$out/stackcount.ksym.norm" | head -n 20
    fail=1
fi
n=$(grep -c . "$out/trace.ksym.norm")
[ "$n" -ge 2 ] || { echo "FAIL: trace printed $n events"; head -n 20 "$out/trace.ksym.out"; fail=1; }
# Frames of modules: the copy of kallsyms says which names are modules'.
modframes=$(cat "$out/stackcount.plain.norm" "$out/trace.ksym.norm" | tr ';' '\n' | sed 's/+0x[0-9a-f]*.*//' |
    sort -u | awk 'NR == FNR { if (NF > 3 && $4 !~ /^\[(bpf|__builtin__)/) m[$3] = 1; next } m[$1]' "$out/kallsyms" - | wc -l)
if [ "$modframes" -eq 0 ]; then
    echo "FAIL: no stack of stackcount or trace went through a module's function"
    fail=1
fi
for r in stackcount.ksym trace.ksym offcputime.ksym profile.ksym; do
    grep -q "^pyksym: .* each the same as" "$out/$r.err" || { grep "^pyksym\|^  " "$out/$r.err" | head; fail=1; }
done
# Each tool's start-up to its first probe attached (clang compiles its C;
# five at once here), plain and through the interposer.
startup=$(for r in stackcount.plain stackcount.ksym trace.ksym offcputime.ksym profile.ksym; do
    sed -n "s/^pyksym: attached \([0-9.]*\) s after start/$r \1 s/p" "$out/$r.err" | head -n 1
done | tr '\n' ',' | sed 's/,$//')
echo "start-up to the first probe attached: $startup"
if [ "$fail" = 0 ]; then
    echo "tools: stackcount ($(grep -c . "$out/stackcount.plain.norm") stacks) prints the same through the interposer, trace $(grep -c . "$out/trace.ksym.norm") distinct events, $modframes distinct frames in modules;" \
        "$(for r in stackcount trace offcputime profile; do sed -n 's/^pyksym: \([a-z-]*\): \([0-9]*\) kernel addresses (\([0-9]*\) with.*/\1 \2 (\3 named)/p' "$out/$r.ksym.err"; done | tr '\n' ',' | sed 's/,$//')" \
        "answers each the same as bcc's in the same process and counted by libksym-bcc"
fi
exit $fail
