"""
cubescale C++ core: one submodule per concept (systree, cube, distributed, collective, profile, trace).
"""

from __future__ import annotations
from . import systree
from . import cube
from . import distributed
from . import collective
from . import profile
from . import trace
from . import threads
from . import timeline
from . import measure
from . import analysis
from . import algebra
from . import stat

__all__: list[str] = [
    "algebra",
    "analysis",
    "collective",
    "cube",
    "distributed",
    "measure",
    "profile",
    "stat",
    "systree",
    "threads",
    "timeline",
    "trace",
]
