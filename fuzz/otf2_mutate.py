"""Mutation fuzzing of OTF2 reading: copies of the shared traces with random bytes changed
or cut in one definition or event file must read into events, a profile, a timeline or a
clear :class:`cubescale.FormatError`; a crash (signal), a hang, a MemoryError under the
child's 512 MiB limit or any other exception is a finding.

OTF2 files are read by the OTF2 library from disk, so libFuzzer's in-memory inputs do not
apply: every case runs in a child process (a crash in C must not end the fuzzer), several
cases per child to keep process start-up out of the budget. A finding is kept under
``OUT/otf2-finding-<seed>-<case>/`` with the command that reproduces it.

    python3 fuzz/otf2_mutate.py SECONDS [OUT]            # seed 1, as in CI
    FUZZ_SEED=random python3 fuzz/otf2_mutate.py 600      # explore
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES_PER_CHILD = 8

# The child: reads each trace it is given as the commands do; prints "ok" per case.
CHILD = r"""
import faulthandler
import resource
import sys
faulthandler.enable()
# A runaway allocation is a MemoryError with a traceback here, not the OOM killer's silent
# kill; 512 MiB (Python with NumPy and pandas takes about 160 of it) so that reading a few MB
# of trace into a few hundred MB is a finding too (issue #30: a forged event count).
resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
import cubescale
from cubescale import trace
for anchor in sys.argv[1:]:
    try:
        t = trace.open(anchor)
        _ = t.regions, t.locations, t.warnings, t.sequence_tree()
        t.events()
        trace.profile(anchor)
        t.timelines()
    except cubescale.FormatError:
        pass
    print("ok", flush=True)
"""


def traces(data: Path) -> list[Path]:
    return sorted(p.parent for p in data.glob("otf2/*/*.otf2"))


def task_trace(into: Path) -> Path:
    """A trace with OpenMP task events, which no shared trace has (tied tasks at a taskwait,
    untied ones that suspend each other): the reader's and profile's per-task stacks."""
    from cubescale import testing
    into.mkdir(parents=True)
    threads = [
        [("task_create", 110, 120, 0, 1), ("enter", 200, "ibarrier"), ("task_begin", 210, 0, 1, False),
         ("enter", 220, "work"), ("enter", 230, "taskwait"), ("task_begin", 240, 0, 2, True), ("enter", 250, "work"),
         ("task_begin", 260, 0, 3, True), ("task_switch", 270, 0, 2), ("leave", 280, "work"),
         ("task_end", 290, 0, 2, True), ("task_switch", 300, 0, 3), ("task_end", 310, 0, 3, True),
         ("task_switch", 320, 0, 1), ("leave", 330, "taskwait"), ("leave", 340, "work"),
         ("task_end", 350, 0, 1, False), ("task_switch", 360, 0, 0), ("leave", 400, "ibarrier")],
        [("ibarrier", 300, 400)]]
    testing.write_omp_trace(into, "tasks", [{"fork": 100, "join": 1000, "threads": threads}], threads=2, end=1100,
                            main=(0, 1100))
    return into


def mutate(trace: Path, into: Path, rng: random.Random) -> str:
    """A copy of `trace` at `into` with one .def or .evt file changed; returns what changed."""
    shutil.copytree(trace, into)
    files = sorted(p for p in into.rglob("*") if p.suffix in (".def", ".evt"))
    target = rng.choice(files)
    data = bytearray(target.read_bytes())
    what = []
    for _ in range(rng.randint(1, 8)):
        if data:
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
            what.append(f"byte {at}")
    if data and rng.random() < 0.3:
        cut = rng.randrange(len(data) + 1)
        del data[cut:]
        what.append(f"cut at {cut}")
    target.write_bytes(bytes(data))
    return f"{target.relative_to(into)}: {', '.join(what)}"


def main(argv: list[str]) -> int:
    seconds = float(argv[0]) if argv else 60.0
    out = Path(argv[1]) if len(argv) > 1 else Path("build/fuzz")
    data = Path(os.environ.get("CUBESCALE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    sources = traces(data)
    if not sources:
        print(f"otf2 fuzz: no traces under {data}/otf2, skipped")
        return 0
    # A fixed seed by default so that CI runs the same cases every time (a new finding fails a
    # change that did not cause it otherwise); FUZZ_SEED=random explores.
    chosen = os.environ.get("FUZZ_SEED", "1")
    seed = time.time_ns() % 1_000_000_007 if chosen == "random" else int(chosen)
    rng = random.Random(seed)
    end = time.monotonic() + seconds
    cases = 0
    with tempfile.TemporaryDirectory() as work:
        sources.append(task_trace(Path(work) / "seed-tasks"))
        batch = 0
        while time.monotonic() < end:
            batch += 1
            dirs, changes = [], []
            for k in range(CASES_PER_CHILD):
                d = Path(work) / f"b{batch}c{k}"
                changes.append(mutate(rng.choice(sources), d, rng))
                dirs.append(d)
            anchors = [str(next(d.glob("*.otf2"))) for d in dirs]
            try:
                done = subprocess.run([sys.executable, "-c", CHILD, *anchors], capture_output=True, text=True,
                                      timeout=120, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
                failed = done.returncode != 0
                detail = f"{done.stderr[-2000:]}\nexit status {done.returncode}"
                passed = done.stdout.count("ok")
            except subprocess.TimeoutExpired as e:  # what the child printed tells which case hung
                partial = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                failed, detail, passed = True, "timed out after 120 s (a hang)", partial.count("ok")
            if failed:
                bad = min(passed, len(dirs) - 1)  # the case the child was in
                keep = out / f"otf2-finding-{seed}-{cases + bad}"
                shutil.rmtree(keep, ignore_errors=True)
                shutil.rmtree(keep.with_name(f"{keep.name}-batch"), ignore_errors=True)
                shutil.copytree(dirs[bad], keep)
                for k, d in enumerate(dirs):  # state left by earlier cases of the child may matter
                    shutil.copytree(d, keep.with_name(f"{keep.name}-batch") / str(k))
                print(f"otf2 fuzz: FINDING (seed {seed}) in {changes[bad]}\n{detail}\n"
                      f"kept in {keep}; reproduce: python3 -c '{CHILD.strip()}' {next(keep.glob('*.otf2'))}")
                return 1
            cases += len(dirs)
            for d in dirs:
                shutil.rmtree(d)
    print(f"otf2 fuzz (mutated traces, seed {seed}): no findings in {cases} cases, {seconds:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
