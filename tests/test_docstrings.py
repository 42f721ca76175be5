"""Every example in the public docstrings runs and prints what it says."""

import doctest
import importlib
import inspect

import pytest

MODULES = ["cubescale", "cubescale.errors", "cubescale.systree", "cubescale.cli",
           "cubescale.commands.systree", "cubescale.report", "cubescale.commands.report", "cubescale.scale_func",
           "cubescale.builder", "cubescale.dtypes", "cubescale.records", "cubescale.panes", "cubescale.views", "cubescale.profile",
           "cubescale.measure", "cubescale.commands.run", "cubescale.commands.demo", "cubescale.commands.collate",
           "cubescale._optional", "cubescale.commands._inputs", "cubescale.commands.top", "cubescale.commands.threads",
           "cubescale.commands.trace"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize("name", ["cubescale.systree", "cubescale.report", "cubescale.scale_func",
                                  "cubescale.builder", "cubescale.dtypes", "cubescale.records", "cubescale.panes", "cubescale.views", "cubescale.profile",
                                  "cubescale.measure"])
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
