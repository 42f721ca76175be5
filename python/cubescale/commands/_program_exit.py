"""How a program that ``cubescale run`` measured ends: as ``python app.py`` would end it, once
the report is written. ``sys.exit(n)`` keeps ``n``; ``sys.exit("message")`` prints the message
on stderr and gives 1; an exception prints its traceback from the program's own first frame
(the run's frames above it are cubescale's, not the program's) and gives 1 (130 for Ctrl-C).

Example
-------
>>> code = compile("raise ValueError('bad input')", "app.py", "exec")
>>> try:
...     exec(code, {})
... except ValueError as e:
...     error = e
>>> import contextlib, io
>>> err = io.StringIO()
>>> with contextlib.redirect_stderr(err):
...     status = exit_status(error, code)
>>> status, err.getvalue().splitlines()[1].strip()
(1, 'File "app.py", line 1, in <module>')
"""

from __future__ import annotations

import sys
import types

__all__ = ["exit_status"]


def exit_status(outcome: BaseException | None, code: types.CodeType) -> int:
    """The exit status of a program whose module ``code`` ended with ``outcome`` (None: it ran to
    its end), after printing on stderr what Python prints for it.

    Example
    -------
    >>> exit_status(SystemExit(5), compile("", "app.py", "exec"))
    5
    >>> exit_status(SystemExit("fatal: bad config"), compile("", "app.py", "exec"))
    1
    """
    if outcome is None:
        return 0
    if isinstance(outcome, SystemExit):
        return _system_exit(outcome.code)
    sys.stderr.flush()
    # The printer takes the exception's own traceback (PyErr_Display): trimmed on it.
    outcome = outcome.with_traceback(_from_program(outcome.__traceback__, code))
    sys.excepthook(type(outcome), outcome, outcome.__traceback__)
    return 130 if isinstance(outcome, KeyboardInterrupt) else 1


def _system_exit(value: object) -> int:
    """Python's own rule (``Py_Exit`` after ``SystemExit``): None is 0, an int itself, anything
    else is printed on stderr and gives 1."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr, flush=True)
    return 1


def _from_program(tb: types.TracebackType | None, code: types.CodeType) -> types.TracebackType | None:
    """The traceback from the program's module frame on (all of it if that frame is not in it)."""
    entry = tb
    while entry is not None and entry.tb_frame.f_code is not code:
        entry = entry.tb_next
    return entry if entry is not None else tb
