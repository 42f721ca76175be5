"""Benchmark: load every metric of .cubex reports, cubescale vs pycubexr, against "the limit".

For every shared report and one generated large report (written by our writer) it prints:

* ours      — ``cubescale.open(path)`` and decode every metric (``Report.load_all``);
* pycubexr  — ``CubexParser(path)`` and ``get_metric_values`` for every metric it can read;
* limit     — reading the file's bytes and inflating its compressed parts (gzip anchor,
              ZCUBEX rows): what any reader must at least do;

and, for the large report, inclusive -> exclusive of its largest metric against NumPy doing
an element-wise sum (``a + a``, same memory traffic) and a reduction (``a.sum()``) over the
same array: once into fresh memory (``values(...)`` against ``a + a``) and once into a buffer
that is reused (``values(..., out=b)`` against ``np.add(a, a, out=b)``); and exclusive ->
inclusive of the same values stored EXCLUSIVE in an in-memory report. Times are the best of ``--repeat`` runs (2 for the large report), page cache
warm, garbage collector off during a run (as timeit does).

Run (from the repository root, with a build in build-cube)::

    CUBESCALE_DEV_BUILD=build-cube PYTHONPATH=python python3 benchmarks/cubex_read.py

Benchmarks are not tests: they print a table and exit 0.
"""

from __future__ import annotations

import argparse
import gc
import glob
import gzip
import os
import struct
import sys
import tempfile
import time
import zlib

import numpy as np

import cubescale


def best_of(repeat: int, fn) -> float:
    """Best time of `repeat` calls, with the garbage collector off while one runs (as timeit
    does): a collection inside one reader's run would be charged to it by chance."""
    best = float("inf")
    for _ in range(repeat):
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


# ------------------------------------------------------------------------------ readers

def load_ours(path: str) -> None:
    cubescale.open(path).load_all()


def load_pycubexr(path: str) -> int:
    """Loads every metric pycubexr can read; returns how many it could not."""
    from pycubexr import CubexParser

    failed = 0
    with CubexParser(path) as parsed:
        for metric in parsed.all_metrics():
            try:
                parsed.get_metric_values(metric, cache=False)
            except Exception:  # noqa: BLE001 (pycubexr raises several kinds for unsupported types)
                failed += 1
    return failed


def tar_members(data) -> list[tuple[str, int, int]]:
    """(name, data offset, size) of every member of a ustar archive held in `data` (bytes, or
    an mmap of the file), from its 512-byte headers."""
    members = []
    offset = 0
    while offset + 512 <= len(data) and data[offset:offset + 512].strip(b"\0"):
        header = data[offset:offset + 512]
        size = int(header[124:136].strip(b"\0 ") or b"0", 8)
        members.append((header[:100].rstrip(b"\0").decode(), offset + 512, size))
        offset += 512 + (size + 511) // 512 * 512
    return members


def load_limit(path: str) -> None:
    """Read the bytes and inflate what is compressed: no reader can do less."""
    with open(path, "rb") as f:
        data = f.read()
    for _, offset, size in tar_members(data):
        body = memoryview(data)[offset:offset + size]
        if bytes(body[:2]) == b"\x1f\x8b":
            gzip.decompress(body)
        elif bytes(body[:11]) == b"ZCUBEX.DATA":
            inflate_zcubex(body)


def inflate_zcubex(body: memoryview) -> None:
    count = struct.unpack_from("<q", body, 11)[0]
    if count < 0 or count > len(body):  # big-endian file
        count = struct.unpack_from(">q", body, 11)[0]
        table = struct.unpack_from(f">{3 * count}q", body, 19)
    else:
        table = struct.unpack_from(f"<{3 * count}q", body, 19)
    streams = 19 + 24 * count
    for k in range(count):
        _, coff, csize = table[3 * k:3 * k + 3]
        if csize:
            zlib.decompress(body[streams + coff:streams + coff + csize])


# ------------------------------------------------------------------------------ large report

def generated_anchor(cnodes: int, nodes: int, processes: int, threads: int, seed: int = 1) -> tuple[str, np.ndarray]:
    """anchor.xml text of a synthetic run and its cnode parents (random tree, preorder)."""
    rng = np.random.default_rng(seed)
    parents = np.full(cnodes, -1, dtype=np.int64)
    path = [0]
    for i in range(1, cnodes):  # parent on the current path: the result is in preorder
        depth = int(rng.integers(0, min(len(path), 12)))
        del path[depth + 1:]
        parents[i] = path[-1]
        path.append(i)
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n\n<cube version="4.4">\n<metrics>\n',
           '<metric id="0" type="INCLUSIVE">\n<disp_name>Time</disp_name>\n<uniq_name>time</uniq_name>\n'
           '<dtype>DOUBLE</dtype>\n<uom>sec</uom>\n<url></url>\n<descr></descr>\n</metric>\n',
           '<metric id="1" type="EXCLUSIVE">\n<disp_name>Visits</disp_name>\n<uniq_name>visits</uniq_name>\n'
           '<dtype>UINT64</dtype>\n<uom>occ</uom>\n<url></url>\n<descr></descr>\n</metric>\n</metrics>\n<program>\n']
    out += [f'<region id="{r}" mod="app.c" begin="{r}" end="{r + 1}">\n<name>f{r}</name>\n</region>\n'
            for r in range(cnodes)]
    open_path: list[int] = []
    for i in range(cnodes):
        while open_path and open_path[-1] != parents[i]:
            out.append("</cnode>\n")
            open_path.pop()
        out.append(f'<cnode id="{i}" calleeId="{i}">\n')
        open_path.append(i)
    out += ["</cnode>\n"] * len(open_path)
    out.append('</program>\n<system>\n<systemtreenode Id="0">\n<name>machine</name>\n<class>machine</class>\n')
    group = location = 0
    for n in range(nodes):
        out.append(f'<systemtreenode Id="{n + 1}">\n<name>node{n:05d}</name>\n<class>node</class>\n')
        for _ in range(processes):
            out.append(f'<locationgroup Id="{group}">\n<name>rank {group}</name>\n<rank>{group}</rank>\n'
                       f'<type>process</type>\n')
            for t in range(threads):
                out.append(f'<location Id="{location}">\n<name>thread {t}</name>\n<rank>{t}</rank>\n'
                           f'<type>thread</type>\n</location>\n')
                location += 1
            out.append("</locationgroup>\n")
            group += 1
        out.append("</systemtreenode>\n")
    out.append("</systemtreenode>\n<topologies>\n</topologies>\n</system>\n</cube>\n")
    return "".join(out), parents


def write_large_report(path: str, cnodes: int, nodes: int, processes: int, threads: int,
                       visit_rows: float = 0.1) -> cubescale.Report:
    """Writes a generated report: 'time' (DOUBLE, INCLUSIVE, every row random) and 'visits'
    (UINT64, EXCLUSIVE, 7 in about a `visit_rows` fraction of the rows, the others left out)."""
    xml, _ = generated_anchor(cnodes, nodes, processes, threads)
    report = cubescale.Report.from_anchor_xml(xml)
    rng = np.random.default_rng(2)
    shape = report.shape
    report.set_values("time", rng.random(shape))
    visits = np.zeros(shape, dtype=np.uint64)
    visits[rng.random(shape[0]) < visit_rows] = 7  # by default sparse: most rows all zero and left out
    report.set_values("visits", visits)
    del visits
    cubescale.write(report, path)
    return report


def convert_times(report: cubescale.Report, inclusive: bool, buffer: np.ndarray, repeat: int) -> tuple[float, float]:
    """Best times of converting 'time' into a fresh array and into the reused ``buffer``."""
    fresh = best_of(repeat, lambda: report.values("time", inclusive=inclusive))
    reused = best_of(repeat, lambda: report.values("time", inclusive=inclusive, out=buffer))
    return fresh, reused


# ------------------------------------------------------------------------------ table

def row(name: str, size: int, ours: float, theirs: float | None, limit: float, note: str = "") -> str:
    speedup = f"{theirs / ours:8.1f}x" if theirs else "       -"
    theirs_text = f"{theirs * 1e3:10.2f}" if theirs else "         -"
    return (f"{name:34s} {size / 1e6:9.2f} {ours * 1e3:10.2f} {theirs_text} {limit * 1e3:10.2f} "
            f"{speedup} {ours / limit:8.2f}x  {note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex"))
    parser.add_argument("--cnodes", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=512, help="nodes x processes x threads = locations")
    parser.add_argument("--processes", type=int, default=32)
    parser.add_argument("--threads", type=int, default=4)
    # Runs of a small file take 0.04-1 ms: with 20 of them the best still varied by 10-20%
    # between invocations on this VM; 200 settle it within a few percent.
    parser.add_argument("--repeat", type=int, default=200,
                        help="runs per reader and shared file (best counts); the large report runs twice")
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-pycubexr", action="store_true")
    parser.add_argument("--skip-small", action="store_true", help="only the generated large report")
    parser.add_argument("--large-file", help="generate the large report here once and keep it (later runs reuse it: "
                                             "compare builds on the same file)")
    parser.add_argument("--large-repeat", type=int, default=2, help="runs of the large report (best counts)")
    parser.add_argument("--skip-convert", action="store_true", help="no inclusive <-> exclusive conversions")
    args = parser.parse_args(argv)

    print(f"{'file':34s} {'MB':>9s} {'ours ms':>10s} {'pycubexr':>10s} {'limit ms':>10s} "
          f"{'vs pycx':>9s} {'vs limit':>9s}")
    for path in [] if args.skip_small else sorted(glob.glob(os.path.join(args.data, "*.cubex"))):
        ours = best_of(args.repeat, lambda: load_ours(path))
        limit = best_of(args.repeat, lambda: load_limit(path))
        theirs, note = None, ""
        if not args.skip_pycubexr:
            try:
                failed = load_pycubexr(path)
                theirs = best_of(args.repeat, lambda: load_pycubexr(path))
                note = f"pycubexr skipped {failed} metrics" if failed else ""
            except Exception as e:  # noqa: BLE001
                note = f"pycubexr fails: {type(e).__name__}"
        print(row(os.path.basename(path), os.path.getsize(path), ours, theirs, limit, note), flush=True)

    if args.skip_large:
        return 0
    locations = args.nodes * args.processes * args.threads
    with tempfile.TemporaryDirectory() as tmp:
        path = args.large_file or os.path.join(tmp, "large.cubex")
        note = "(reused)"
        if not os.path.exists(path):
            start = time.perf_counter()
            report = write_large_report(path, args.cnodes, args.nodes, args.processes, args.threads)
            note = f"(generated and written in {time.perf_counter() - start:.1f} s)"
            del report
        gc.collect()
        repeat = args.large_repeat
        ours = best_of(repeat, lambda: load_ours(path))
        limit = best_of(repeat, lambda: load_limit(path))
        theirs = None if args.skip_pycubexr else best_of(1, lambda: load_pycubexr(path))
        name = f"generated {args.cnodes}x{locations}"
        print(row(name, os.path.getsize(path), ours, theirs, limit, note))
        if args.skip_convert:
            return 0

        report = cubescale.open(path)
        inclusive = report.values("time", inclusive=True)
        repeat = 5  # conversions take a third of a second: more runs, less noise
        total = best_of(repeat, lambda: inclusive.sum())
        fresh_add = best_of(repeat, lambda: inclusive + inclusive)
        # The reused buffer is touched once first, so that no run pays its page faults.
        buffer = report.values_like("time")
        np.add(inclusive, inclusive, out=buffer)
        reused_add = best_of(repeat, lambda: np.add(inclusive, inclusive, out=buffer))
        rows = [("incl -> excl", *convert_times(report, False, buffer, repeat))]
        # The same values stored EXCLUSIVE in an in-memory report, for the other direction.
        xml, _ = generated_anchor(args.cnodes, args.nodes, args.processes, args.threads)
        stored_exclusive = cubescale.Report.from_anchor_xml(
            xml.replace('<metric id="0" type="INCLUSIVE">', '<metric id="0" type="EXCLUSIVE">', 1))
        stored_exclusive.set_values("time", report.values("time", inclusive=False, out=buffer))
        del report  # its cached matrices: keep the memory in use as in the first direction
        rows.append(("excl -> incl", *convert_times(stored_exclusive, True, buffer, repeat)))
        print()
        print(f"inclusive <-> exclusive of 'time' ({inclusive.nbytes / 1e6:.0f} MB), best of {repeat}; "
              f"NumPy a.sum(): {total * 1e3:.1f} ms")
        print()
        print("| conversion | output | ours | NumPy a + a | ours / a + a | ours / a.sum() |")
        print("|---|---|---:|---:|---:|---:|")
        for label, fresh, reused in rows:
            for output, mine, numpy_add in (("fresh array vs `a + a`", fresh, fresh_add),
                                            ("reused buffer (`out=b`) vs `np.add(a, a, out=b)`", reused, reused_add)):
                print(f"| {label} | {output} | {mine * 1e3:.1f} ms | {numpy_add * 1e3:.1f} ms | "
                      f"{mine / numpy_add:.2f}x | {mine / total:.2f}x |")
        buffer = inclusive = stored_exclusive = None  # freed before the next table
    return 0


if __name__ == "__main__":
    sys.exit(main())
