#!/usr/bin/env python3
"""Compares the tables of `make bench` runs of two builds, alternated.

    compare.py OUT_DIR

OUT_DIR holds ours.N.md and ref.N.md for rounds N = 1, 2, ...: the output
of bench/ksym_bench (markdown tables: | measurement | median | ratio |
target |). For every row both builds printed, in every round: the median
of each build's values, and the median of the per-round ratios ours/ref
(each pair measured back to back, so the machine's drift cancels out).
Rows one build lacks are listed apart. Values are read from the median
column: a number and its unit (ns, µs, us, ms, s, KB, KiB, MB, MiB, GB/s).
"""
import glob
import os
import re
import statistics
import sys

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0,
         "B": 1, "KB": 1e3, "KiB": 1024, "MB": 1e6, "MiB": 1 << 20,
         "GB/s": 1e9, "ns/name": 1e-9, "ns/call": 1e-9}
NUM = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-zµ/]+)?")


def key_of(measurement):
    """A row's name without the figures in it (`(10.9 MB)`, counts), so
    that two builds' rows match when their figures differ."""
    k = re.sub(r"\s*\([^)]*\d[^)]*\)", "", measurement)
    return re.sub(r"\s+", " ", k).strip()


def rows(path):
    """{measurement: value in base units} of one run's tables; a name seen
    again (the plain read heads several tables) gets ` #2`, ` #3`..."""
    out = {}
    section = ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("### "):
                section = line[4:].strip()
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2 or cells[0] in ("measurement", "target") or set(cells[0]) <= set("-:"):
                continue
            if section.startswith("Targets"):
                continue
            m = NUM.match(cells[1])
            if not m:
                continue
            unit = m.group(2) or ""
            scale = UNITS.get(unit)
            if scale is None:
                continue
            key = key_of(cells[0])
            n = 1
            while (f"{key} #{n}" if n > 1 else key) in out:
                n += 1
            out[f"{key} #{n}" if n > 1 else key] = float(m.group(1)) * scale
    return out


def show(v, key):
    if "GB/s" in key:
        return f"{v / 1e9:.2f} GB/s"
    if v < 1e-6:
        return f"{v * 1e9:.0f} ns"
    if v < 1e-3:
        return f"{v * 1e6:.1f} µs"
    if v < 10:
        return f"{v * 1e3:.2f} ms"
    return f"{v:.3g}"


def main():
    out = sys.argv[1]
    rounds = sorted({int(re.search(r"\.(\d+)\.md$", p).group(1))
                     for p in glob.glob(os.path.join(out, "ours.*.md"))})
    ours = [rows(os.path.join(out, f"ours.{r}.md")) for r in rounds]
    ref = [rows(os.path.join(out, f"ref.{r}.md")) for r in rounds]
    keys = [k for k in ours[0] if all(k in o for o in ours) and all(k in r for r in ref)]
    print(f"{len(rounds)} rounds, each build once per round, alternating (ref first)\n")
    print("| measurement | ref | ours | ours / ref |")
    print("|---|---:|---:|---:|")
    for k in keys:
        a = statistics.median(r[k] for r in ref)
        b = statistics.median(o[k] for o in ours)
        ratio = statistics.median(o[k] / r[k] for o, r in zip(ours, ref) if r[k] > 0) if a > 0 else float("nan")
        print(f"| {k} | {show(a, k)} | {show(b, k)} | {ratio:.3f} |")
    only_ours = sorted(set(ours[0]) - set(ref[0]))
    only_ref = sorted(set(ref[0]) - set(ours[0]))
    if only_ours:
        print("\nRows only this build prints:", *("- " + k for k in only_ours), sep="\n")
    if only_ref:
        print("\nRows only the reference prints:", *("- " + k for k in only_ref), sep="\n")


if __name__ == "__main__":
    main()
