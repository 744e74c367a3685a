#!/usr/bin/env python3
"""ksym trace against bpftrace 0.17, side by side in the same guest.

    make bench-guest            (boots the guest, runs this inside)
    python3 bench/guest.py KSYM [PATTERN] [ROUNDS]

For each round, each tool traces the kernel functions PATTERN (a glob over
vmlinux, default vfs_*) with fentry programs that count hits per function:

    ksym trace --phases --duration 1 'vmlinux`PATTERN'
    bpftrace -e 'kfunc:vmlinux:PATTERN { @[probe] = count(); }'

"Attached" is measured the same way for both, from outside: the time from
the start of the process until the number of tracing links among its open
file descriptors (/proc/PID/fdinfo, link_type tracing) reaches the number
of programs the tool says it attaches. Then 1 s of tracing, SIGINT, and the
process's peak RSS (wait4). Medians of ROUNDS (default 3) rounds, tools
alternating. ksym's own phases (expand, prepare, load: the verifier,
attach) are its --phases line. Ratios, not absolute times: TCG is slow.
"""
import os, re, signal, statistics, subprocess, sys, time

from guestlib import tracing_links

ksym = sys.argv[1]
pattern = sys.argv[2] if len(sys.argv) > 2 else "vfs_*"
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3




def run(argv, want_re):
    """Start argv, wait for its 'N programs' line (want_re on stdout or
    stderr, group 1 = N) and then for N tracing links; trace 1 s; SIGINT.
    Returns (seconds to attached, N, peak RSS KiB, stderr text)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    out, want = [], None
    while want is None:
        line = p.stdout.readline()
        if not line:
            break
        out.append(line)
        m = re.search(want_re, line)
        if m:
            want = int(m.group(1))
    if want is None:
        p.wait()
        raise SystemExit(f"bench-guest: {argv[0]} did not say how many programs it attaches:\n{''.join(out)}")
    while True:
        n = tracing_links(p.pid)
        if n >= want or n < 0 or p.poll() is not None:
            break
        time.sleep(0.01)
    attached = time.monotonic() - t0
    if n < want:
        raise SystemExit(f"bench-guest: {argv[0]} has {n} of {want} tracing links:\n{''.join(out)}")
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    rest = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    out.append(rest)
    if os.waitstatus_to_exitcode(status) not in (0, -signal.SIGINT):
        raise SystemExit(f"bench-guest: {argv[0]} failed ({status}):\n{''.join(out)}")
    return attached, want, ru.ru_maxrss, "".join(out)


ksym_argv = [ksym, "trace", "--phases", "--duration", "30", f"vmlinux`{pattern}"]
bt_argv = ["bpftrace", "-e", f"kfunc:vmlinux:{pattern} {{ @[probe] = count(); }}"]
res = {"ksym": [], "bpftrace": []}
phases = []
for r in range(rounds):
    for name in ("ksym", "bpftrace"):
        if name == "ksym":
            t, n, rss, text = run(ksym_argv, r"(\d+) fentry programs attached")
            m = re.search(r"phases: expand ([\d.]+) s, prepare ([\d.]+) s, load ([\d.]+) s, attach ([\d.]+) s", text)
            if m:
                phases.append([float(x) for x in m.groups()])
        else:
            t, n, rss, text = run(bt_argv, r"Attaching (\d+) probes")
        res[name].append((t, n, rss))
        print(f"round {r + 1}: {name:8} {n:4} programs attached in {t:7.2f} s, peak RSS {rss / 1024:7.1f} MiB", flush=True)

med = lambda xs: statistics.median(xs)
k, b = res["ksym"], res["bpftrace"]
kt, bt = med([x[0] for x in k]), med([x[0] for x in b])
km, bm = med([x[2] for x in k]), med([x[2] for x in b])
kn, bn = k[0][1], b[0][1]
print()
print(f"| `{pattern}` on {os.uname().release} (TCG, {os.cpu_count()} CPUs), medians of {rounds} | programs | start to attached | peak RSS |")
print("|---|---|---|---|")
print(f"| ksym trace | {kn} | {kt:.2f} s | {km / 1024:.1f} MiB |")
print(f"| bpftrace 0.17 | {bn} | {bt:.2f} s | {bm / 1024:.1f} MiB |")
print(f"| ratio ksym/bpftrace | | {kt / bt:.2f}x (per program {kt / kn / (bt / bn):.2f}x) | {km / bm:.2f}x |")
if phases:
    names = ("expand", "prepare", "load", "attach")
    print("ksym phases (medians): " + ", ".join(f"{n} {med([p[i] for p in phases]):.2f} s" for i, n in enumerate(names)))
