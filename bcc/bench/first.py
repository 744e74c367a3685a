#!/usr/bin/python3
"""make bench-bcc: the first kernel symbol of bcc's Python module and of
bpftrace, with and without libksym-bcc, on the bcc of the system it runs on
(bcc/bench/bench.sh runs it on this machine and in the Debian 13 root).

  first.py SHIM RUNS           the table rows (Markdown)
  first.py --one ADDR          one Python measurement (a fresh process)

Python: in a new process, `from bcc import BPF` (not timed), then the first
BPF.ksym(ADDR): its time, and the RSS it added (resident KB after minus
before, anonymous and file-backed apart: libksym maps its snapshot, whose
pages are the page cache that every process of the boot shares). Without libksym-bcc, and through the interposer
(LD_LIBRARY_PATH=DIR/ksym-bcc), alternating; medians of RUNS. libksym-bcc's
snapshot is warm (a first run writes it: as any later process of a boot).

bpftrace: `BEGIN { printf("ksym %s\\n", ksym(ADDR)) }`, with system() actions
before and after it that read the clock and bpftrace's own RSS (they run in
order with the printf, whose address bpftrace resolves when it prints):
the time and the RSS the first ksym() adds (the time less that of one
system() call, timed alone just before). Without and with
LD_PRELOAD=libksym-bcc.so.0, alternating; medians of RUNS.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"


def rss_kb():
    """Resident KB: (anonymous, file-backed or shared memory: the snapshot
    on a disk or on a tmpfs) (/proc/self/status)."""
    v = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                v[line.split(":")[0]] = int(line.split()[1])
    return v["RssAnon"], v["RssFile"] + v["RssShmem"]


def one(addr):
    from bcc import BPF
    a0, f0 = rss_kb()
    t0 = time.perf_counter()
    name = BPF.ksym(addr)
    t1 = time.perf_counter()
    a1, f1 = rss_kb()
    print("%.3f %d %d %s" % ((t1 - t0) * 1e3, a1 - a0, f1 - f0, name.decode()))


def python_once(addr, env):
    out = subprocess.run([PY, os.path.abspath(__file__), "--one", "%x" % addr], env=env, capture_output=True,
                         text=True)
    try:
        ms, anon, file, name = out.stdout.split()
    except ValueError:
        raise SystemExit("first.py --one failed: %s" % out.stderr[-500:])
    return float(ms), int(anon) / 1024, int(file) / 1024, name


def bpftrace_once(addr, env):
    """bpftrace's first ksym(), measured inside its run: system() actions
    run in order with printf's, in bpftrace's own process (pid), so the
    clock and bpftrace's RSS are read just before and just after the
    printf that resolves the address. (ms, anonymous MB, file MB added)."""
    status = 'system("grep -E \\"^Rss(Anon|File|Shmem)\\" /proc/%d/status", pid);'
    # (bpftrace 0.17 reads %% in system()'s format as a conversion: the
    # date format goes in as an argument.)
    clock = 'system("date +T%s", "%s%N");'
    # Three clocks: the first interval is one system() alone, the second
    # the same plus the printf of the first ksym().
    prog = "BEGIN { %s %s %s printf(\"ksym %%s\\n\", ksym(0x%x)); %s %s exit(); }" % (
        status, clock, clock, addr, clock, status)
    p = subprocess.run(["bpftrace", "--unsafe", "-e", prog], env=env, capture_output=True, text=True)
    if p.returncode != 0 or "ksym vfs_read" not in p.stdout:
        raise SystemExit("bpftrace failed: %s %s" % (p.stdout[-300:], p.stderr[-300:]))
    t = [int(line[1:]) for line in p.stdout.split() if line.startswith("T")]
    anon = [int(line.split()[1]) for line in p.stdout.splitlines() if line.startswith("RssAnon")]
    shared = [int(line.split()[1]) for line in p.stdout.splitlines() if line.startswith(("RssFile", "RssShmem"))]
    file = [shared[0] + shared[1], shared[2] + shared[3]]
    return ((t[2] - t[1]) - (t[1] - t[0])) / 1e6, (anon[1] - anon[0]) / 1024, (file[1] - file[0]) / 1024


def a_kernel_function():
    with open("/proc/kallsyms") as f:
        for line in f:
            a, t, n = line.split()[:3]
            if n == "vfs_read":
                return int(a, 16)
    raise SystemExit("no vfs_read in /proc/kallsyms")


def row(what, unit, a, b, fmt="%.1f"):
    ratio = "%.2f" % (b / a) if a > 0 else "-"
    print("| %s | %s %s | %s %s | %s |" % (what, fmt % a, unit, fmt % b, unit, ratio))


def main():
    shim, runs = sys.argv[1], int(sys.argv[2])
    addr = a_kernel_function()
    bcc = os.path.basename(os.path.realpath([p for p in ("/usr/lib/x86_64-linux-gnu/libbcc.so.0",) if os.path.exists(p)][0]))
    snap = tempfile.mkdtemp(prefix="ksym-bcc-bench-")
    plain = dict(os.environ)
    plain.pop("LD_LIBRARY_PATH", None)
    plain.pop("LD_PRELOAD", None)
    interposed = dict(plain, LD_LIBRARY_PATH=os.path.join(os.path.dirname(shim), "ksym-bcc"),
                      KSYM_BCC_SNAPSHOT_DIR=snap)
    preloaded = dict(plain, LD_PRELOAD=shim, KSYM_BCC_SNAPSHOT_DIR=snap)
    python_once(addr, interposed)  # writes the snapshot
    p = {"t": [], "a": [], "f": []}
    q = {"t": [], "a": [], "f": []}
    for _ in range(runs):
        for env, d in ((plain, p), (interposed, q)):
            ms, anon, file, name = python_once(addr, env)
            if name != "vfs_read":
                raise SystemExit("BPF.ksym(%#x) is %s" % (addr, name))
            d["t"].append(ms)
            d["a"].append(anon)
            d["f"].append(file)
    m = statistics.median
    version = subprocess.run(["bpftrace", "--version"], capture_output=True, text=True).stdout.split()[-1]
    print("| %s, Python: the first `BPF.ksym` | without | with | with / without |" % bcc)
    print("|---|---|---|---|")
    row("time", "ms", m(p["t"]), m(q["t"]))
    row("private (anonymous) RSS added", "MB", m(p["a"]), m(q["a"]))
    row("shared RSS added (file-backed and tmpfs pages: libksym's snapshot)", "MB", m(p["f"]), m(q["f"]))
    b = {"t": [], "a": [], "f": []}
    k = {"t": [], "a": [], "f": []}
    for _ in range(runs):
        for env, d in ((plain, b), (preloaded, k)):
            ms, anon, file = bpftrace_once(addr, env)
            d["t"].append(ms)
            d["a"].append(anon)
            d["f"].append(file)
    print("| bpftrace %s: the first `ksym()` | | | |" % version)
    row("time", "ms", m(b["t"]), m(k["t"]))
    row("private (anonymous) RSS added", "MB", m(b["a"]), m(k["a"]))
    row("shared RSS added (file-backed and tmpfs pages)", "MB", m(b["f"]), m(k["f"]))
    subprocess.run(["rm", "-rf", snap])


if len(sys.argv) == 3 and sys.argv[1] == "--one":
    one(int(sys.argv[2], 16))
elif len(sys.argv) == 3:
    main()
else:
    sys.stderr.write(__doc__)
    sys.exit(2)
