"""SCALE_FUNC values: scaling functions f(x) = sum of a * x^(b/c) * log2(x)^d (Extra-P models).

:meth:`cubescale.Report.values` returns a SCALE_FUNC metric as records of the CubeLib slot
(``terms`` and ``measurements`` counts, then packed bytes); :func:`decode` turns one record
into a :class:`ScaleFunction`. Inclusive / exclusive values add functions term by term as
CubeLib does (coefficients of equal exponents add, other terms are appended); the panes show
CubeLib's number for a function, :attr:`ScaleFunction.asymptotic`.

Example
-------
>>> import struct
>>> from cubescale import scale_func
>>> # one value as CubeLib packs it: counts of terms and measurements, then (a, b, c, d) per term
>>> raw = struct.pack("<II", 2, 0) + struct.pack("<diIi", 2.0, 2, 3, 4) + struct.pack("<diIi", 1.0, 1, 2, 3)
>>> f = scale_func.decode(raw)  # a report's value: decode(report.values(metric)[cnode, location])
>>> f.terms
[Term(a=2.0, b=2, c=3, d=4), Term(a=1.0, b=1, c=2, d=3)]
>>> round(f(8.0), 3)  # 2 * 8^(2/3) * 3^4 + 8^(1/2) * 3^3
724.368
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

__all__ = ["Measurement", "ScaleFunction", "Term", "decode"]  # and SLOT, the NumPy record

#: NumPy record of one CubeLib SCALE_FUNC slot (848 bytes).
SLOT = np.dtype([("terms", "<u4"), ("measurements", "<u4"), ("data", "V840")])
_TERM = struct.Struct("<diIi")
_MEASUREMENT = struct.Struct("<Idd")


class Term(NamedTuple):
    """One term a * x^(b/c) * log2(x)^d.

    Example
    -------
    >>> from cubescale.scale_func import Term
    >>> Term(a=2.0, b=1, c=2, d=0)
    Term(a=2.0, b=1, c=2, d=0)
    """

    a: float
    b: int
    c: int
    d: int


class Measurement(NamedTuple):
    """A measurement the model was fitted to: process count, mean and spread.

    Example
    -------
    >>> from cubescale.scale_func import Measurement
    >>> Measurement(processes=64, mean=1.5, width=0.1).processes
    64
    """

    processes: int
    mean: float
    width: float


@dataclass(frozen=True)
class ScaleFunction:
    """A decoded SCALE_FUNC value; call it to evaluate at x processes.

    Example
    -------
    >>> from cubescale.scale_func import ScaleFunction, Term
    >>> ScaleFunction([Term(3.0, 1, 1, 0)])(10.0)
    30.0
    """

    terms: list[Term]
    measurements: list[Measurement] = field(default_factory=list)

    def __call__(self, x: float) -> float:
        return sum(t.a * x ** (t.b / t.c) * math.log2(x) ** t.d for t in self.terms)

    def __str__(self) -> str:
        """The function as text, dominant term first (``0`` without terms).

        Example
        -------
        >>> from cubescale.scale_func import ScaleFunction, Term
        >>> str(ScaleFunction([Term(2.0, 2, 3, 4), Term(1.5, 1, 1, 0), Term(3.0, 0, 1, 0)]))
        '2*x^(2/3)*log2(x)^4 + 1.5*x + 3'
        """
        if not self.terms:
            return "0"
        parts = []
        for t in self.terms:
            text = f"{t.a:g}"
            if t.b:
                text += "*x" if t.b == t.c else f"*x^({t.b}/{t.c})"
            if t.d:
                text += "*log2(x)" if t.d == 1 else f"*log2(x)^{t.d}"
            parts.append(text)
        return " + ".join(parts)

    @property
    def asymptotic(self) -> float:
        """CubeLib's number for the function: 1000 * b / c + d + a / 1000 of the dominant term.

        Example
        -------
        >>> from cubescale.scale_func import ScaleFunction, Term
        >>> ScaleFunction([Term(2.0, 1, 2, 3)]).asymptotic
        503.002
        """
        if not self.terms:
            return 0.0
        t = self.terms[0]
        return 1000.0 * t.b / t.c + t.d + t.a / 1000.0


def decode(value: np.void | bytes) -> ScaleFunction:
    """The scaling function in one SCALE_FUNC record (or its 848 raw bytes).

    Example
    -------
    >>> from cubescale import scale_func
    >>> import numpy as np
    >>> raw = np.zeros(1, scale_func.SLOT)
    >>> scale_func.decode(raw[0]).terms
    []
    """
    raw = bytes(value.tobytes() if hasattr(value, "tobytes") else value)
    if len(raw) < 8:
        raise ValueError("a SCALE_FUNC value has at least 8 bytes")
    room = (len(raw) - 8) // 20
    n_terms, n_measurements = struct.unpack_from("<II", raw, 0)
    n_terms = min(n_terms, 30, room)
    n_measurements = min(n_measurements, 10, room - n_terms)
    terms = [Term(*_TERM.unpack_from(raw, 8 + 20 * i)) for i in range(n_terms)]
    at = 8 + 20 * n_terms
    measurements = [Measurement(*_MEASUREMENT.unpack_from(raw, at + 20 * i)) for i in range(n_measurements)]
    return ScaleFunction(terms, measurements)
