"""How cubescale starts Open MPI on one machine: the one place that knows the environment a
local ``mpirun`` needs (the demo, the MPI tests and the benchmarks all use it).

Open MPI refuses to run as root unless allowed, refuses more ranks than cores unless
oversubscription is on, and probes every network interface; a local run needs none of that.
Settings the caller already has win (they are only defaults).

Example
-------
>>> from cubescale.mpirun import local_environment
>>> env = local_environment({"OMPI_MCA_btl": "self,tcp"})
>>> env["OMPI_MCA_btl"], env["OMPI_MCA_rmaps_base_oversubscribe"]
('self,tcp', '1')
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["LOCAL_SETTINGS", "local_environment"]

LOCAL_SETTINGS: dict[str, str] = {
    "OMPI_MCA_rmaps_base_oversubscribe": "1",  # more ranks than cores (tests run 8 on 2)
    "OMPI_MCA_btl": "self,vader",              # shared memory and self only
    "OMPI_MCA_oob_tcp_if_include": "lo",       # the runtime's own traffic over loopback
}
"""Open MPI's settings for a run on this machine alone."""

_AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def local_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with :data:`LOCAL_SETTINGS` added where
    ``base`` does not set them, and running as root allowed when this process is root.

    Example
    -------
    >>> env = local_environment({})
    >>> env["OMPI_MCA_oob_tcp_if_include"]
    'lo'
    """
    env = dict(os.environ if base is None else base)
    defaults = dict(LOCAL_SETTINGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        defaults.update(_AS_ROOT)
    for key, value in defaults.items():
        env.setdefault(key, value)
    return env
