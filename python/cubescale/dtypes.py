"""NumPy layouts of CUBE data types: how one value of a metric looks in a values array.

The CUBE names (``DOUBLE``, ``UINT64``, ``TAU_ATOMIC``, ``NDOUBLES(4)`` ...) are parsed by
the C++ core; this module only maps the parsed kind to a NumPy element type.

Example
-------
>>> from cubescale.dtypes import numpy_type
>>> numpy_type("UINT64")
(dtype('uint64'), ())
>>> numpy_type("NDOUBLES(3)")
(dtype('float64'), (3,))
"""

from __future__ import annotations

import functools
import mmap

import numpy as np

from . import scale_func
from ._core import cube as _cube

__all__ = ["RATE", "TAU_ATOMIC", "is_real", "is_scalar", "numpy_type", "page_aligned_empty"]

#: One TAU_ATOMIC value: count, minimum, maximum, sum and sum of squares.
TAU_ATOMIC = np.dtype([("n", "u4"), ("min", "f8"), ("max", "f8"), ("sum", "f8"), ("sum2", "f8")])
#: One RATE value.
RATE = np.dtype([("main", "f8"), ("time", "f8")])

_K = _cube.ValueKind
# The CUBE names (and their aliases) live in the C++ core; this maps its value kinds.
_SCALARS: dict[_cube.ValueKind, np.dtype] = {
    _K.DOUBLE: np.dtype("f8"), _K.MINDOUBLE: np.dtype("f8"), _K.MAXDOUBLE: np.dtype("f8"),
    _K.INT8: np.dtype("i1"), _K.INT16: np.dtype("i2"), _K.INT32: np.dtype("i4"), _K.INT64: np.dtype("i8"),
    _K.UINT8: np.dtype("u1"), _K.UINT16: np.dtype("u2"), _K.UINT32: np.dtype("u4"), _K.UINT64: np.dtype("u8"),
    _K.COMPLEX: np.dtype("c16"), _K.TAU_ATOMIC: TAU_ATOMIC, _K.RATE: RATE, _K.SCALE_FUNC: scale_func.SLOT,
}


@functools.lru_cache(maxsize=256)
def numpy_type(dtype_name: str) -> tuple[np.dtype, tuple[int, ...]]:
    """NumPy element type and trailing shape of one value of a CUBE data type (``ValueError``
    for a name the core does not know; SCALE_FUNC slots are decoded by :mod:`cubescale.scale_func`).

    Example
    -------
    >>> numpy_type("TAU_ATOMIC")[0].names
    ('n', 'min', 'max', 'sum', 'sum2')
    """
    parsed = _cube.DataType(dtype_name)  # ValueError for unknown names
    kind = parsed.kind
    if kind in _SCALARS:
        return _SCALARS[kind], ()
    if kind == _cube.ValueKind.NDOUBLES:
        return np.dtype("f8"), (int(parsed.count),)
    if kind == _cube.ValueKind.HISTOGRAM:
        return np.dtype([("min", "f8"), ("max", "f8"), ("bins", "f8", (int(parsed.count),))]), ()
    raise ValueError(f"unsupported CUBE data type {dtype_name!r}")


def is_scalar(dtype_name: str) -> bool:
    """True for data types whose values are single numbers (not records or vectors).

    Example
    -------
    >>> is_scalar("DOUBLE"), is_scalar("TAU_ATOMIC"), is_scalar("NDOUBLES(2)")
    (True, False, False)
    """
    element, trailing = numpy_type(dtype_name)
    return not trailing and not element.names


def is_real(dtype_name: str) -> bool:
    """True for data types whose values are single real numbers (the integers, DOUBLE,
    MINDOUBLE, MAXDOUBLE): what can be ranked and given statistics. COMPLEX values are single
    numbers (:func:`is_scalar`) but have no order; records and vectors (TAU_ATOMIC, RATE,
    HISTOGRAM(n), NDOUBLES(n), SCALE_FUNC) are not single numbers.

    Example
    -------
    >>> is_real("UINT8"), is_real("MINDOUBLE"), is_real("COMPLEX"), is_real("HISTOGRAM(5)")
    (True, True, False, False)
    """
    element, trailing = numpy_type(dtype_name)
    return not trailing and not element.names and element.kind in "iuf"


def page_aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialized array that starts on a page: large ones in their own anonymous
    mapping, with transparent huge pages asked for (the mapping lives as long as the array).

    Example
    -------
    >>> import numpy as np
    >>> a = page_aligned_empty((3, 4), np.dtype("f8"))
    >>> a.shape, a.ctypes.data % 4096
    ((3, 4), 0)
    """
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes >= 4 << 20:
        memory = mmap.mmap(-1, nbytes)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            memory.madvise(mmap.MADV_HUGEPAGE)
        return np.frombuffer(memory, dtype=dtype, count=nbytes // dtype.itemsize).reshape(shape)
    raw = np.empty(nbytes + mmap.PAGESIZE, dtype=np.uint8)
    skip = -raw.ctypes.data % mmap.PAGESIZE
    return raw[skip:skip + nbytes].view(dtype).reshape(shape)
