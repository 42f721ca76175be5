"""Writes the example data that ships in the wheel (python/cubescale/examples/) again.

    python3 scripts/make_examples.py            # with the installed cubescale and mpirun

* ``demo.cubex``: ``cubescale demo`` measures its bundled stencil solver under mpirun on 4
  ranks (a master and 4 worker threads each); the script refuses a report of fewer processes
  (the demo falls back to one process when mpirun fails).
* ``ring/traces.otf2``: cubescale's synthetic OTF2 writer, 4 MPI processes x 20 iterations
  with two counters.

The report holds measured times: after regenerating it, the expected outputs of the docstring
examples that print its values change (``tests/test_docstrings.py`` says which).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

import cubescale
from cubescale import testing
from cubescale.mpirun import local_environment

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "cubescale", "examples")
RANKS = 4
ITERATIONS = 20
BUDGET = 300 * 1024  # bytes for all shipped examples together: they go into every wheel


def make_report(out_dir: str, iterations: int) -> str:
    """Run ``cubescale demo`` in a scratch folder and move its report to ``out_dir``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "demo.cubex")
        subprocess.run([sys.executable, "-m", "cubescale", "demo", "-o", path, "--ranks", str(RANKS),
                        "--iterations", str(iterations)], env=local_environment(), stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, check=True, timeout=600)
        processes = {loc.process_rank for loc in cubescale.open(path).locations}
        if len(processes) != RANKS:
            raise SystemExit(f"the demo measured {len(processes)} process(es), not {RANKS}: did mpirun fail?")
        target = os.path.join(out_dir, "demo.cubex")
        finish_report(path, target, README.format(ranks=RANKS, iterations=iterations, version=cubescale.__version__))
    return target


README = ("This report was written by `cubescale demo --ranks {ranks} --iterations {iterations}` (cubescale {version}, "
          "scripts/make_examples.py): the bundled stencil solver measured on {ranks} MPI ranks, each with a master "
          "and 4 worker threads.\n")


def local_paths_dropped(anchor: bytes) -> bytes:
    """anchor.xml with the regions' files named from their import roots (``cubescale/demo/stencil.py``,
    ``threading.py``) instead of this machine's absolute paths, which mean nothing elsewhere."""
    roots = sorted({os.path.abspath(p) for p in sys.path if p and os.path.isabs(p)}, key=len, reverse=True)
    for root in roots:
        anchor = anchor.replace(f'mod="{root}{os.sep}'.encode(), b'mod="')
    return anchor


def finish_report(source: str, target: str, readme: str) -> None:
    """Copy the report ``source`` to ``target`` with ``readme`` as its first member, README (an
    extra member, as Score-P's remapping.spec: readers keep it and the examples show it), and
    without this machine's paths in anchor.xml; the other members keep their order."""
    with tarfile.open(source) as src, tarfile.open(target, "w", format=tarfile.USTAR_FORMAT) as dst:
        members = [m for m in src.getmembers() if m.name != "README"]
        data = readme.encode()
        info = tarfile.TarInfo("README")
        info.size, info.mtime, info.mode = len(data), members[0].mtime, 0o644
        dst.addfile(info, io.BytesIO(data))
        for member in members:  # data, index, anchor.xml last
            data = src.extractfile(member).read()
            if member.name == "anchor.xml":
                data = local_paths_dropped(data)
                if len(data) % 512 == 0:  # CubeW's readers trip over a member of whole blocks
                    data += b"\n"
                member.size = len(data)
            dst.addfile(member, io.BytesIO(data))


def make_trace(out_dir: str) -> str:
    """Write the synthetic ring trace as ``out_dir/ring/traces.otf2`` (replacing an old one)."""
    directory = os.path.join(out_dir, "ring")
    shutil.rmtree(directory, ignore_errors=True)  # OTF2 refuses to write into an existing archive
    testing.write_ring_trace(directory, "traces", processes=RANKS, iterations=ITERATIONS, counters=True)
    return os.path.join(directory, "traces.otf2")


def total_bytes(directory: str) -> int:
    """Bytes of the data files below ``directory`` (Python sources not counted)."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(directory)
               for f in files if not f.endswith((".py", ".pyc")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["report", "trace"], help="write only one of them")
    parser.add_argument("--iterations", type=int, default=30, help="iterations of the demo's solver (default 30)")
    parser.add_argument("--out", default=EXAMPLES, help="folder to write into (default: python/cubescale/examples)")
    args = parser.parse_args()
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    if args.only != "trace":
        print("report:", make_report(out_dir, args.iterations))
    if args.only != "report":
        print("trace:", make_trace(out_dir))
    size = total_bytes(out_dir)
    print(f"examples: {size} bytes")
    if size > BUDGET:
        raise SystemExit(f"the examples take {size} bytes, more than the {BUDGET} bytes every wheel may carry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
