"""The typed boundary to the C++ core: every binding is documented, the shipped stubs are
what the module really offers, and definitions keep their fields across the boundary."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import cubescale
import cubescale._core as core

SUBMODULES = ("systree", "cube", "distributed", "collective", "profile", "trace", "threads", "timeline", "measure")
STUBS = Path(cubescale.__file__).parent / "_core"


def _own_text(doc: str | None, name: str) -> str:
    """A pybind11 docstring without its generated signature lines."""
    lines = [line for line in (doc or "").splitlines() if not line.lstrip().startswith(f"{name}(")]
    return "\n".join(lines).replace("Overloaded function.", "").strip()


def _bound_members():
    for sub in SUBMODULES:
        module = getattr(core, sub)
        yield f"_core.{sub}", module.__doc__
        for name, obj in vars(module).items():
            if name.startswith("_") or not (callable(obj) or inspect.isclass(obj)):
                continue
            yield f"{sub}.{name}", _own_text(obj.__doc__, name)
            if not inspect.isclass(obj) or hasattr(obj, "__members__"):  # enums: pybind11 writes their methods
                continue
            for attr, member in vars(obj).items():
                if attr.startswith("__") and attr not in ("__init__", "__eq__", "__len__", "__iter__", "__next__"):
                    continue
                if attr.startswith("_") and not attr.startswith("__"):
                    continue
                if isinstance(member, property):
                    yield f"{sub}.{name}.{attr}", member.__doc__
                elif callable(member) and not isinstance(member, type):
                    yield f"{sub}.{name}.{attr}", _own_text(member.__doc__, attr)


def test_every_submodule_function_class_method_and_property_has_a_docstring():
    members = list(_bound_members())
    assert len(members) > 100  # the walk really reaches the bindings
    undocumented = [name for name, doc in members if not (doc or "").strip()]
    assert undocumented == []


def test_help_documents_the_cube_submodule():
    text = __import__("pydoc").render_doc(core.cube)
    for name in ("open_cubex", "CubexWriter", "Metric", "data_type_names"):
        assert name in text


def test_shipped_stubs_equal_freshly_generated_ones(tmp_path):
    pytest.importorskip("pybind11_stubgen")
    subprocess.run([sys.executable, "-m", "pybind11_stubgen", "cubescale._core", "-o", str(tmp_path),
                    "--numpy-array-use-type-var", "--exit-code"], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", "--line-length", "120", str(tmp_path)],
                   check=True)
    fresh = {p.name: p.read_text() for p in (tmp_path / "cubescale" / "_core").glob("*.pyi")}
    shipped = {p.name: p.read_text() for p in STUBS.glob("*.pyi")}
    assert sorted(fresh) == sorted(shipped)
    stale = [name for name in fresh if fresh[name] != shipped[name]]
    assert stale == [], "stale stubs: run scripts/stubs.sh"
    assert (STUBS.parent / "py.typed").exists()


# ---- one vocabulary across the boundary

def test_a_metric_handed_out_and_passed_back_keeps_every_field(shared_data):
    from cubescale.systree import SystemTree

    source = cubescale.open(shared_data / "cubex" / "cubelib_example.p64.cubex")
    builder = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:1 thread:1"))
    for m in source.metrics:  # preorder: a parent is added before its children
        builder.add_metric(m, parent=m.parent)
    for r in source.regions:
        builder.add_region(r)
    builder.add_cnode(0)
    built = builder.build()
    assert built.metrics == source.metrics  # every compared field: names, unit, kind, dtype, parents ...
    assert [m.attrs for m in built.metrics] == [m.attrs for m in source.metrics]
    assert built.regions == source.regions
    assert [r.attrs for r in built.regions] == [r.attrs for r in source.regions]


def test_definitions_reject_unknown_fields_and_values():
    with pytest.raises(TypeError):
        core.cube.Metric(name="time", units="sec")
    with pytest.raises(TypeError):
        core.cube.Metric(unit="sec")  # the name is required
    with pytest.raises(TypeError):
        core.cube.Region(name="main", file="a.c")
    with pytest.raises(ValueError, match="unknown CUBE data type"):
        core.cube.Metric(name="time", dtype="QUATERNION")
    metric = core.cube.Metric(name="time")
    with pytest.raises(ValueError, match="INCLUSIVE or EXCLUSIVE"):
        metric.kind = "BOTH"
    with pytest.raises(AttributeError):
        metric.uom = "sec"  # the C++ name is not a field


def test_data_type_names_come_from_the_core():
    names = core.cube.data_type_names()
    assert {"DOUBLE", "UINT64", "MINDOUBLE", "TAU_ATOMIC", "FLOAT", "INTEGER"} <= set(names)
    for name in names:  # every name the reader accepts has a NumPy layout
        cubescale.dtypes.numpy_type(name)
    assert core.cube.DataType("NDOUBLES(3)").width == 24
