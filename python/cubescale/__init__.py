"""cubescale: small, fast, explorable performance data of very large parallel runs.

The package is a Pythonic layer over the C++ core ``cubescale._core``:

* :mod:`cubescale.systree` — system trees in single-node and sequence form (constant size
  on regular machines), enumeration without expansion, hwloc hardware levels;
* :mod:`cubescale.report` — CUBE4 reports (``.cubex``): :func:`open`, :func:`write`, :class:`Report`;
* :mod:`cubescale.builder` — reports built by a program: :class:`ReportBuilder`;
* :mod:`cubescale.threads` — thread aggregation (sum, set, key, calltree, value);
* :mod:`cubescale.algebra` — report algebra: :func:`diff`, :func:`merge`, :func:`mean`, :func:`median`,
  :func:`cut`, :func:`common`;
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

from . import dtypes, examples, files, records, report, scale_func, systree, threads
from .algebra import common, cut, diff, mean, median, merge  # also binds the submodule cubescale.algebra
from .analysis import analyze
from .builder import ReportBuilder
from .errors import FormatError
from .report import Report, open, write  # noqa: A004 (cubescale.open mirrors builtins.open)

__version__ = "0.1.0"
__all__ = ["FormatError", "Report", "ReportBuilder", "algebra", "analyze", "common", "cut", "diff", "dtypes", "examples",
           "files", "mean", "median", "merge", "open", "records", "report", "scale_func", "systree", "threads", "write", "__version__"]
