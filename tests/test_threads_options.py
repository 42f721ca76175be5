"""`cubescale threads` refuses option values that make no clustering, in one usage line."""

from __future__ import annotations

import pytest

from cubescale.cli import main
from cubescale.examples import report_path


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--tolerance", "-1", "a relative distance of at least 0, not '-1'"),
    ("--tolerance", "nan", "a relative distance of at least 0, not 'nan'"),
    ("--max-clusters", "0", "a whole number of at least 1, not '0'"),
    ("--max-clusters", "two", "a whole number of at least 1, not 'two'"),
])
def test_bad_clustering_options_are_usage_errors(option, value, says, tmp_path, capsys):
    out = tmp_path / "c.cubex"
    with pytest.raises(SystemExit) as stop:
        main(["threads", report_path(), str(out), "--strategy", "value", option, value])
    assert stop.value.code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {option}: {says}" in err


def test_good_clustering_options_are_taken(tmp_path, capsys):
    out = tmp_path / "c.cubex"
    assert main(["threads", report_path(), str(out), "--strategy", "value", "--tolerance", "0",
                 "--max-clusters", "1"]) == 0
    assert out.exists() and capsys.readouterr().out.startswith("value: 20 locations -> ")
