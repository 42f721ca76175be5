"""Collective algorithms over any mpi4py communicator.

This layer only moves the byte strings and arrays that the C++ core produces and consumes;
mpi4py is imported lazily, so exploring a report never needs MPI.

* :func:`build_system_tree` — the distributed construction of sequence definitions
  (the Score-P system-description paper, section 4) with every rank's global location indices;
* :func:`build_system_tree_naive` — the baseline: gather every view to rank 0 and fold there;
* :func:`simulate_system_tree` — the same kernels for P virtual ranks in one process;
* :func:`regular_view` — one rank's view of a regular machine shape (tests, benchmarks);
* :func:`unify` — global definitions and local -> global maps from every rank's
  :class:`~cubescale.profile.LocalProfile` (the Scalasca architecture paper, section 4.3);
* :func:`collate` and :func:`write_report` — every rank's values into one ``.cubex`` with
  the writer's buffers bounded (the CUBE collation paper, section 3);
* :func:`recollate` — a report collated again by any number of ranks, each holding a block of
  its processes (the same file for every number of ranks);
* :func:`collate_reports` — one-process reports of a run (``cubescale_write()``) into one report
  by up to one rank per report;
* :func:`evaluate_staged` — metric expressions with ``aggregate`` over the system tree,
  partial timelines of bounded size reduced along a tree (the Vampir hardware-levels paper).

Example
-------
>>> from mpi4py import MPI
>>> from cubescale.parallel import build_system_tree, regular_view
>>> result = build_system_tree(MPI.COMM_SELF, regular_view("node:1 process:1 thread:2", 0))
>>> result.tree.render(), result.location_indices.tolist()
('machine ×1 > node ×1 > process ×1 > thread ×2', [0, 1])
"""

from __future__ import annotations

from .collate import collate, write_report
from .collate_reports import collate_reports
from .collective import CollectiveError
from .naive import build_system_tree_naive
from .recollate import recollate
from .simulate import simulate_system_tree
from .systree import DistributedSystemTree, build_system_tree
from .timeline import evaluate_staged, evaluate_trace
from .unify import Unification, unify
from .views import regular_view

__all__ = [
    "CollectiveError",
    "DistributedSystemTree",
    "Unification",
    "collate",
    "collate_reports",
    "recollate",
    "unify",
    "write_report",
    "evaluate_staged",
    "evaluate_trace",
    "build_system_tree",
    "build_system_tree_naive",
    "regular_view",
    "simulate_system_tree",
]
