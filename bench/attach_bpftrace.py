#!/usr/bin/env python3
"""Stock bpftrace 0.23.2 and the fork on one fentry wildcard, for make
bench-attach (bench/attach.sh), in the 7.3 guest.

    python3 bench/attach_bpftrace.py BPFTRACE PATTERN ROUNDS

bpftrace runs `fentry:vmlinux:PATTERN { @[probe] = count(); }` with
`BEGIN { printf("ready\\n"); exit(); }`: bpftrace runs BEGIN once every
probe is attached, so "attached" is the time from the start until the
"ready" line, "teardown" from there until the process is gone, and peak
RSS is wait4's. A run that prints no "ready" (bpftrace refused the probe)
counts as not attached, with its first error line. Medians of ROUNDS.
"""
import os, statistics, subprocess, sys, time

tool, pattern, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
prog = (f'fentry:vmlinux:{pattern} {{ @[probe] = count(); }} '
        'BEGIN { printf("ready\\n"); exit(); }')
env = dict(os.environ, BPFTRACE_MAX_PROBES="100000", BPFTRACE_MAX_BPF_PROGS="100000")
att, tear, rss, why = [], [], [], ""
for _ in range(rounds):
    t0 = time.monotonic()
    p = subprocess.Popen([tool, "-e", prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env=env, text=True)
    ready = None
    lines = []
    for line in p.stdout:
        lines.append(line)
        if line.strip() == "ready" and ready is None:
            ready = time.monotonic()
    _, status, ru = os.wait4(p.pid, 0)
    end = time.monotonic()
    if ready is None:
        why = next((l.strip() for l in lines if "ERROR" in l or "rror" in l), lines[-1].strip() if lines else "")
        continue
    att.append(ready - t0)
    tear.append(end - ready)
    rss.append(ru.ru_maxrss / 1024)
name = os.path.basename(os.path.dirname(tool)) if "fork" in tool else "bpftrace 0.23.2"
if att:
    print(f"| {pattern} | | (e) {name} | {statistics.median(att):.3f} s | {statistics.median(tear):.3f} s | "
          f"{statistics.median(rss):.0f} MiB | {len(att)} of {rounds} runs attached |")
else:
    print(f"| {pattern} | | (e) {name} | not attached | | | {why[:100]} |")
