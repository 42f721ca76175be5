"""cubescale: small, fast, explorable performance data of very large parallel runs.

The package is a Pythonic layer over the C++ core ``cubescale._core``:

* :mod:`cubescale.systree` — system trees in single-node and sequence form (constant size
  on regular machines), enumeration without expansion, hwloc hardware levels;
* :mod:`cubescale.report` — CUBE4 reports (``.cubex``): :func:`open`, :func:`write`, :class:`Report`;
* :mod:`cubescale.builder` — reports built by a program: :class:`ReportBuilder`;
* :mod:`cubescale.trace` — OTF2 traces: events as DataFrames, the profile of a trace;
* :mod:`cubescale.threads` — thread aggregation (sum, set, key, calltree, value);
* :mod:`cubescale.algebra` — report algebra: :func:`diff`, :func:`merge`, :func:`mean`, :func:`median`,
  :func:`cut`, :func:`common`;
* :func:`stat` and :func:`score` — flat profiles with statistics across locations (``cube_stat``)
  and trace-size estimates with filter generation (``scorep-score``);
* :mod:`cubescale.pop`, :mod:`cubescale.hatchet`, :mod:`cubescale.plots` — POP efficiencies, Hatchet and
  Thicket, figures (docs/pop.md);
* :mod:`cubescale.scale_func` — decoding SCALE_FUNC values (Extra-P scaling functions);
* :mod:`cubescale.examples` — a small report and trace that ship with the package;
* :mod:`cubescale.files` — how files are written (whole or not at all) and stale temporaries;
* :mod:`cubescale.parallel` — collective algorithms over mpi4py (imported only when used).

Example
-------
>>> import cubescale
>>> tree = cubescale.systree.SystemTree.from_shape("node:4 process:8 thread:2")
>>> tree.count("locations")
64
"""

from __future__ import annotations

import os as _os

# Developers may point at a CMake build directory holding _core (CUBESCALE_DEV_BUILD), so
# that several build trees can be tested from one source checkout without installing.
if _os.environ.get("CUBESCALE_DEV_BUILD"):
    __path__.append(_os.environ["CUBESCALE_DEV_BUILD"])  # noqa: F821 (package __path__)

from . import dtypes, examples, files, records, report, scale_func, systree, threads, trace
from .algebra import common, cut, diff, mean, median, merge  # also binds the submodule cubescale.algebra
from .analysis import analyze
from .builder import ReportBuilder
from .errors import FormatError
from .hatchet import to_thicket
from .hatchet_reader import from_hatchet
from .pop import pop  # the function; the module stays importable as cubescale.pop in sys.modules
from .records import Cnode, Location, Metric, Region
from .report import Report, open, write  # noqa: A004 (cubescale.open mirrors builtins.open)
from .score import score
from .stat import stat

__version__ = "0.1.0"
__all__ = ["Cnode", "FormatError", "Location", "Metric", "Region", "Report", "ReportBuilder", "algebra", "analyze", "common",
           "cut", "diff", "dtypes", "examples", "files", "from_hatchet", "mean", "median", "merge", "open", "pop", "records",
           "report", "scale_func", "score", "stat", "systree", "threads", "to_thicket", "trace", "write", "__version__"]
