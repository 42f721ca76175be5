"""Machines for the MPI tests and the simulation tests: one function per machine kind that
gives the view of one rank, so that the MPI workers and the simulation see the same input.
Host names are made up from the rank, so several "nodes" live on one real machine."""

from __future__ import annotations

import random

from cubescale.parallel import regular_view
from cubescale.systree import SingleNodeTree

# Two synthetic hwloc machines: nodes of different kinds have different hardware levels.
TOPOLOGIES = ["pack:2 core:2 pu:2", "pack:1 l3:2 core:2 pu:1"]


def regular_shape(size: int) -> str:
    """A regular machine with exactly ``size`` processes, two per node when possible."""
    per_node = 2 if size % 2 == 0 else 1
    return f"node:{size // per_node} process:{per_node} thread:2 gpu_stream:1"


def regular(rank: int, size: int) -> SingleNodeTree:
    return regular_view(regular_shape(size), rank)


def branching_shape(size: int) -> str:
    """A regular machine in which every level has two or more members from 2 ranks on (as in
    benchmarks/systree_mpi.py): 2 = node:2 process:1, 4 = node:2 process:2, 8 = node:4 process:2."""
    per_node = 2 if size >= 4 and size % 2 == 0 else 1
    return f"node:{size // per_node} process:{per_node} thread:4"


def branching(rank: int, size: int) -> SingleNodeTree:
    return regular_view(branching_shape(size), rank)


def _path(host: str, rank: int, threads: int, gpu: bool, above=()) -> SingleNodeTree:
    t = SingleNodeTree()
    parent = t.add_root("machine", "machine")
    for cls, name in above:
        parent = t.add(parent, cls, name)
    node = t.add(parent, "node", host)
    proc = t.add(node, "process", f"rank {rank}")
    for i in range(threads):
        t.add(proc, "thread", f"thread {i}")
    if gpu:
        t.add(proc, "gpu_stream", "stream 0")
    return t


def mixed(rank: int, size: int) -> SingleNodeTree:
    """Inhomogeneous: nodes of three ranks, thread counts that differ by node and by rank,
    GPU streams on some processes (as in paper 000, Figure 4, but irregular)."""
    host = rank // 3
    return _path(f"host{host}", rank, 1 + host % 2 + (rank % 5 == 0), rank % 4 == 1)


def hwloc(rank: int, size: int) -> SingleNodeTree:
    """hwloc hardware levels: different topologies on different hosts, three ranks per host
    bound to increasing CPUs, 1 or 2 threads."""
    host = rank // 3
    topology = TOPOLOGIES[host % 2]
    pus = 8 if host % 2 == 0 else 4
    cpu = (rank % 3) * pus // 3
    return SingleNodeTree.local(threads=1 + rank % 2, synthetic=topology, cpus=str(cpu),
                                host=f"host{host}", process_name=f"rank {rank}")


def this_host(rank: int, size: int) -> SingleNodeTree:
    """This machine's real hwloc topology and each rank's real binding, 2 threads."""
    return SingleNodeTree.local(threads=2, process_name=f"rank {rank}")


def random_machine(seed: int, scattered: bool):
    """A random machine: random hosts (round-robin placement when ``scattered``), racks of
    different depth, thread counts, GPU streams, and hwloc levels on some hosts."""

    def view(rank: int, size: int) -> SingleNodeTree:
        rng = random.Random(seed * 1_000_003 + size)
        hosts = rng.randint(1, max(1, size // 2))
        if scattered:
            host = rank % hosts
        else:
            cuts = sorted(rng.sample(range(1, size), hosts - 1)) if hosts > 1 else []
            host = sum(rank >= c for c in cuts)
        host_rng = random.Random(seed * 7919 + host)
        mine = random.Random(seed * 104729 + rank)
        threads, gpu = mine.randint(1, 3), mine.random() < 0.3
        if host_rng.random() < 0.3:
            topology = host_rng.choice(TOPOLOGIES)
            pus = 8 if topology == TOPOLOGIES[0] else 4
            return SingleNodeTree.local(threads=threads, synthetic=topology,
                                        cpus=str(mine.randrange(pus)), host=f"h{host}",
                                        process_name=f"rank {rank}")
        above = [("rack", f"rack {host % 2}")] if host_rng.random() < 0.5 else []
        return _path(f"h{host}", rank, threads, gpu, above)

    return view


KINDS = {
    "regular": regular,
    "branching": branching,
    "this_host": this_host,
    "mixed": mixed,
    "hwloc": hwloc,
    "random1": random_machine(1, scattered=False),
    "random2": random_machine(2, scattered=True),
    "random3": random_machine(3, scattered=True),
}
