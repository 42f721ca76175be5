"""`cubescale demo --trace`: the bundled solver traced under mpirun (2 ranks, a few iterations
to stay quick), the trace analyzed for wait states, and the summary says where the processes
wait and whom they wait for: the last rank, which the demo gives 60 % more rows."""

from __future__ import annotations

import os
import subprocess
import sys

import cubescale


def test_demo_trace_shows_who_waits_for_whom(tmp_path):
    out = tmp_path / "demo.cubex"
    done = subprocess.run([sys.executable, "-m", "cubescale", "demo", "-o", str(out), "--ranks", "2",
                           "--iterations", "12", "--trace"], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, env=dict(os.environ))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "measuring one process without MPI" not in done.stdout  # mpirun ran it
    anchor = tmp_path / "demo-trace" / "traces.otf2"
    waits = cubescale.open(tmp_path / "demo-waits.cubex")
    assert {loc.process_rank for loc in waits.locations} == {0, 1}
    # The first rank waits more than the last in MPI (it has fewer rows); the summary names the last.
    late = sum(waits.values(m, inclusive=False) for m in ("mpi_latesender", "mpi_wait_nxn")
               if m in {x.name for x in waits.metrics})
    per_rank = {g: float(late[:, [loc.index for loc in waits.locations if loc.process_rank == g]].sum())
                for g in (0, 1)}
    assert per_rank[0] > per_rank[1], per_rank
    assert "MPI Rank 1 works most" in done.stdout and "the others wait for it" in done.stdout, done.stdout
    assert f"cubescale view {tmp_path / 'demo-waits.cubex'}" in done.stdout
    assert anchor.is_file()
