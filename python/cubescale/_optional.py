"""Optional dependencies (pandas, matplotlib, mpi4py), imported where they are used.

cubescale itself needs only NumPy: a command that needs more says in one line which extra
to install (``pip install 'cubescale[pandas]'``) instead of failing at import time.

Example
-------
>>> require("numpy", "numpy").__name__
'numpy'
>>> try:
...     require("no_such_module_here", "pandas", "this example")
... except MissingDependency as e:
...     print(e)
this example needs no_such_module_here: pip install 'cubescale[pandas]'
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["MissingDependency", "OptionalModule", "require"]


class MissingDependency(ImportError):
    """An optional dependency is not installed; the message names the extra that brings it.

    Example
    -------
    >>> isinstance(MissingDependency("x needs pandas: pip install 'cubescale[pandas]'"), ImportError)
    True
    """


def require(name: str, extra: str, purpose: str | None = None) -> ModuleType:
    """The module ``name``, or :class:`MissingDependency` naming the extra to install.

    Example
    -------
    >>> require("numpy", "numpy").ones(2).tolist()
    [1.0, 1.0]
    """
    try:
        return importlib.import_module(name)
    except ImportError as e:
        # Only the module itself missing is ours to explain; a broken install of it is not.
        if e.name is not None and e.name != name.split(".")[0] and not name.startswith(e.name + "."):
            raise
        top = name.split(".")[0]
        raise MissingDependency(f"{purpose or 'this'} needs {top}: pip install 'cubescale[{extra}]'",
                                name=top) from e


class OptionalModule:
    """A module imported on first attribute access: ``pd = OptionalModule("pandas", "pandas")``
    at the top of a file keeps the file importable without pandas.

    Example
    -------
    >>> np = OptionalModule("numpy", "numpy")
    >>> np.arange(3).tolist()
    [0, 1, 2]
    """

    def __init__(self, name: str, extra: str, purpose: str | None = None):
        self._spec = (name, extra, purpose)
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute in ("_spec", "_module") or attribute.startswith("__"):
            # not set yet (copy, pickle), or a probe such as inspect.unwrap's __wrapped__ (doctest
            # looks at every module global): answering it must not import the module
            raise AttributeError(attribute)
        if self._module is None:
            self._module = require(*self._spec)
        return getattr(self._module, attribute)
