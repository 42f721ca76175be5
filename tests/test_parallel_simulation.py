"""The simulation runs the kernels of the MPI algorithm for virtual ranks: for the same input
it must give what mpirun gives (tree, every rank's indices and responsibility, and the same
per-rank costs), and on regular machines its per-rank memory must not grow with P."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "mpi"))

from launch import mpirun  # noqa: E402
from machines import KINDS  # noqa: E402

from cubescale.parallel import simulate_system_tree  # noqa: E402
from cubescale.systree import SystemTree  # noqa: E402

BLOCK_PLACED = ["regular", "mixed", "hwloc", "random1"]  # the simulation needs block placement
SIZE = 6


@pytest.fixture(scope="module")
def mpi_results():
    return {r["scenario"]: r for r in mpirun(SIZE, "worker_systree.py", *BLOCK_PLACED)}


@pytest.mark.parametrize("kind", BLOCK_PLACED)
def test_simulation_equals_mpi(mpi_results, kind):
    real = mpi_results[kind]
    sim = simulate_system_tree(ranks=SIZE, view=lambda r: KINDS[kind](r, SIZE), collect=True)
    assert sim["tree"].to_json(indent=None) == real["json"]
    offsets = sim["location_offsets"]
    simulated = [
        [sim["location_indices"][offsets[r]:offsets[r + 1]].tolist(),
         int(sim["location_group_index"][r]), bool(sim["responsible"][r])]
        for r in range(SIZE)
    ]
    assert simulated == real["ours"]
    # Same kernels, same spanning trees: the same costs as the real ranks measured.
    peaks = [s["peak_bytes"] for s in real["stats"]]
    assert sim["peak_bytes_max"] == max(peaks)
    assert sim["peak_bytes_min"] == min(peaks)
    assert sim["peak_bytes_rank0"] == peaks[0]
    assert sim["bytes_total"] == sum(s["bytes_sent"] for s in real["stats"])
    assert sim["rounds"] == max(s["rounds"] for s in real["stats"]) or kind != "regular"


def test_dry_down_pass_accounts_like_the_real_one():
    shape = "rack:2 node:3 process:5 thread:2"
    dry = simulate_system_tree(shape)
    full = simulate_system_tree(shape, collect=True)
    for key in ("peak_bytes_max", "peak_bytes_min", "peak_bytes_rank0", "messages_max",
                "bytes_max", "bytes_total"):
        assert dry[key] == full[key], key


def test_regular_simulation_gives_the_sequence_tree():
    shape = "rack:3 nodeboard:4 node:8 process:16 thread:4"
    sim = simulate_system_tree(shape)
    assert sim["tree"] == SystemTree.from_shape(shape)
    assert sim["ranks"] == 3 * 4 * 8 * 16


def test_per_rank_memory_is_flat_in_p_on_regular_machines():
    small = simulate_system_tree("rack:2 midplane:2 nodeboard:4 node:4 process:64 thread:4")
    large = simulate_system_tree("rack:4 midplane:2 nodeboard:16 node:32 process:64 thread:4")
    assert large["ranks"] == 64 * small["ranks"]
    assert large["peak_bytes_max"] <= 1.1 * small["peak_bytes_max"]
    assert large["naive_rank0_bytes"] >= 1000 * large["peak_bytes_rank0"]


def test_per_rank_memory_is_flat_from_two_ranks():
    # The shapes benchmarks/systree_mpi.py runs on 2..64 real ranks (the simulation gives the
    # same per-rank costs as mpirun, test above): between the passes a rank keeps one start
    # per round, so the peak no longer grows with the groups' sizes.
    shapes = ["node:2 process:1 thread:4", "node:2 process:2 thread:4", "node:4 process:2 thread:4",
              "node:4 process:4 thread:4", "node:8 process:4 thread:4", "node:8 process:8 thread:4"]
    peaks = [simulate_system_tree(s, collect=True)["peak_bytes_max"] for s in shapes]
    assert max(peaks) <= 1.1 * min(peaks), peaks
    # JUQUEEN's depth, every level branching, from 32 to 4,096 virtual ranks.
    deep = [simulate_system_tree(f"rack:2 midplane:2 nodeboard:{n} node:{n} process:{p} thread:4")
            for n, p in ((2, 2), (4, 4), (8, 16))]
    assert deep[-1]["ranks"] == 4096
    deep_peaks = [d["peak_bytes_max"] for d in deep]
    assert max(deep_peaks) <= 1.1 * min(deep_peaks), deep_peaks


def test_scattered_placement_is_rejected():
    def scattered(rank):
        return KINDS["random2"](rank, 8)

    with pytest.raises(ValueError, match="block placement"):
        simulate_system_tree(ranks=8, view=scattered, collect=True)


def test_simulation_needs_one_input():
    with pytest.raises(ValueError):
        simulate_system_tree()
