"""`cubescale trace-profile --threads`: the profile of a multi-threaded OTF2 trace (OpenMP,
10 threads) with every process's threads aggregated keeps its totals and names Score-P's
locations."""

from __future__ import annotations

import numpy as np
import pytest

import cubescale
from cubescale.cli import main


@pytest.mark.parametrize("strategy,names", [("key", {"master thread", "fastest thread", "slowest thread",
                                                      "aggregated worker threads"}),
                                             ("sum", {"aggregated threads"})])
def test_trace_profile_with_thread_aggregation(shared_data, tmp_path, strategy, names):
    trace = str(shared_data / "otf2" / "openmp-nested" / "traces.otf2")
    full, aggregated = tmp_path / "full.cubex", tmp_path / f"{strategy}.cubex"
    assert main(["trace-profile", trace, "-o", str(full), "--serial"]) == 0
    assert main(["trace-profile", trace, "-o", str(aggregated), "--serial", "--threads", strategy]) == 0
    a, b = cubescale.open(aggregated), cubescale.open(full)
    assert {loc.name for loc in a.locations} == names
    assert a.shape[1] < b.shape[1]
    for metric in ("visits", "time"):
        x, y = a.values(metric, inclusive=False).sum(), b.values(metric, inclusive=False).sum()
        assert np.isclose(x, y, rtol=1e-12), metric
