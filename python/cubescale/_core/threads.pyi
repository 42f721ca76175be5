"""
Thread aggregation of reports and local profiles: sum, set, key, calltree, value (the Score-P thread-aggregation paper).
"""

from __future__ import annotations
import collections.abc
import cubescale._core.cube
import cubescale._core.profile
import typing

__all__: list[str] = ["aggregate_profile", "aggregate_report", "is_synchronization", "strategy_names"]

def aggregate_profile(
    profile: cubescale._core.profile.LocalProfile,
    strategy: str,
    *,
    work_metric: typing.SupportsInt | typing.SupportsIndex | None = None,
    synchronization: collections.abc.Sequence[bool] | None = None,
    max_clusters: typing.SupportsInt | typing.SupportsIndex = 8,
    tolerance: typing.SupportsFloat | typing.SupportsIndex = 0.1,
) -> cubescale._core.profile.LocalProfile:
    """
    One rank's local profile with its CPU threads aggregated (the same strategies and options as aggregate_report); other locations are kept.
    """

def aggregate_report(
    report: cubescale._core.cube.Report,
    strategy: str,
    *,
    work_metric: typing.SupportsInt | typing.SupportsIndex | None = None,
    synchronization: collections.abc.Sequence[bool] | None = None,
    max_clusters: typing.SupportsInt | typing.SupportsIndex = 8,
    tolerance: typing.SupportsFloat | typing.SupportsIndex = 0.1,
    progress: collections.abc.Callable[[int, int], None] | None = None,
) -> cubescale._core.cube.Report:
    """
    A new report with every process's CPU threads aggregated by `strategy` (sum, set, key, calltree, value). work_metric: index of the time metric for key / value (default: 'time'); synchronization: one flag per region (True: not work); progress(done, total) after each metric. ValueError for options that do not fit the report.
    """

def is_synchronization(region: cubescale._core.cube.Region) -> bool:
    """
    Whether time in this region is synchronization, idling or waiting (by role, else by name) rather than work.
    """

def strategy_names() -> list[str]:
    """
    The strategies' names: sum, set, key, calltree, value.
    """
