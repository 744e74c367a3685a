#!/usr/bin/env python3
"""The bpftrace fork (libksym aliases) against Debian's bpftrace 0.17, one
run each, in the same guest.

    make bench-bpftrace-fork
    python3 bench/bpftrace_fork.py FORK [PATTERN...]     (default: vfs_* *file* *read*)

For each vmlinux glob PATTERN, both tools run

    bpftrace -e 'kfunc:vmlinux:PATTERN { @[probe] = count();
                 if (@first == 0) { @first = 1; printf("first\\n"); } }'

and the figures are:
- object: the size of the ELF codegen makes (--emit-elf): one body in the
  fork, one per function in 0.17 (the `probe` builtin makes it expand);
- attached: from the start of the process until the number of tracing
  links among its fds (/proc/PID/fdinfo, link_type tracing) reaches the N
  of its "Attaching N probes" line (as bench/guest.py measures it);
- first event: until its "first" line, while this script reads files;
- peak RSS: VmHWM of /proc/PID/status after the first event (or the
  run's time, BENCH_TIMEOUT, default 240 s), before SIGINT.
Limits raised for both: BPFTRACE_MAX_PROBES and BPFTRACE_MAX_BPF_PROGS.
One run, TCG: read the ratios and how they grow with N, not the seconds.
"""
import os, re, select, signal, subprocess, sys, time

from guestlib import tracing_links

fork = sys.argv[1]
patterns = sys.argv[2:] or ["vfs_*", "*file*", "*read*"]
tools = [("fork", fork), ("0.17", "/usr/bin/bpftrace")]
env = dict(os.environ, BPFTRACE_MAX_PROBES="100000", BPFTRACE_MAX_BPF_PROGS="100000")
TIMEOUT = int(os.environ.get("BENCH_TIMEOUT", "240"))  # per run, seconds


def prog(pattern):
    return (f"kfunc:vmlinux:{pattern} {{ @[probe] = count(); "
            "if (@first == 0) { @first = 1; printf(\"first\\n\"); } }")




def object_size(tool, pattern):
    path = f"/tmp/bpftrace-fork-bench.{os.getpid()}.o"
    r = subprocess.run([tool, "--emit-elf", path, "-e", prog(pattern)], env=env,
                       capture_output=True, text=True, timeout=TIMEOUT)
    try:
        size = os.path.getsize(path)
        os.unlink(path)
    except OSError:
        raise SystemExit(f"{tool} --emit-elf failed: {r.stdout}{r.stderr}")
    return size


def readline(p, t0):
    """A line of p's output, or None at EOF or when the run's time is up."""
    while time.monotonic() - t0 < TIMEOUT:
        r, _, _ = select.select([p.stdout], [], [], 0.2)
        if r:
            return p.stdout.readline() or None
        with open("/proc/version") as f:  # a read: vfs_read and friends fire
            f.read()
    return None


def run(tool, pattern):
    t0 = time.monotonic()
    p = subprocess.Popen([tool, "-e", prog(pattern)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, bufsize=1)
    out, want = [], None
    while want is None:
        line = readline(p, t0)
        if not line:
            break
        out.append(line)
        m = re.search(r"Attaching (\d+) probes?", line)
        if m:
            want = int(m.group(1))
    if want is None:
        p.kill()
        p.wait()
        raise SystemExit(f"{tool}: no 'Attaching N probes' line:\n{''.join(out)}")
    n = 0
    while time.monotonic() - t0 < TIMEOUT:
        n = tracing_links(p.pid)
        if n >= want or n < 0 or p.poll() is not None:
            break
        time.sleep(0.01)
    attached = time.monotonic() - t0
    print(f"  {tool} {pattern}: {n} of {want} links at {attached:.1f} s", file=sys.stderr, flush=True)
    first = None
    while time.monotonic() - t0 < TIMEOUT:
        line = readline(p, t0)
        if not line:
            break
        out.append(line)
        if line.strip() == "first":
            first = time.monotonic() - t0
            break
    hwm = 0
    try:
        with open(f"/proc/{p.pid}/status") as f:
            for l in f:
                if l.startswith("VmHWM:"):
                    hwm = int(l.split()[1])
    except OSError:  # it exited: say why
        print(f"{tool} exited ({p.poll()}):\n{''.join(out)[-2000:]}", file=sys.stderr, flush=True)
    p.send_signal(signal.SIGINT)
    try:
        out.append(p.communicate(timeout=120)[0])
    except subprocess.TimeoutExpired:
        p.kill()
    return want, n, attached, first, hwm, "".join(out)


rows = []
for pattern in patterns:
    for name, tool in tools:
        size = object_size(tool, pattern)
        want, n, attached, first, rss, text = run(tool, pattern)
        if n < want:
            print(f"{name} {pattern}: {n} of {want} tracing links\n{text[-2000:]}", flush=True)
        rows.append((pattern, name, want if n >= want else f"{n} of {want}", size, attached, first, rss))
        print(f"{pattern:10} {name:5} N={want:5} links {n:5} object {size:9} B  attached {attached:8.2f} s  "
              f"first event {first if first is None else round(first, 2)} s  peak RSS {rss / 1024:7.1f} MiB",
              flush=True)

print()
print(f"| {os.uname().release}, TCG, one run | tool | N | object | start to attached | first event | peak RSS |")
print("|---|---|---|---|---|---|---|")
for pattern, name, want, size, attached, first, rss in rows:
    fe = "-" if first is None else f"{first:.2f} s"
    print(f"| `{pattern}` | {name} | {want} | {size / 1024:.1f} KiB | {attached:.2f} s | {fe} | {rss / 1024:.1f} MiB |")
