"""Region names XML 1.0 cannot hold (control characters other than tab, LF and CR): written
as U+FFFD, so that the report stays well-formed for our reader and for pycubexr."""

from __future__ import annotations

import pytest

import cubescale
from cubescale import measure

NAMES = {"ctl\x01": "ctl\ufffd", "bell\x07\x1f": "bell\ufffd\ufffd",
         "fine<&>\"'\ttab": "fine<&>\"'\ttab", "ünï": "ünï"}


@pytest.fixture
def report(tmp_path):
    measure.start()
    with measure.region("main"):  # one root, as pycubexr requires
        for name in NAMES:
            with measure.region(name):
                pass
    measure.stop()
    path = tmp_path / "names.cubex"
    measure.write(path, progress=False)
    return path


def test_our_reader_reads_the_replaced_names(report):
    names = {r.name for r in cubescale.open(report).regions}
    assert names == set(NAMES.values()) | {"main"}


def test_pycubexr_reads_the_replaced_names(report):
    pycubexr = pytest.importorskip("pycubexr")
    with pycubexr.CubexParser(str(report)) as parsed:
        names = {c.region.name for c in parsed.all_cnodes()}
    assert names == set(NAMES.values()) | {"main"}


def test_write_warns_of_an_exit_without_an_enter(tmp_path, capsys):
    from cubescale._core import measure as core_measure

    measure.start()
    with measure.region("main"):
        pass
    core_measure.exit()  # nothing entered: ignored, and said so once at the write
    measure.stop()
    measure.write(tmp_path / "x.cubex", progress=False)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cubescale: warning: 1 exit without an enter (")
