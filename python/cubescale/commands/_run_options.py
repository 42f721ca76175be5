"""The options of ``cubescale run``, checked before the program runs: a mistake found after a
long run would throw the run away. Every rank under mpirun finds the same.

Example
-------
>>> import argparse
>>> args = argparse.Namespace(app=__file__, output="run.cubex", depth=0, trace=False, trace_dir=None,
...                           trace_buffer=1 << 20, filter=None)
>>> try:
...     check_run_options(args)
... except UsageError as e:
...     print(e)
--depth must be at least 1 (the call-path levels recorded), not 0
"""

from __future__ import annotations

import errno
import os

from .._optional import require
from ._inputs import UsageError, check_output

__all__ = ["MIN_TRACE_BUFFER", "check_run_options"]

MIN_TRACE_BUFFER = 256 * 1024
"""libotf2's smallest chunk (``OTF2_CHUNK_SIZE_MIN``): a smaller buffer would be one anyway."""


def check_run_options(args) -> None:
    """Refuses what would fail or be ignored only after the program ran: no such program, a depth
    below 1, a trace buffer below :data:`MIN_TRACE_BUFFER`, no such filter file (the filter's
    text replaces ``args.filter``), an output that cannot be written. ``--trace-dir`` asks for
    a trace: it implies ``--trace``.

    Example
    -------
    >>> import argparse
    >>> args = argparse.Namespace(app=__file__, output="run.cubex", depth=5, trace=False, trace_dir="t",
    ...                           trace_buffer=1 << 20, filter=None)
    >>> check_run_options(args)
    >>> args.trace
    True
    """
    if not os.path.isfile(args.app):
        raise FileNotFoundError(errno.ENOENT, "no such program (expected a Python script)", args.app)
    from ..parallel._mpi import launched_by_mpirun

    if launched_by_mpirun():  # the ranks' report travels over MPI: said before the program runs
        require("mpi4py", "mpi", "cubescale run under mpirun")
    if args.depth < 1:
        raise UsageError(f"--depth must be at least 1 (the call-path levels recorded), not {args.depth}")
    args.trace = args.trace or args.trace_dir is not None
    if args.trace and args.trace_buffer < MIN_TRACE_BUFFER:
        raise UsageError(f"--trace-buffer must be at least {MIN_TRACE_BUFFER} bytes (256 KiB, libotf2's "
                         f"smallest chunk), not {args.trace_buffer}")
    from ..measure import filter_text

    args.filter = filter_text(args.filter)
    _check_output_place(args.output, args.app)


def _check_output_place(output: str, app: str) -> None:
    """The output must be writable; its directory may be missing only where a program makes its
    results (``os.makedirs("results")``): inside the working directory or the program's folder,
    below a directory it can write in. A missing directory anywhere else is a mistyped path."""
    directory = os.path.abspath(os.path.dirname(output) or ".")
    if not os.path.isdir(directory) and _made_by_program(directory, app):
        check_output(output, [app], directory_made_later=True)
        return
    check_output(output, [app])  # no such directory, not writable, a device ...


def _made_by_program(directory: str, app: str) -> bool:
    existing = directory
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    homes = [h for h in (os.getcwd(), os.path.dirname(os.path.abspath(app))) if h != os.sep]  # not all of /
    inside = any(existing == home or existing.startswith(home.rstrip(os.sep) + os.sep) for home in homes)
    return inside and os.path.isdir(existing) and os.access(existing, os.W_OK | os.X_OK)
