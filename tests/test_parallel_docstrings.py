"""Every example in the docstrings of cubescale.parallel runs (on MPI.COMM_SELF)."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import cubescale.parallel

MODULES = ["cubescale.parallel"] + sorted(m.name for m in pkgutil.walk_packages(cubescale.parallel.__path__,
                                                                                "cubescale.parallel."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.delenv("CUBESCALE_SHARED_DATA", raising=False)  # they open cubescale.examples, as a pip user
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_public_functions_have_examples():
    module = importlib.import_module("cubescale.parallel")
    for export in module.__all__:
        obj = getattr(module, export)
        if inspect.isfunction(obj):
            assert obj.__doc__ and "Example" in obj.__doc__, export
