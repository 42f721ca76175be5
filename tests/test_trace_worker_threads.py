"""Worker threads in trace-derived profiles: Score-P grafts a worker's call paths below its
master's parallel region, and a worker's inclusive time at the call paths above (which it
never visits) is what it did below them, its exclusive time there zero. Before, those call
paths had no time on workers, so inclusive `time` was smaller than its children's and the
analysis' `omp_time` (OpenMP regions' exclusive time) exceeded `time` on jacobi-hybrid."""

from __future__ import annotations

import numpy as np
import pytest

import cubescale

TRACES = ["openmp-nested", "jacobi-hybrid"]


def anchor(shared_data, name):
    return str(next((shared_data / "otf2" / name).glob("*.otf2")))


@pytest.mark.parametrize("name", TRACES)
def test_inclusive_time_holds_its_children(shared_data, name):
    r = cubescale.trace.profile(anchor(shared_data, name))
    incl, excl = r.values("time", inclusive=None), r.values("time", inclusive=False)
    visits = r.values("visits", inclusive=None)
    scale = float(incl.max())
    assert excl.min() >= -1e-12 * scale  # never less than its children (rounding aside)
    parents = np.asarray(r.cnode_parents)
    grafted = 0
    for c in range(len(parents)):
        children = np.flatnonzero(parents == c)
        unvisited = visits[c] == 0
        if not children.size or not unvisited.any():
            continue
        below = incl[children][:, unvisited].sum(axis=0)
        assert np.allclose(incl[c, unvisited], below, rtol=1e-12, atol=1e-12 * scale)
        grafted += int((below > 0).sum())
    assert grafted > 0  # the traces have worker threads below a parallel region


@pytest.mark.parametrize("name", TRACES)
def test_analysis_metric_children_within_parents(shared_data, tmp_path, name):
    r = cubescale.analyze(anchor(shared_data, name), tmp_path / "scout.cubex")
    totals = r.metric_totals()
    names = [m.name for m in r.metrics]
    time = names.index("time")
    for i, m in enumerate(r.metrics):
        parent = r.metrics[m.parent] if m.parent is not None else None
        if parent is None or m.unit != parent.unit:
            continue
        # stored values include the children's (CubeLib's rule): a child never exceeds its parent
        assert totals[i] <= totals[names.index(parent.name)] * (1 + 1e-12) + 1e-12, (m.name, parent.name)
    if "omp_time" in names:
        assert totals[names.index("omp_time")] <= totals[time]
