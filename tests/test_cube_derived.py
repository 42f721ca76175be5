"""Derived metrics (CubePL): expressions taken verbatim from the remapping specs that CubeLib
ships (../shared/data/cubepl) computed by cubescale, against the same sums in NumPy; writing
them back as expressions or as values; errors for constructs outside the supported subset."""
from __future__ import annotations

import html
import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_DATA
from tar_members import read_members

import cubescale
from cubescale.cli import main
from cubescale.systree import SystemTree

SPECS = SHARED_DATA / "cubepl"

# (name, module, description): Score-P's spec tests the module, Scalasca's the description.
REGIONS = [
    ("main", "app.c", ""), ("compute", "app.c", ""), ("MPI_Send", "MPI", "MPI"), ("MPI_Irecv", "MPI", "MPI"),
    ("MPI_Waitall", "MPI", "MPI"), ("MPI_Barrier", "MPI", "MPI"), ("MPI_Allreduce", "MPI", "MPI"),
    ("MPI_Win_start", "MPI", "MPI"), ("TRACE BUFFER FLUSH", "", "EPIK"), ("!$omp parallel @app.c:12", "OMP", "OMP"),
]
# Parent of each call path (preorder), and its region.
PARENTS = [None, 0, 1, 1, 1, 4, 0, 6, 0, 0, 0]
CNODE_REGION = [0, 1, 2, 3, 9, 6, 4, 5, 6, 7, 8]


def spec_metric(spec: str, uniq: str) -> tuple[str, str, str]:
    """(type, <cubepl>, <cubeplinit>) of a metric in a spec file, as written there."""
    text = (SPECS / spec).read_text()
    at = text.index(f"<uniq_name>{uniq}</uniq_name>")
    start = text.rindex("<metric", 0, at)
    kind = re.match(r'<metric\s+type="([A-Z_]+)"', text[start:]).group(1)
    end = min(i for i in (text.find("<metric", at), text.find("</metric>", at)) if i >= 0)
    body = text[at:end]
    cubepl = re.search(r"<cubepl>(.*?)</cubepl>", body, re.S).group(1)
    init = re.search(r"<cubeplinit>(.*?)</cubeplinit>", body, re.S)
    return kind, cubepl, init.group(1) if init else ""


# Each derived metric a new id: ids name one metric each (two with one id are a FormatError
# since issue #30; these metrics all had id 99).
_IDS = itertools.count(100)


def derived_xml(uniq: str, kind: str, cubepl: str, init: str = "", dtype: str = "DOUBLE") -> str:
    init_xml = f"<cubeplinit>{html.escape(init, quote=False)}</cubeplinit>" if init else ""
    return (f'<metric id="{next(_IDS)}" type="{kind}"><disp_name>{uniq}</disp_name><uniq_name>{uniq}</uniq_name>'
            f"<dtype>{dtype}</dtype><uom>sec</uom><url></url><descr></descr>"
            f"<cubepl>{html.escape(cubepl, quote=False)}</cubepl>{init_xml}</metric>")


def base_anchor(tmp_path: Path) -> str:
    b = cubescale.ReportBuilder(SystemTree.from_shape("node:2 process:2 thread:2"))
    b.add_metric("time", unit="sec", kind="INCLUSIVE")
    b.add_metric("omp_idle_threads", unit="sec")
    b.add_metric("visits", unit="occ", dtype="UINT64")
    for name, module, descr in REGIONS:
        b.add_region(name, module=module, description=descr)
    for parent, region in zip(PARENTS, CNODE_REGION):
        b.add_cnode(region, parent=parent)
    cubescale.write(b.build(), tmp_path / "base.cubex")
    return read_members(str(tmp_path / "base.cubex"))["anchor.xml"].decode()


# Derived metrics from the specs: Score-P's masks built in <cubeplinit>, Scalasca's conditions
# on the region of the call path, and a POSTDERIVED sum. Renamed where both specs use a name.
CHOSEN = [("scorep.spec", "execution", "execution"), ("scorep.spec", "mpi", "mpi"),
          ("scorep.spec", "mpi_point2point", "mpi_point2point"), ("scorep.spec", "mpi_collective", "mpi_collective"),
          ("scorep.spec", "mpi_communication", "mpi_communication"),
          ("scalasca.spec", "execution", "sc_execution"), ("scalasca.spec", "mpi_synchronization", "sc_mpi_sync")]


def derived_report(tmp_path: Path, extra: str = "") -> cubescale.Report:
    xml = base_anchor(tmp_path)
    metrics = "".join(derived_xml(new, *spec_metric(spec, uniq)) for spec, uniq, new in CHOSEN)
    r = cubescale.Report.from_anchor_xml(xml.replace("</metrics>", metrics + extra + "</metrics>"))
    rng = np.random.default_rng(7)
    shape = r.shape
    excl = rng.uniform(0.5, 2.0, shape)
    r.set_values("time", inclusive_of(excl))
    r.set_values("omp_idle_threads", rng.uniform(0.0, 0.4, shape) * (rng.random(shape) < 0.5))
    r.set_values("visits", rng.integers(1, 100, shape).astype(np.uint64))
    return r


def inclusive_of(exclusive: np.ndarray) -> np.ndarray:
    out = exclusive.copy()
    for c in range(len(PARENTS) - 1, 0, -1):
        out[PARENTS[c]] += out[c]
    return out


def mask(predicate) -> np.ndarray:
    return np.array([predicate(*REGIONS[r]) for r in CNODE_REGION], dtype=float)[:, None]


def p2p(name: str, module: str, _descr: str) -> bool:
    n = name.lower()
    patterns = [r"^mpi_.*buffer", r"^mpi_.*cancel", r"^mpi_.*get_count", r"^mpi_.*probe", r"^mpi_.*recv",
                r"^mpi_.*request", r"^mpi_.*send", r"^mpi_test", r"^mpi_wait"]
    return module == "MPI" and (any(re.search(p, n) for p in patterns)
                                or (not re.search("^mpi_win", n) and re.search(r"^mpi_.*start", n) is not None))


def test_spec_expressions_give_the_numpy_sums(tmp_path):
    r = derived_report(tmp_path)
    work = r.values("time", inclusive=False) - r.values("omp_idle_threads", inclusive=False)
    collective = set(re.findall(r'seq "([^"]+)"', spec_metric("scorep.spec", "mpi_collective")[2]))
    sync = set(re.findall(r'seq "([^"]+)"', spec_metric("scalasca.spec", "mpi_synchronization")[1]))
    expected = {
        "execution": mask(lambda n, m, d: n != "TRACE BUFFER FLUSH") * work,
        "mpi": mask(lambda n, m, d: m == "MPI") * work,
        "mpi_point2point": mask(p2p) * work,
        "mpi_collective": mask(lambda n, m, d: m == "MPI" and n.lower() in collective) * work,
        "sc_execution": mask(lambda n, m, d: d != "EPIK") * work,
        "sc_mpi_sync": mask(lambda n, m, d: d == "MPI" and n.lower() in sync) * work,
    }
    assert collective and sync and expected["mpi_point2point"].any() and expected["mpi_collective"].any()
    for name, want in expected.items():
        assert r.metric(name).kind == "PREDERIVED_EXCLUSIVE"
        np.testing.assert_allclose(r.values(name, inclusive=False), want, rtol=1e-13, err_msg=name)
        np.testing.assert_allclose(r.values(name, inclusive=True), inclusive_of(want), rtol=1e-13, err_msg=name)
    # POSTDERIVED: the sum of its operands in either flavour; the missing RMA operand reads 0.
    assert r.metric("mpi_communication").kind == "POSTDERIVED"
    for inclusive in (True, False):
        want = r.values("mpi_point2point", inclusive=inclusive) + r.values("mpi_collective", inclusive=inclusive)
        np.testing.assert_allclose(r.values("mpi_communication", inclusive=inclusive), want, rtol=1e-13)


def test_derived_metrics_in_panes_dataframes_and_info(tmp_path, capsys):
    r = derived_report(tmp_path)
    df = r.to_dataframe(["time", "mpi", "mpi_communication"], inclusive=False)
    np.testing.assert_array_equal(df["mpi"].to_numpy(), r.values("mpi", inclusive=False).reshape(-1))
    p = r.panes("mpi_communication", cnode=0, metric_expanded=True)
    np.testing.assert_allclose(p.call_inclusive, r.values("mpi_communication").sum(axis=1))
    totals = r.metric_totals(inclusive=False)
    assert totals[r.metric("mpi").index] == pytest.approx(r.values("mpi")[0].sum())
    cubescale.write(r, tmp_path / "derived.cubex")
    assert main(["info", str(tmp_path / "derived.cubex")]) == 0
    out = capsys.readouterr().out
    assert "mpi_communication [postderived, DOUBLE]" in out and "execution [prederived_exclusive" in out


def test_round_trip_keeps_expressions_and_pycubexr_reads_the_values_form(tmp_path):
    r = derived_report(tmp_path)
    path = tmp_path / "expr.cubex"
    cubescale.write(r, path)
    members = read_members(str(path))
    stored = {m.index for m in r.metrics if not m.derived}
    assert {k for k in members if k.endswith(".data")} == {f"{i}.data" for i in stored}  # no data for derived
    back = cubescale.open(path)
    for m in r.metrics:
        assert (back.metric(m.name).kind, back.metric(m.name).expression) == (m.kind, m.expression)
        np.testing.assert_allclose(back.values(m.name, inclusive=False), r.values(m.name, inclusive=False), rtol=1e-13)
    pycubexr = pytest.importorskip("pycubexr")
    with pytest.raises(AssertionError):  # pycubexr 2.1 asserts INCLUSIVE/EXCLUSIVE metric types
        with pycubexr.CubexParser(str(path)) as parsed:
            parsed.get_metrics()
    flat = tmp_path / "values.cubex"
    cubescale.write(r, flat, derived="values")
    with pycubexr.CubexParser(str(flat)) as parsed:
        for m in parsed.get_metrics():
            got = parsed.get_metric_values(m)
            ours = cubescale.open(flat).values(m.name, inclusive=None)
            for c in parsed.get_root_cnodes()[0].get_all_children(with_self=True):
                np.testing.assert_allclose(got.cnode_values(c, convert_to_exclusive=False, convert_to_inclusive=False),
                                           ours[c.id], rtol=1e-13, err_msg=m.name)
    assert not any(m.derived for m in cubescale.open(flat).metrics)


def test_unsupported_constructs_name_metric_and_construct(tmp_path, capsys):
    extra = (derived_xml("fixed", "POSTDERIVED", "metric::fixed::time()")
             + derived_xml("loop_a", "POSTDERIVED", "metric::loop_b()")
             + derived_xml("loop_b", "POSTDERIVED", "metric::loop_a() + 1")
             + derived_xml("bad_init", "PREDERIVED_EXCLUSIVE", "1",
                           init="{ global(x); ${x}[0] = 1; ${y} = metric::time(); return 0; }")
             + derived_xml("reads_bad_global", "POSTDERIVED", "${x}[0] * metric::time()"))
    r = derived_report(tmp_path, extra)
    with pytest.raises(ValueError, match=r"derived metric 'fixed', <cubepl> at offset 0: unsupported construct 'metric::fixed::'"):
        r.values("fixed")
    with pytest.raises(ValueError, match="refers to itself"):
        r.values("loop_a")
    for name in ("bad_init", "reads_bad_global"):  # a failed init's globals are not read as 0
        with pytest.raises(ValueError, match=r"'bad_init', <cubeplinit> .*metric values in <cubeplinit>"):
            r.values(name)
    assert r.values("mpi").shape == r.shape  # the rest of the report stays usable
    assert np.isnan(r.metric_totals()[r.metric("fixed").index])
    with pytest.raises(ValueError, match="is derived"):
        r.set_values("mpi", np.zeros(r.shape))
    cubescale.write(r, tmp_path / "bad.cubex")  # expressions are written back as they are
    assert cubescale.open(tmp_path / "bad.cubex").metric("fixed").expression == "metric::fixed::time()"
    assert main(["info", str(tmp_path / "bad.cubex")]) == 0
    assert "not computed: derived metric 'fixed'" in capsys.readouterr().out


def test_every_shipped_spec_program_parses_and_runs(tmp_path):
    # Every derived metric of both specs, under its own name: all compute (operands missing
    # from the report read 0, as in CubeLib).
    for spec in ("scorep.spec", "scalasca.spec"):
        text = (SPECS / spec).read_text()
        names = [n for n in re.findall(r"<uniq_name>([^<]+)</uniq_name>", text)
                 if re.search(rf'<metric\s+type="[A-Z_]*DERIVED[A-Z_]*">\s*<disp_name>[^<]*</disp_name>\s*<uniq_name>{n}<', text)]
        assert len(names) >= 45, spec
        xml = base_anchor(tmp_path)
        metrics = "".join(derived_xml(f"d_{n}", *spec_metric(spec, n)) for n in names)
        r = cubescale.Report.from_anchor_xml(xml.replace("</metrics>", metrics + "</metrics>"))
        r.set_values("time", np.ones(r.shape))
        for n in names:
            assert np.isfinite(r.values(f"d_{n}", inclusive=True)).all(), n


def remapped(path: Path) -> cubescale.Report:
    """What cube_remap2 computes: the report with the derived metrics of the remapping.spec
    that Score-P stored inside it (its masks filled by one <cubeplinit>)."""
    members = read_members(str(path))
    anchor, spec = members["anchor.xml"].decode(), members["remapping.spec"].decode()
    stored = cubescale.open(path)
    have = {m.name for m in stored.metrics}
    extra = []
    tags = list(re.finditer(r"<metric(\s[^>]*)?>|</metric>", spec))
    for k, t in enumerate(tags):
        if t.group(0).startswith("</"):
            continue
        own = spec[t.end():tags[k + 1].start() if k + 1 < len(tags) else len(spec)]  # up to its first child

        def field(name: str, own: str = own) -> str:
            found = re.search(rf"<{name}>(.*?)</{name}>", own, re.S)
            return found.group(1) if found else ""

        kind = re.search(r'type="([A-Z_]+)"', t.group(0))
        uniq, init = field("uniq_name"), field("cubeplinit")
        if kind and "DERIVED" in kind.group(1) and uniq not in have:
            extra.append(derived_xml(uniq, kind.group(1), field("cubepl"), init, field("dtype")))
        elif init and uniq in have:
            at = anchor.index("</descr>", anchor.index(f"<uniq_name>{uniq}</uniq_name>")) + len("</descr>")
            anchor = anchor[:at] + f"<cubeplinit>{html.escape(init, quote=False)}</cubeplinit>" + anchor[at:]
    r = cubescale.Report.from_anchor_xml(anchor.replace("</metrics>", "".join(extra) + "</metrics>"))
    for m in stored.metrics:
        r.set_values(m.name, np.asarray(stored.values(m, inclusive=None)))
    return r


@pytest.mark.parametrize("name", ["call_tree_test", "time.p4", "l2dcm.p128", "bt-mz.p2x4.bad_checksums"])
def test_real_reports_with_their_own_remapping_spec(shared_data, name):
    r = remapped(shared_data / "cubex" / f"{name}.cubex")
    derived = [m for m in r.metrics if m.derived]
    assert len(derived) >= 95
    for m in derived:
        assert np.isfinite(r.values(m, inclusive=True)).all(), m.name
    # Independent of CubePL: Score-P's "mpi" is the work time of call paths in MPI regions.
    names = {m.name for m in r.metrics}

    def values(metric: str, inclusive: bool = True):  # a metric the report lacks reads 0, as in CubePL
        return r.values(metric, inclusive=inclusive) if metric in names else 0.0

    work = values("time", False) - values("omp_idle_threads", False)
    paradigm = np.array([c.region.paradigm == "mpi" for c in r.cnodes], dtype=float)[:, None]
    assert paradigm.any() == (name != "call_tree_test")  # the one report without MPI
    np.testing.assert_allclose(r.values("mpi", inclusive=False), paradigm * work, rtol=1e-12, atol=1e-15)
    # "comp" (POSTDERIVED) is execution minus the paradigms' times.
    parts = ["mpi", "shmem_time", "omp_time", "pthread_time", "openacc_time", "opencl_time", "cuda_time", "hip_time"]
    want = r.values("execution") - sum(values(p) for p in parts)
    np.testing.assert_allclose(r.values("comp"), want, rtol=1e-12, atol=1e-12)


def test_builder_defines_derived_metrics(tmp_path):
    b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:2 thread:2"))
    time = b.add_metric("time", unit="sec", kind="INCLUSIVE")
    b.add_metric("per_visit", unit="sec", kind="POSTDERIVED", parent=time,
                 expression="metric::time() / metric::visits()")
    b.add_metric("visits", unit="occ", dtype="UINT64")
    main = b.add_cnode(b.add_region("main"))
    b.add_cnode(b.add_region("solve"), parent=main)
    r = b.build()
    r.set_values("time", np.array([[4.0, 6.0, 8.0, 2.0], [1.0, 3.0, 0.0, 2.0]]))
    r.set_values("visits", np.array([[1, 1, 1, 1], [2, 3, 4, 0]], dtype=np.uint64))
    inclusive_visits = r.values("visits", inclusive=True).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = np.where(inclusive_visits == 0, np.nan, r.values("time") / inclusive_visits)
    want = np.where(r.values("time") == 0, 0.0, quotient)  # CubeLib: 0 / x is 0, x / 0 NaN
    np.testing.assert_array_equal(r.values("per_visit"), want)
    assert np.isnan(r.values("per_visit")[1, 3])
    cubescale.write(r, tmp_path / "built.cubex")
    back = cubescale.open(tmp_path / "built.cubex")
    assert back.metric("per_visit").expression == "metric::time() / metric::visits()"
    np.testing.assert_array_equal(back.values("per_visit"), want)
