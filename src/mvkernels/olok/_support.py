"""Storage of OLOK's support vectors: a window of the most recent samples and coefficients."""

from __future__ import annotations

import numpy as np


class SupportBuffer:
    """Inputs ``x_i`` and stored coefficients ``beta_i`` of the live support, by time.

    The live rows are ``[lo, hi)`` of two preallocated arrays; row ``r`` holds the sample of
    global (1-based) time ``offset + r``. :meth:`append` adds rows at the end (the arrays
    grow geometrically, doubling, or the live window is compacted to the front when at least
    half of the buffer is dead), :meth:`truncate` drops the oldest rows (moves ``lo``).

    Parameters
    ----------
    n_inputs, n_outputs : int
    capacity : int
        Initial number of rows.
    """

    def __init__(self, n_inputs: int, n_outputs: int, capacity: int = 1024):
        self.X = np.empty((capacity, n_inputs))
        self.beta = np.empty((capacity, n_outputs))
        self.lo = 0
        self.hi = 0
        self.offset = 1

    def __len__(self) -> int:
        return self.hi - self.lo

    @property
    def capacity(self) -> int:
        return self.X.shape[0]

    def live(self) -> tuple[np.ndarray, np.ndarray]:
        """Views of the live inputs and coefficients (oldest first)."""
        return self.X[self.lo : self.hi], self.beta[self.lo : self.hi]

    def times(self) -> np.ndarray:
        """Global (1-based) times of the live rows."""
        return self.offset + np.arange(self.lo, self.hi)

    def _reserve(self, b: int) -> None:
        cap = self.capacity
        if self.hi + b <= cap:
            return
        live = len(self)
        new_cap = cap if live + b <= cap // 2 else max(2 * cap, live + b)
        X = np.empty((new_cap, self.X.shape[1])) if new_cap != cap else self.X
        beta = np.empty((new_cap, self.beta.shape[1])) if new_cap != cap else self.beta
        X[:live] = self.X[self.lo : self.hi]
        beta[:live] = self.beta[self.lo : self.hi]
        self.X, self.beta = X, beta
        self.offset += self.lo
        self.lo, self.hi = 0, live

    def append(self, X: np.ndarray, beta: np.ndarray) -> None:
        """Store the next ``len(X)`` samples (times following the last stored one)."""
        b = X.shape[0]
        self._reserve(b)
        self.X[self.hi : self.hi + b] = X
        self.beta[self.hi : self.hi + b] = beta
        self.hi += b

    def truncate(self, w: int) -> None:
        """Drop every sample of time ``<= w``."""
        self.lo = max(self.lo, min(self.hi, w + 1 - self.offset))

    def rescale(self, c: float) -> None:
        """Multiply the live coefficients by ``c``."""
        self.beta[self.lo : self.hi] *= c
