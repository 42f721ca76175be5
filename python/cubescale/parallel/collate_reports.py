"""One-process reports of a run (a C/C++ program's ``cubescale_write()`` per rank) unified and
collated into one report by any number of ranks up to the number of reports (the Scalasca architecture paper,
section 4.3).

With one rank per report, each rank's report is its profile and
:func:`~cubescale.parallel.write_report` builds the machine (distributed system tree). With
fewer ranks, rank r takes a contiguous block of the reports and merges them into one profile
(:meth:`~cubescale.profile.LocalProfile.merge`: the unification kernels, in its own process);
the machine is then known from the reports themselves: every rank learns every report's host
name (one ``allgather`` of a name per report) so that the reports are ordered with the
processes of a host next to each other (the machine's depth-first order, so each rank's block
is one range of columns), rank 0 gathers each process's name and locations, and collation runs
over that machine (:mod:`~cubescale.parallel.known_machine`). A process keeps its position in
the natural order of the file names as its ``<rank>``. One rank needs no MPI.

Example
-------
>>> import os, tempfile
>>> import numpy as np
>>> import cubescale
>>> from cubescale.parallel import write_report
>>> from cubescale.parallel.serial import SerialComm
>>> from cubescale import Metric, Region
>>> from cubescale.profile import LocalProfile
>>> d = tempfile.mkdtemp()
>>> for r in range(3):  # three processes' reports, as cubescale_write() leaves them
...     p = LocalProfile([Metric(name="t")], [Region(name="main")], [-1], [0],
...                      [("Master thread", "thread")], [np.array([[float(r)]])], host="n1", process=f"MPI Rank {r}")
...     _ = write_report(SerialComm(), p, os.path.join(d, f"run.{r}.cubex"))
>>> out = os.path.join(d, "run.cubex")
>>> _ = collate_reports(SerialComm(), [os.path.join(d, f"run.{r}.cubex") for r in (2, 0, 1)], out)
>>> report = cubescale.open(out)
>>> [loc.process for loc in report.locations], report.values("t").tolist()
(['MPI Rank 0', 'MPI Rank 1', 'MPI Rank 2'], [[0.0, 1.0, 2.0]])
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from typing import Any

from ..profile import LocalProfile, host_of
from ..systree import SingleNodeTree
from .collective import agree, agree_with_root, output_refused
from .known_machine import KnownMachine, collate_on_known_machine, share_of_groups

__all__ = ["collate_reports", "natural_order"]


def natural_order(paths: Sequence[str | os.PathLike]) -> list[str]:
    """File names in natural order: ``run.2`` before ``run.10``.

    Example
    -------
    >>> natural_order(["run.10.cubex", "run.2.cubex", "run.1.cubex"])
    ['run.1.cubex', 'run.2.cubex', 'run.10.cubex']
    """
    def key(name: str) -> list:
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]

    return sorted((os.fspath(p) for p in paths), key=key)


def _one_process(path: str, report=None):
    """The report at ``path`` (opened: definitions only), checked to hold one process."""
    import cubescale

    report = report if report is not None else cubescale.open(path)
    if report.location_group_count != 1:
        raise ValueError(f"{path}: {report.location_group_count} processes; collate takes one-process reports")
    return report


def collate_reports(comm, paths: Sequence[str | os.PathLike], output: str | os.PathLike, *, compress: bool = False,
                    threads: str | None = None, block_bytes: int = 1 << 20, **thread_options: Any) -> dict:
    """Collective over ``comm`` (at most one rank per report): the one-process reports at
    ``paths`` (any order: processes follow the natural order of the names) unified and
    collated into ``output`` (rank 0 writes). ``threads`` aggregates each process's threads
    first (``"sum"``, ``"key"`` ...; see :func:`cubescale.threads.aggregate_profile`). An error
    on any rank (an unreadable report, one of several processes) is raised on every rank and
    leaves no file. Returns this rank's ``reports`` (how many it read) and ``seconds``.

    Example
    -------
    >>> from cubescale.parallel.serial import SerialComm
    >>> collate_reports(SerialComm(), [], "never.cubex")
    Traceback (most recent call last):
    ...
    ValueError: no reports to collate
    """
    from .collate import write_report

    start = time.perf_counter()
    inputs = natural_order(paths)
    if not inputs:
        raise ValueError("no reports to collate")
    _refuse_repeated(inputs)
    if len(inputs) < comm.size:  # the same on every rank
        raise ValueError(f"{len(inputs)} reports need at most {len(inputs)} ranks; this run has {comm.size}")
    agree_with_root(comm, output_refused(comm, output, inputs))
    if len(inputs) == comm.size:
        error, profile = None, None
        try:
            profile = LocalProfile.from_report(_one_process(inputs[comm.rank]))
        except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
            error = e
        agree(comm, error)
        assert profile is not None
        write_report(comm, profile, output, compress=compress, block_bytes=block_bytes, threads=threads,
                     thread_names=True, **thread_options)
        return {"reports": 1, "seconds": time.perf_counter() - start}
    return _collate_blocks(comm, inputs, output, compress, threads, block_bytes, thread_options, start)


def _refuse_repeated(inputs: list[str]) -> None:
    """A report given twice (under two names) would be two processes of the run."""
    seen: dict[str, str] = {}
    for path in inputs:
        key = os.path.realpath(path)
        if key in seen:
            same = f" (the same file as {seen[key]})" if seen[key] != path else ""
            raise ValueError(f"{path} is given twice{same}: each process's report once")
        seen[key] = path


def _collate_blocks(comm, inputs: list[str], output, compress: bool, threads: str | None, block_bytes: int,
                    thread_options: dict, start: float) -> dict:
    """Fewer ranks than reports: each rank merges a contiguous block of them (see the module)."""
    from ..threads import aggregate_profile

    error: BaseException | None = None
    opened: dict[str, Any] = {}
    hosts: list[str | None] = []
    a, b = share_of_groups([1] * len(inputs), comm.size, comm.rank)
    try:
        for path in inputs[a:b]:
            opened[path] = _one_process(path)
            hosts.append(host_of(opened[path]))
    except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
        error = e
    agree(comm, error)
    # Every report's host, in natural order; reports regrouped so that a host's processes are
    # consecutive (hosts in order of first appearance, processes in natural order within).
    every_host = [h for part in comm.allgather(hosts) for h in part]
    first_seen: dict[str | None, int] = {}
    for h in every_host:
        first_seen.setdefault(h, len(first_seen))
    order = sorted(range(len(inputs)), key=lambda i: (first_seen[every_host[i]], i))
    mine = order[a:b]
    profile = None
    described: list[tuple] = []
    try:
        profiles = []
        for i in mine:
            p = LocalProfile.from_report(_one_process(inputs[i], opened.pop(inputs[i], None)))
            if threads is not None:
                p = aggregate_profile(p, threads, **thread_options)
            profiles.append(p)
            described.append((i, every_host[i], p.process, p.locations))  # the host the order grouped by
        opened.clear()
        profile = LocalProfile.merge(profiles)
    except Exception as e:  # noqa: BLE001 - raised on every rank by agree()
        error = e
    agree(comm, error)
    assert profile is not None
    locations = profile.shape[1]
    first_location = int(comm.scan(locations)) - locations
    machine = comm.gather(described, root=0)

    def known() -> KnownMachine:  # rank 0: the processes in `order`, hosts as first seen
        tree = SingleNodeTree()
        root = tree.add_root("machine", "machine 0")  # named as build_system_tree names it (one rank per report)
        nodes: dict[str | None, int] = {}
        ranks = []
        for part in machine or []:
            for natural, host, process, locs in part:
                if host not in nodes:
                    nodes[host] = tree.add(root, "node", host or "node")
                group = tree.add(nodes[host], "process", process or f"rank {natural}")
                for name, kind in locs:
                    tree.add(group, kind, name, kind="location")
                ranks.append(natural)
        return KnownMachine(tree, ranks)

    collate_on_known_machine(comm, profile, output, known, first_location, locations, a, compress, block_bytes)
    return {"reports": len(mine), "seconds": time.perf_counter() - start}
