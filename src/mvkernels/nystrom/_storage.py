"""How a pickled :class:`~mvkernels.nystrom.BlockNystrom` stores its landmark rows
(private): compactly and exactly. A view whose landmark rows are the other views' rows side
by side (the joint view) is stored as a reference to them (:class:`JoinedRows`), the others
through :func:`mvkernels._packing.pack`; :func:`restored_landmarks` gives them back bit for
bit.

Lowest layer of :mod:`mvkernels.nystrom`: it imports no other module of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._packing import pack, unpack

__all__ = ["JoinedRows", "joined_from", "stored_landmarks", "restored_landmarks"]


@dataclass(frozen=True)
class JoinedRows:
    """A pickled view's landmark rows that are the rows of the views ``parts`` side by
    side (``np.hstack``), stored by reference."""

    parts: tuple[int, ...]


def joined_from(rows: list, l: int) -> JoinedRows | None:
    """The other views whose landmark rows, side by side, equal view ``l``'s bit for bit
    (every other view, in order), or None."""
    others = [j for j in range(len(rows)) if j != l]
    arrays = [rows[j] for j in [l, *others]]
    if not others or not all(
        isinstance(Z, np.ndarray) and Z.ndim == 2 and Z.dtype.kind == "f" for Z in arrays
    ):
        return None
    Z, parts = arrays[0], arrays[1:]
    if any(P.shape[0] != Z.shape[0] or P.dtype != Z.dtype for P in parts):
        return None
    if sum(P.shape[1] for P in parts) != Z.shape[1] or not Z.flags.c_contiguous:
        return None
    return JoinedRows(tuple(others)) if np.hstack(parts).tobytes() == Z.tobytes() else None


def stored_landmarks(rows: list) -> list:
    """The landmark rows of a map as pickled: a view whose rows are the other views'
    rows side by side (the joint view) as a :class:`JoinedRows` reference, the others
    through :func:`mvkernels._packing.pack` (the narrowest exact floating type, e.g.
    float16 for 8-bit pixel values). :func:`restored_landmarks` gives them back bit
    for bit."""
    out = list(rows)
    for l in range(len(rows)):
        joined = joined_from(rows, l)
        if joined is not None:
            out[l] = joined
            break  # at most one view is all the others side by side
    return [Z if isinstance(Z, JoinedRows) else pack(Z) for Z in out]


def restored_landmarks(stored: list) -> list:
    """The landmark rows that :func:`stored_landmarks` stored."""
    rows = [unpack(Z) for Z in stored]
    return [np.hstack([rows[j] for j in Z.parts]) if isinstance(Z, JoinedRows) else Z for Z in rows]
