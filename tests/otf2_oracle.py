"""The shared OTF2 traces and what OTF2's own otf2-print says about them (the reference
the reader's tests compare with)."""

from __future__ import annotations

import collections
import shutil
import subprocess
from pathlib import Path

SHARED_OTF2 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "otf2"


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
