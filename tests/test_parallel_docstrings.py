"""Every example in the docstrings of cubescale.parallel runs (on MPI.COMM_SELF)."""

import doctest
import importlib
import inspect

import pytest

MODULES = ["cubescale.parallel", "cubescale.parallel.systree", "cubescale.parallel.naive",
           "cubescale.parallel.simulate", "cubescale.parallel.views", "cubescale.parallel._mpi",
           "cubescale.parallel.collective", "cubescale.parallel.unify", "cubescale.parallel.collate",
           "cubescale.parallel.blocks", "cubescale.parallel.known_machine", "cubescale.parallel.recollate",
           "cubescale.parallel.collate_reports",
           "cubescale.parallel.measure", "cubescale.parallel.serial"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_public_functions_have_examples():
    module = importlib.import_module("cubescale.parallel")
    for export in module.__all__:
        obj = getattr(module, export)
        if inspect.isfunction(obj):
            assert obj.__doc__ and "Example" in obj.__doc__, export
