"""Lossless compact storage of float arrays in a pickled model.

A fitted model keeps some arrays whose values need fewer bytes than their ``float64``
storage: landmark rows of integer-valued data (pixel intensities, counts, one-hot columns:
exact in ``float16`` or ``float32``) and mostly-zero arrays (the one-vs-one
``dual_coef_``, zero off each pair's rows). :func:`pack` stores such an array as a
:class:`PackedArray` (its nonzero entries and their positions, or every entry, in the
narrowest floating type that holds them exactly) and :func:`unpack` rebuilds it. The
rebuilt array is the original bit for bit (values, signs of zero, dtype and memory
order as a plain pickle restores them): :func:`pack` checks that before it packs and
otherwise returns the array unchanged. The estimators call them from ``__getstate__`` /
``__setstate__``, so a model in memory is unchanged.

This module imports nothing of the package (the bottom floor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = ["PackedArray", "PackedState", "pack", "unpack"]

#: the floating types tried for the values, narrowest first
_NARROW = (np.float16, np.float32)
#: the integer types tried for integer arrays, narrowest first
_NARROW_INT = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)


@dataclass(frozen=True)
class PackedArray:
    """A float array stored in fewer bytes, rebuilt bit for bit by :meth:`toarray`.

    Attributes
    ----------
    shape : tuple of int
        Shape of the array.
    dtype : str
        Its dtype (``"float64"`` or ``"float32"``).
    order : {"C", "F"}
        Its memory order as a pickle restores it (``"F"`` only for an array that is
        Fortran- and not C-contiguous).
    values : ndarray
        Every entry in ``order`` (``index`` None), the nonzero entries, or (``triangle``)
        the upper triangle of each matrix of an exactly symmetric stack, in the
        narrowest floating type that holds them exactly.
    index : ndarray of int or None
        Flat positions (in ``order``) of ``values``; the other entries are ``+0.0``.
    triangle : bool
        ``values`` are the upper triangles (``np.triu_indices``) of the ``(..., d, d)``
        stack, mirrored on rebuilding.
    """

    shape: tuple[int, ...]
    dtype: str
    order: Literal["C", "F"]
    values: np.ndarray
    index: np.ndarray | None = None
    triangle: bool = False

    @property
    def nbytes(self) -> int:
        """Bytes of the stored values and positions."""
        return self.values.nbytes + (0 if self.index is None else self.index.nbytes)

    def toarray(self) -> np.ndarray:
        """The original array (a new, writeable array)."""
        size = int(np.prod(self.shape))
        if self.triangle:
            d = self.shape[-1]
            iu, ju = np.triu_indices(d)
            out = np.zeros(self.shape, dtype=self.dtype)
            vals = self.values.reshape(*self.shape[:-2], iu.size)
            out[..., iu, ju] = vals
            out[..., ju, iu] = vals
            return np.asarray(out, order=self.order)
        if self.index is None:
            flat = self.values.astype(self.dtype)
        else:
            flat = np.zeros(size, dtype=self.dtype)
            flat[self.index] = self.values
        return flat.reshape(self.shape, order=self.order)


def _narrowest(values: np.ndarray) -> np.ndarray:
    """``values`` in the narrowest floating type that holds every one exactly (bits
    compared: signs of zero and NaN payloads included)."""
    for t in _NARROW:
        if np.dtype(t).itemsize >= values.dtype.itemsize:
            break
        with np.errstate(over="ignore", invalid="ignore"):
            narrow = values.astype(t)
        if narrow.astype(values.dtype).tobytes() == values.tobytes():
            return narrow
    return values


def pack(a: Any) -> Any:
    """``a`` as a :class:`PackedArray` when that is smaller and exact, else ``a`` itself.

    Only NumPy arrays of ``float64`` / ``float32`` and of integers are packed; any other
    object is returned unchanged. Integers (row indices, labels) are stored in the
    narrowest integer type that holds their range. For floats the forms tried are: every
    entry, the nonzero entries with their flat positions, and for an exactly symmetric
    ``(..., d, d)`` stack the upper triangles, each with its values in the narrowest exact
    floating type; the smallest is kept when it saves at least a quarter of the bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels._packing import pack, unpack
    >>> pixels = np.arange(12.0).reshape(3, 4)  # small integers: exact in float16
    >>> packed = pack(pixels)
    >>> packed.values.dtype, packed.nbytes, pixels.nbytes
    (dtype('float16'), 24, 96)
    >>> np.array_equal(unpack(packed), pixels)
    True
    """
    if not isinstance(a, np.ndarray) or a.size == 0:
        return a
    order: Literal["C", "F"] = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    flat = a.ravel(order=order)
    if a.dtype.kind in "iu":
        lo, hi = int(flat.min()), int(flat.max())
        fits = [t for t in _NARROW_INT if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max]
        if not fits or 4 * np.dtype(fits[0]).itemsize > 3 * a.dtype.itemsize:
            return a
        return PackedArray(a.shape, a.dtype.name, order, flat.astype(fits[0]))
    if a.dtype not in (np.float64, np.float32):
        return a
    nonzero = np.flatnonzero((flat != 0) | np.signbit(flat) | np.isnan(flat))
    dense = PackedArray(a.shape, a.dtype.name, order, _narrowest(flat))
    best = dense
    if nonzero.size < flat.size:
        kind = np.int32 if flat.size < np.iinfo(np.int32).max else np.int64
        sparse = PackedArray(
            a.shape, a.dtype.name, order, _narrowest(flat[nonzero]), nonzero.astype(kind)
        )
        best = min(dense, sparse, key=lambda p: p.nbytes)
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and np.array_equal(a, np.swapaxes(a, -1, -2)):
        iu, ju = np.triu_indices(a.shape[-1])
        upper = np.ascontiguousarray(a[..., iu, ju]).ravel()
        tri = PackedArray(a.shape, a.dtype.name, order, _narrowest(upper), triangle=True)
        best = min(best, tri, key=lambda p: p.nbytes)
    if 4 * best.nbytes > 3 * a.nbytes:
        return a
    if best.toarray().tobytes(order=order) != a.tobytes(order=order):  # pragma: no cover
        return a
    return best


def unpack(x: Any) -> Any:
    """The array that :func:`pack` stored (anything else is returned unchanged)."""
    return x.toarray() if isinstance(x, PackedArray) else x


class PackedState:
    """Mixin: pickles an object's attributes through :func:`pack` and restores them with
    :func:`unpack` (bit for bit); for small containers of fitted arrays (a metric stack,
    the completion statistics)."""

    def __getstate__(self) -> dict:
        return {k: pack(v) for k, v in vars(self).items()}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update({k: unpack(v) for k, v in state.items()})
