"""Every value of the reports published with reference CSVs (pycubexr's) is reproduced,
inclusive and exclusive: exact for integers; for doubles within 1e-9 relative or, where the
CSV prints fewer digits, within half a unit of its last printed digit."""

from __future__ import annotations

import csv
import decimal
import os

import numpy as np
import pytest

import cubescale

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise.
DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
REPORTS = ["blast.p64", "call_tree_test", "time.p4"]


def _read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    assert header[:2] == ["Cnode ID", "Thread ID"]
    return header[2:], rows[1:]


def _half_last_digit(text: str) -> float:
    """Half a unit in the last printed digit of a decimal such as '45.2808' or '1.25e-005'."""
    exponent = decimal.Decimal(text.strip()).as_tuple().exponent
    return 0.5 * 10.0 ** exponent


def _matches(ours, text: str) -> bool:
    expected = float(text)
    if np.issubdtype(type(ours), np.integer):
        return int(ours) == int(text)
    tolerance = max(1e-9 * abs(expected), _half_last_digit(text) * (1 + 1e-6))  # ties print either way
    return abs(float(ours) - expected) <= tolerance


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("inclusive", [True, False], ids=["incl", "excl"])
def test_every_value_equals_the_csv(name, inclusive):
    report = cubescale.open(os.path.join(DATA, f"{name}.cubex"))
    metrics, rows = _read_csv(os.path.join(DATA, f"{name}.{'incl' if inclusive else 'excl'}.csv"))
    row_of_id = {int(c.id): c.index for c in report.cnodes}
    column_of_id = {loc.id: loc.index for loc in report.locations}
    values = {m: report.values(m, inclusive=inclusive) for m in metrics}
    checked = 0
    for row in rows:
        c, loc = row_of_id[int(row[0])], column_of_id[int(row[1])]
        for metric, text in zip(metrics, row[2:]):
            ours = values[metric][c, loc]
            assert _matches(ours, text), f"{name} {metric} cnode id {row[0]} location {row[1]}: {ours!r} != {text}"
            checked += 1
    # Every (cnode, location) pair of the report appears in the CSV.
    assert len(rows) == report.shape[0] * report.shape[1]
    assert checked == len(rows) * len(metrics)


def test_the_csv_comparison_detects_a_wrong_value():
    assert not _matches(np.float64(45.2809), "45.2808")
    assert not _matches(np.uint64(61749), "61748")
    assert _matches(np.float64(45.28083), "45.2808")


def test_cnode_ids_out_of_preorder_are_mapped():
    report = cubescale.open(os.path.join(DATA, "time.p4.cubex"))
    ids = [c.id for c in report.cnodes]
    assert ids != sorted(ids)  # the file really has ids out of preorder
    assert sorted(ids) == list(range(len(ids)))
    for c in report.cnodes:  # preorder: a parent precedes its children
        assert c.parent is None or c.parent < c.index
