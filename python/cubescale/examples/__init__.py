"""Small real data written by cubescale itself, shipped in the wheel: the docstring examples
and the notebooks open these, so they run after ``pip install cubescale`` without any other
data.

* :func:`report_path` — ``demo.cubex``, the report ``cubescale demo`` measured: the bundled
  stencil solver on 4 MPI ranks x (a master and 4 worker threads), 20 locations;
* :func:`trace_path` — ``ring/traces.otf2``, an OTF2 trace from cubescale's synthetic writer:
  4 MPI processes in a ring, each iterating solve > {compute, MPI_Send, MPI_Recv,
  MPI_Allreduce} with two counters (PAPI_TOT_CYC, PAPI_L2_TCM).

``scripts/make_examples.py`` in the source checkout writes both again.

Example
-------
>>> import cubescale
>>> from cubescale import examples
>>> cubescale.open(examples.report_path()).shape   # [call path, location]
(21, 20)
"""

from __future__ import annotations

import os

__all__ = ["report_path", "trace_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def report_path() -> str:
    """The shipped report ``demo.cubex`` (``cubescale demo``: 4 MPI ranks x 5 threads).

    Example
    -------
    >>> import cubescale
    >>> from cubescale.examples import report_path
    >>> cubescale.open(report_path())
    <Report demo.cubex: 6 metrics, 21 call paths, 20 locations>
    """
    return os.path.join(_HERE, "demo.cubex")


def trace_path() -> str:
    """The anchor file of the shipped OTF2 trace ``ring/traces.otf2`` (4 MPI processes).

    Example
    -------
    >>> import os
    >>> from cubescale.examples import trace_path
    >>> sorted(os.listdir(os.path.dirname(trace_path())))   # the anchor, definitions, events
    ['traces', 'traces.def', 'traces.otf2']
    """
    return os.path.join(_HERE, "ring", "traces.otf2")
