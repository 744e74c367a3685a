#!/usr/bin/python3
"""bcc's Python module through libksym-bcc's interposer, checked in the same
process against the real libbcc (the oracle), with libksym-bcc's counter as
the proof that every answer came from libksym.

Run with LD_LIBRARY_PATH=BUILD/ksym-bcc (the interposer), by /usr/bin/python3
(the one bcc's module is installed for):

  pyksym.py sweep [EVERY]      BPF.ksym(addr, show_module, show_offset) of every
                               EVERY-th address of /proc/kallsyms, one below and
                               one above it, and BPF.ksymname of a sample of names
  pyksym.py plain TOOL ARGS... runs bcc's tool TOOL as it is (no interposer may
                               be loaded): the output to compare with
  pyksym.py tool TOOL ARGS...  runs bcc's tool TOOL (a Python script) in this
                               process with BPF.sym wrapped (BPF.ksym is
                               BPF.sym(addr, -1)): each kernel answer it gets is
                               compared with the real libbcc's for the same
                               address at the same moment

The real libbcc is the one the interposer depends on (found in
/proc/self/maps): opened again by its path, the same loaded object answers
with bcc's own functions. Counts must match exactly: libksym-bcc's
ksym_bcc_counts() rises by one per BPF.ksym call and per kernel name looked
up. The last line says what was compared; the exit status is 1 on any
difference.
"""
import time

STARTED = time.monotonic()

import ctypes as ct  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import runpy  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402


def fail(msg):
    sys.stderr.write("pyksym: FAIL: %s\n" % msg)
    sys.exit(1)


def run_tool(argv):
    """Runs bcc's tool argv[0] in this process, as `python3 TOOL ARGS` would.
    SIGINT ends it as Ctrl-C does (a shell starts background commands with
    SIGINT ignored, and Python leaves an ignored SIGINT ignored). Each probe
    attached writes "pyksym: attached N s after start" on stderr (what a
    test waits for before it starts the workload; N: the tool's start-up,
    its C compiled by clang, from before bcc's module is imported)."""
    from bcc import BPF
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("attach_kprobe", "attach_perf_event"):
        def attached(self, *args, _orig=getattr(BPF, name), **kw):
            r = _orig(self, *args, **kw)
            sys.stderr.write("pyksym: attached %.1f s after start\n" % (time.monotonic() - STARTED))
            sys.stderr.flush()
            return r
        setattr(BPF, name, attached)
    sys.argv = argv
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            fail("%s exited with %s" % (argv[0], e.code))
    except KeyboardInterrupt:
        pass
    sys.stdout.flush()


from bcc import BPF, libbcc  # noqa: E402

lib = libbcc.lib


def mapped(prefix):
    """Paths of the mapped files whose name starts with prefix."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and os.path.basename(parts[5]).startswith(prefix) and parts[5] not in out:
                out.append(parts[5])
    return out


shims = mapped("libksym-bcc.so")
interposers = [p for p in mapped("libbcc.so.0") if "/ksym-bcc/" in p]
reals = [p for p in mapped("libbcc.so.0") if "/ksym-bcc/" not in p]
if len(sys.argv) >= 3 and sys.argv[1] == "plain":
    if shims or interposers:
        fail("the plain run has libksym-bcc in it: %s" % (shims + interposers))
    run_tool(sys.argv[2:])
    sys.exit(0)
if not shims or not interposers:
    fail("bcc's module did not load the interposer (LD_LIBRARY_PATH=BUILD/ksym-bcc?): %s" % mapped("lib"))
if len(reals) != 1:
    fail("expected one real libbcc in the process, found %s" % reals)
real = ct.CDLL(reals[0])
real.bcc_symcache_new.restype = ct.c_void_p
real.bcc_symcache_new.argtypes = [ct.c_int, ct.c_void_p]
real.bcc_symcache_resolve_no_demangle.argtypes = [ct.c_void_p, ct.c_ulonglong, ct.POINTER(libbcc.bcc_symbol)]
real.bcc_symcache_resolve.argtypes = [ct.c_void_p, ct.c_ulonglong, ct.POINTER(libbcc.bcc_symbol)]
real.bcc_symcache_resolve_name.argtypes = [ct.c_void_p, ct.c_char_p, ct.c_char_p, ct.POINTER(ct.c_ulonglong)]
if ct.cast(real.bcc_symcache_new, ct.c_void_p).value == ct.cast(lib.bcc_symcache_new, ct.c_void_p).value:
    fail("bcc's module and the real libbcc have the same bcc_symcache_new: nothing is interposed")
real_cache = real.bcc_symcache_new(-1, None)
counts = (ct.c_uint64 * 3)()


def counted():
    lib.ksym_bcc_counts(counts)
    return list(counts)


def real_ksym(addr, show_module=False, show_offset=False, demangle=False):
    """The text of BPF.sym(addr, -1, ...) (BPF.ksym: demangle off) from the
    real libbcc, as bcc's SymbolCache.resolve and BPF.sym make it."""
    sym = libbcc.bcc_symbol()
    resolve = real.bcc_symcache_resolve if demangle else real.bcc_symcache_resolve_no_demangle
    if resolve(real_cache, addr, ct.byref(sym)) < 0:
        if sym.module and sym.offset:
            name, offset, module = None, sym.offset, ct.cast(sym.module, ct.c_char_p).value
        else:
            name, offset, module = None, addr, None
    else:
        # Kernel symbols are never demangled: demangle_name is the name.
        name = sym.demangle_name if demangle else sym.name
        offset, module = sym.offset, ct.cast(sym.module, ct.c_char_p).value
    offset = b"+0x%x" % offset if show_offset and name is not None else b""
    name = (name or b"[unknown]") + offset
    module = b" [%s]" % os.path.basename(module) if show_module and module is not None else b""
    return name + module


def real_ksymname(name):
    addr = ct.c_ulonglong()
    if real.bcc_symcache_resolve_name(real_cache, None, name, ct.byref(addr)) < 0:
        return -1
    return addr.value


version = os.path.basename(os.path.realpath(reals[0]))
differ = []


def sweep(every):
    lines = []
    with open("/proc/kallsyms") as f:
        for line in f:
            p = line.split()
            lines.append((int(p[0], 16), p[2]))
    rng = random.Random(7)
    before = counted()
    asked = found = 0
    for i in range(0, len(lines), every):
        a = lines[i][0]
        for q in (a - 1, a, a + 1, a + rng.randrange(64)):
            q &= (1 << 64) - 1
            flags = (asked % 2 == 0, asked % 3 != 0)
            got, want = BPF.ksym(q, *flags), real_ksym(q, *flags)
            asked += 1
            found += not got.startswith(b"[unknown]")
            if got != want:
                differ.append("ksym(%#x): libksym-bcc %r, bcc %r" % (q, got, want))
    # bcc rebuilds its map of every name at each lookup: 40 names, fewer
    # when sampling (each costs seconds under emulation).
    names = [n for _, n in rng.sample(lines, min(max(40 // every, 2), len(lines)))] + ["no_such_symbol", "vfs_read"]
    for n in names:
        got, want = BPF.ksymname(n), real_ksymname(n.encode())
        if got != want:
            differ.append("ksymname(%s): libksym-bcc %#x, bcc %#x" % (n, got, want))
    after = counted()
    if after[0] - before[0] != asked or after[1] - before[1] != found or after[2] - before[2] != len(names):
        differ.append("libksym-bcc counted %s answers, BPF.ksym/ksymname were asked %d addresses (%d found), %d names"
                      % ([x - y for x, y in zip(after, before)], asked, found, len(names)))
    return "%d addresses (%d with a symbol) and %d names" % (asked, found, len(names))


def tool(argv):
    # BPF.ksym is BPF.sym(addr, -1, ...); trace calls BPF.sym(addr, -1, ...)
    # itself: BPF.sym is where every kernel answer passes.
    orig = BPF.sym
    stats = {"asked": 0, "found": 0}

    def sym(addr, pid, show_module=False, show_offset=False, demangle=True):
        got = orig(addr, pid, show_module, show_offset, demangle)
        if pid >= 0:
            return got
        want = real_ksym(addr, show_module, show_offset, demangle)
        stats["asked"] += 1
        stats["found"] += not got.startswith(b"[unknown]")
        if got != want:
            differ.append("sym(%#x, %d): libksym-bcc %r, bcc %r" % (addr, pid, got, want))
        return got

    BPF.sym = staticmethod(sym)
    before = counted()
    run_tool(argv)
    after = counted()
    if after[0] - before[0] != stats["asked"] or after[1] - before[1] != stats["found"]:
        differ.append("libksym-bcc counted %s, the tool asked BPF.ksym %d addresses (%d found)"
                      % ([x - y for x, y in zip(after, before)], stats["asked"], stats["found"]))
    if stats["found"] == 0:
        differ.append("the tool printed no kernel symbol")
    return "%s: %d kernel addresses (%d with a symbol)" % (os.path.basename(argv[0]), stats["asked"], stats["found"])


if len(sys.argv) >= 2 and sys.argv[1] == "sweep":
    what = sweep(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
elif len(sys.argv) >= 3 and sys.argv[1] == "tool":
    what = tool(sys.argv[2:])
else:
    sys.stderr.write(__doc__)
    sys.exit(2)
sys.stdout.flush()
for d in differ[:10]:
    sys.stderr.write("  %s\n" % d)
if differ:
    fail("%s: %d differ from %s's answers" % (what, len(differ), version))
sys.stderr.write("pyksym: %s through libksym-bcc, each the same as %s's in this process; libksym-bcc counted "
                 "every one\n" % (what, version))
