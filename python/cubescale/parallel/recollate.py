"""A report collated again by any number of ranks (the Scalasca architecture paper, section 4.3): every rank reads
the report's definitions, takes a contiguous block of its processes (balanced by their
locations) and their values, and the ranks unify and collate them into one ``.cubex``.

What it is for: a check that collation does not depend on how the processes are spread over
ranks (the same report gives the same file byte for byte for every number of ranks), and a
parallel rewrite of a report (other compression, canonical order of definitions). The machine
is the report's own (names, ``<rank>``s and order kept), so no system-tree build is needed.
Each rank decodes whole metric matrices and keeps its columns: memory per rank grows with
the report, not with its share.

Example
-------
>>> import os, tempfile
>>> from mpi4py import MPI
>>> import cubescale
>>> source = cubescale.examples.report_path()
>>> out = os.path.join(tempfile.mkdtemp(), "again.cubex")
>>> costs = recollate(MPI.COMM_SELF, source, out)
>>> costs["groups"], cubescale.open(out).shape == cubescale.open(source).shape
((0, 4), True)
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from ..profile import LocalProfile
from .collective import agree, agree_with_root, output_refused
from .known_machine import KnownMachine, collate_on_known_machine, share_of_groups

__all__ = ["process_sizes", "recollate"]


def process_sizes(report) -> np.ndarray:
    """The number of locations (columns) of each location group (process) of a loaded report,
    in the report's order; a group's columns follow each other (system-tree order).

    Example
    -------
    >>> import cubescale
    >>> process_sizes(cubescale.open(cubescale.examples.report_path())).tolist()
    [5, 5, 5, 5]
    """
    groups = np.asarray(report._core.location_group_elements(), dtype=np.int64)
    locations = np.asarray(report._core.location_elements(), dtype=np.int64)
    # In depth-first order a location's group is the nearest group element before it.
    group_of = np.searchsorted(groups, locations, side="right") - 1
    return np.bincount(group_of, minlength=len(groups))


def recollate(comm, source: str | os.PathLike, output: str | os.PathLike, *, compress: bool = False,
              block_bytes: int = 1 << 20, progress: Any = None) -> dict:
    """Collective over ``comm``: the report at ``source`` collated again into ``output``
    (rank 0 writes), rank r holding a contiguous block of its processes. Returns this rank's
    ``groups`` (its block), ``locations`` and costs per phase. An error on any rank is raised
    on every rank and leaves no file.

    Example
    -------
    >>> import os, tempfile
    >>> from mpi4py import MPI
    >>> import cubescale
    >>> source = cubescale.examples.report_path()
    >>> out = os.path.join(tempfile.mkdtemp(), "again.cubex")
    >>> recollate(MPI.COMM_SELF, source, out)["locations"]
    20
    >>> [loc.process for loc in cubescale.open(out).locations][::5]
    ['MPI Rank 0', 'MPI Rank 1', 'MPI Rank 2', 'MPI Rank 3']
    """
    import cubescale

    start = time.perf_counter()
    agree_with_root(comm, output_refused(comm, output, [os.fspath(source)]))
    error: BaseException | None = None
    report = profile = None
    block, columns = (0, 0), []
    try:
        report = cubescale.open(source)
        sizes = process_sizes(report)
        block = share_of_groups(sizes, comm.size, comm.rank)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        columns = list(range(int(starts[block[0]]), int(starts[block[1]])))
        profile = LocalProfile.from_report_columns(report, columns)
    except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
        error = e
    agree(comm, error)
    assert report is not None and profile is not None
    read_seconds = time.perf_counter() - start

    def machine() -> KnownMachine:  # the report's own: names, order and <rank>s kept
        return KnownMachine(report.system, np.asarray(report._core.location_group_ranks()).tolist())

    unified, costs = collate_on_known_machine(comm, profile, output, machine, columns[0] if columns else 0,
                                              len(columns), block[0], compress, block_bytes, progress)
    return {"groups": block, "locations": len(columns), "read_seconds": read_seconds, "unify": unified.stats,
            "collate": costs, "seconds": time.perf_counter() - start}
