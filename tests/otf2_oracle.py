"""The shared OTF2 traces and what OTF2's own otf2-print says about them (the reference
the reader's tests compare with)."""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
from pathlib import Path

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise (as conftest.py).
SHARED_OTF2 = Path(os.environ.get("CUBESCALE_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")) / "otf2"


def anchors() -> list[Path]:
    """The anchor file of every shared trace."""
    return sorted(next(iter(sorted(d.glob("*.otf2")))) for d in SHARED_OTF2.iterdir() if d.is_dir())


def anchor_ids() -> list[str]:
    return [a.parent.name for a in anchors()]


def have_otf2_print() -> bool:
    return shutil.which("otf2-print") is not None


def otf2_print_counts(anchor: Path) -> dict[tuple[int, str], int]:
    """{(location id, event type): count} from otf2-print's event listing."""
    out = subprocess.run(["otf2-print", str(anchor)], check=True, capture_output=True, text=True).stdout
    counts: collections.Counter = collections.Counter()
    started = False
    for line in out.splitlines():
        if line.startswith("-----"):
            started = True
            continue
        if not started or not line or line[0].isspace():  # continuation lines: ADDITIONAL ATTRIBUTES
            continue
        fields = line.split()
        counts[(int(fields[1]), fields[0])] += 1
    return dict(counts)


def otf2_print_team_enters(anchor: Path) -> list[tuple[int, int, str, int]]:
    """The Enter events that carry an ``OMPT_PARALLEL_REGION_ID`` attribute (Score-P's OMPT
    adapter: a parallel region's enter names the team it opens, an implicit task's the team it
    belongs to), in otf2-print's (time) order: (location id, timestamp, region name, team id)."""
    out = subprocess.run(["otf2-print", str(anchor)], check=True, capture_output=True, text=True).stdout
    enters: list[tuple[int, int, str, int]] = []
    last: tuple[int, int, str] | None = None
    for line in out.splitlines():
        if line.startswith("ENTER "):
            fields = line.split(None, 3)
            last = (int(fields[1]), int(fields[2]), fields[3].split('"')[1])
        elif line[:1].isspace() and "OMPT_PARALLEL_REGION_ID" in line and last is not None:
            enters.append((*last, int(line.rstrip().rstrip(")").rsplit(";", 1)[1])))
        elif line[:1] and not line[:1].isspace():
            last = None
    return enters
