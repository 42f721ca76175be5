"""Trace -> profile under mpirun: every shared trace converted by profile_trace; rank 0
prints one JSON line per trace with the file's SHA-256 (compared across numbers of ranks)
and its shape. Scenario ``broken``: one event file truncated; every rank must raise and no
file may be left."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys

from mpi4py import MPI

from cubescale.parallel.trace import profile_trace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from otf2_oracle import anchors  # noqa: E402


def main() -> None:
    out_dir = sys.argv[1]
    comm = MPI.COMM_WORLD
    for anchor in anchors():
        out = os.path.join(out_dir, f"{anchor.parent.name}.n{comm.size}.cubex")
        stats = profile_trace(comm, anchor, out)
        if comm.rank == 0:
            with open(out, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            print(json.dumps({"trace": anchor.parent.name, "sha256": digest, "shape": stats["shape"],
                              "events": stats["events"]}), flush=True)
    # One truncated event file: the rank reading it fails, every rank raises, no file.
    broken = os.path.join(out_dir, f"broken.n{comm.size}")
    if comm.rank == 0:
        src = [a for a in anchors() if a.parent.name == "late-sender-barrier"][0].parent
        shutil.copytree(src, broken)
        for root, dirs, files in os.walk(broken):
            for name in dirs + files:
                os.chmod(os.path.join(root, name), 0o755)
        evt = os.path.join(broken, "traces", "3.evt")
        with open(evt, "rb") as f:
            data = f.read()
        with open(evt, "wb") as f:
            f.write(data[: len(data) // 2])
    comm.Barrier()
    out = os.path.join(broken, "profile.out.cubex")
    raised = ""
    try:
        profile_trace(comm, os.path.join(broken, "traces.otf2"), out)
    except Exception as e:  # noqa: BLE001
        raised = type(e).__name__ + ": " + str(e)
    everyone = comm.gather(raised, root=0)
    comm.Barrier()
    if comm.rank == 0:
        left = sorted(f for f in os.listdir(broken) if "out" in f)
        print(json.dumps({"trace": "broken", "raised": everyone, "left": left}), flush=True)


if __name__ == "__main__":
    main()
