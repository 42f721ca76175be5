"""
cubescale C++ core: one submodule per concept (systree, cube, distributed).
"""

from __future__ import annotations
from . import systree
from . import cube
from . import distributed

__all__: list[str] = ["cube", "distributed", "systree"]
