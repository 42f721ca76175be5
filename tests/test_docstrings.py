"""Every example in the public docstrings runs and prints what it says, with nothing but the
installed package: the examples open the report and trace that ship in the wheel
(:mod:`cubescale.examples`), never the shared test data."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import cubescale

# cubescale.parallel has its own test (test_parallel_docstrings.py, on MPI.COMM_SELF);
# __main__ runs the command line when imported.
NOT_HERE = ("cubescale.parallel", "cubescale.__main__", "cubescale._core")
MODULES = sorted(["cubescale"] + [m.name for m in pkgutil.walk_packages(cubescale.__path__, "cubescale.")
                                  if not m.name.startswith(NOT_HERE)])


def run_examples(name: str) -> doctest.TestResults:
    """The doctest results of module ``name`` (ELLIPSIS and NORMALIZE_WHITESPACE, as written)."""
    return doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.delenv("CUBESCALE_SHARED_DATA", raising=False)  # what a pip user has: no shared data
    result = run_examples(name)
    assert result.failed == 0


def test_every_module_with_examples_is_covered():
    """A module that gains examples is tested without being listed anywhere."""
    assert {"cubescale.trace", "cubescale.examples", "cubescale.commands.timeline", "cubescale.timeline"} <= set(MODULES)


@pytest.mark.parametrize("name", ["cubescale.systree", "cubescale.report", "cubescale.scale_func",
                                  "cubescale.builder", "cubescale.dtypes", "cubescale.records", "cubescale.panes", "cubescale.views", "cubescale.profile",
                                  "cubescale.measure", "cubescale.examples"])
def test_public_api_is_documented_with_examples(name):
    module = importlib.import_module(name)
    for export in module.__all__:
        obj = getattr(module, export)
        if not callable(obj):  # constants (e.g. NumPy dtypes) are documented by the module
            continue
        assert obj.__doc__ and "Example" in obj.__doc__, export
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not callable(member) and not isinstance(member, classmethod):
                    continue
                assert getattr(obj, attr).__doc__, f"{export}.{attr} has no docstring"
