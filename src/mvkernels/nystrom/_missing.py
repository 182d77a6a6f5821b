"""Missing views in the block Nystrom feature space: pairwise statistics and the
Gaussian conditional expectation of a missing view's feature block.

A sample's missing view is a row of NaN in that view. The block Nystrom map gives each
observed view ``l`` of a sample its feature block ``z_l = k_l(x_l, landmarks_l) S_l``
(``p`` numbers). The feature blocks of the views are modelled jointly by their mean
``mu`` and covariance ``Sigma`` (``vp x vp``), estimated *pairwise*: block ``(a, b)``
from the rows where views ``a`` and ``b`` are both observed (pairwise-complete moments,
one pass over the data). A missing block is replaced by its conditional expectation
given the observed blocks of the same sample under that Gaussian model,

``E[z_M | z_O] = mu_M + Sigma_MO (Sigma_OO + eps I)^{-1} (z_O - mu_O)``,

with a ridge ``eps = MISSING_RIDGE * trace(Sigma_OO) / dim(O)`` (and the eigenvalues of
the pairwise ``Sigma_OO``, which need not be positive semi-definite, clipped at 0).
Assumption: views are missing at random (the pattern does not depend on the missing
values); the completed features are then the best linear prediction of the missing
blocks. Cost: the statistics are one ``O(n (vp)^2)`` pass (the same as the moments of
an MVML fit); completing a block of rows costs one ``(|O| p)``-size eigendecomposition
per distinct pattern of observed views in the block, plus ``O(m |O| p |M| p)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

from .._arrays import check_whole_rows, observed_rows, refuse_all_missing
from .._linalg import robust_cholesky, robust_eigh, sym
from .._packing import PackedState
from .._sparse import is_sparse

__all__ = [
    "MISSING_RIDGE",
    "CompletedOutputs",
    "ConditionalViews",
    "block_mask",
    "missing_patterns",
    "pairwise_statistics",
]

#: relative ridge of the conditional expectation (fraction of the mean variance of the
#: observed feature blocks)
MISSING_RIDGE = 1.0


def block_mask(blocks: list[np.ndarray], start: int | None = None) -> np.ndarray | None:
    """Observed mask (m, v) of a list of per-view row blocks, None if nothing is missing.

    Partly missing rows (NaN in only some columns of a view) and rows with every view
    missing raise a ValueError naming the view / rows.
    """
    for l, B in enumerate(blocks):  # partly missing rows: refused, naming the view
        if not is_sparse(B):
            nan = np.isnan(B)
            if nan.any():
                check_whole_rows(nan, l, offset=start or 0)
    mask = np.column_stack([observed_rows(B) for B in blocks])
    if mask.all():
        return None
    refuse_all_missing(mask, offset=start or 0)
    return mask


def pairwise_statistics(
    gram: np.ndarray, dims: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairwise-complete statistics from the moments of the augmented features.

    ``gram`` is ``V^T V`` for rows ``V = [o_1 z_1, ..., o_v z_v, o_1, ..., o_v]`` (feature
    blocks zeroed where the view is missing, then the 0/1 observed indicators). Returns

    * ``counts`` (v, v): ``n_ab``, rows where views a and b are both observed;
    * ``mean`` (D,): block ``a`` is the mean of ``z_a`` over the rows where a is observed;
    * ``cov`` (D, D): block ``(a, b)`` is the covariance of ``z_a`` and ``z_b`` over
      the rows where both are observed (means over those same rows); 0 where
      ``n_ab < 2``.

    ``dims``: the width of each view's block (``D = sum(dims)``).
    """
    v = len(dims)
    bounds = np.cumsum([0] + list(dims))
    d = int(bounds[-1])
    counts = np.rint(np.asarray(gram[d:, d:], dtype=np.float64))  # exact integers
    sums = gram[:d, d:]  # (vp, v): column b = sum of z over rows where b (and the block) observed
    mean = np.zeros(d)
    cov = np.zeros((d, d))
    for a in range(v):
        ra = slice(bounds[a], bounds[a + 1])
        mean[ra] = sums[ra, a] / max(counts[a, a], 1.0)
        for b in range(a, v):
            rb = slice(bounds[b], bounds[b + 1])
            nab = counts[a, b]
            if nab < 2:
                continue
            ma, mb = sums[ra, b] / nab, sums[rb, a] / nab
            C = gram[ra, rb] / nab - np.outer(ma, mb)
            cov[ra, rb] = C
            cov[rb, ra] = C.T
    return counts, mean, cov


@dataclass
class ConditionalViews(PackedState):
    """Gaussian model of the concatenated feature blocks, for completing missing views.

    A pickle stores the (exactly symmetric) covariance as one triangle
    (:class:`~mvkernels._packing.PackedState`), restored bit for bit.

    Attributes
    ----------
    mean : ndarray (v p,)
    cov : ndarray (v p, v p)
    n_views, block : int
    counts : ndarray (v, v) or None
        Rows where each pair of views is observed (None: estimated on complete rows).
    ridge : float
        Relative ridge ``eps / (trace(Sigma_OO) / dim(O))``.
    """

    mean: np.ndarray
    cov: np.ndarray
    n_views: int
    block: int
    counts: np.ndarray | None = None
    ridge: float = MISSING_RIDGE

    @classmethod
    def from_augmented(cls, gram: np.ndarray, n_views: int, block: int) -> ConditionalViews:
        counts, mean, cov = pairwise_statistics(gram, [block] * n_views)
        return cls(mean=mean, cov=cov, n_views=n_views, block=block, counts=counts)

    @classmethod
    def from_moments(cls, mom: Any, n_views: int, block: int) -> ConditionalViews:
        """From the moments of complete feature rows (``sum u``, centred ``sum u u^T``)."""
        n = float(mom.n_samples)
        return cls(
            mean=np.asarray(mom.sum, dtype=np.float64) / n,
            cov=np.asarray(mom.centered_gram(), dtype=np.float64) / n,
            n_views=n_views,
            block=block,
        )

    def _index(self, views: np.ndarray) -> np.ndarray:
        p = self.block
        return (views[:, None] * p + np.arange(p)[None, :]).ravel()

    def complete(self, U: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Fill the missing blocks of ``U`` (m, v p) in place by their conditional expectation.

        ``mask`` (m, v): observed views per row; the observed blocks of ``U`` are used,
        the missing ones overwritten.
        """
        for pat, rows in _patterns(mask):
            o, m, V, d = self._regression(pat)
            R = U[np.ix_(rows, o)] - self.mean[o]
            coef = (R @ V) / d  # (Sigma_OO + eps I)^{-1} (z_O - mu_O), row-wise
            U[np.ix_(rows, m)] = self.mean[m] + (coef @ V.T) @ self.cov[np.ix_(o, m)]
        return U

    def completed_outputs(
        self, G: np.ndarray, patterns: np.ndarray | None = None
    ) -> CompletedOutputs:
        """The exact compact form of the outputs ``u G^T`` of completed rows.

        For a pattern with observed blocks ``O`` and missing blocks ``M``, the completed
        row gives ``u G^T = z_O G_O^T + (mu_M + Sigma_MO (Sigma_OO + eps I)^{-1}
        (z_O - mu_O)) G_M^T = z_O B_O + b_O`` with

        ``B_O = G_O^T + (Sigma_OO + eps I)^{-1} Sigma_OM G_M^T`` and
        ``b_O = mu_M G_M^T - mu_O (B_O - G_O^T)``:

        ``|O| p x T`` numbers per pattern instead of the ``(v p)^2`` of ``Sigma``, for a
        linear model's ``T`` outputs (the same to rounding as :meth:`complete` followed
        by the product).

        Parameters
        ----------
        G : ndarray of shape (T, v p)
            The linear outputs' coefficients.
        patterns : ndarray of bool, shape (k, v), or None
            The patterns of observed views to cover (each with an observed and a missing
            view); None: every one (:func:`missing_patterns`).

        Returns
        -------
        CompletedOutputs
        """
        G = np.asarray(G, dtype=np.float64)
        if patterns is None:
            patterns = missing_patterns(self.n_views)
        coefs, offsets = [], []
        for pat in patterns:
            o, m = self._index(np.flatnonzero(pat)), self._index(np.flatnonzero(~pat))
            Gm = G[:, m].T  # (|M| p, T)
            corr = self._solve(pat, self.cov[np.ix_(o, m)] @ Gm)  # (|O| p, T)
            coefs.append(G[:, o].T + corr)
            offsets.append(self.mean[m] @ Gm - self.mean[o] @ corr)
        T = G.shape[0]
        return CompletedOutputs(
            patterns=np.asarray(patterns, dtype=bool).reshape(-1, self.n_views),
            coefs=coefs,
            offsets=np.asarray(offsets, dtype=np.float64).reshape(-1, T),
            block=self.block,
        )

    @property
    def nbytes(self) -> int:
        """Bytes of the stored arrays."""
        return int(self.mean.nbytes + self.cov.nbytes)

    @property
    def from_complete_rows(self) -> bool:
        """Whether the statistics were estimated on rows where every view is observed."""
        return self.counts is None or bool(np.all(self.counts == self.counts[0, 0]))

    def _solve(self, pat: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``(Sigma_OO + eps I)^{-1} B`` for the observed views of ``pat``.

        Statistics of complete rows (a covariance, positive semi-definite): one Cholesky
        factorisation (``eps`` is the mean eigenvalue, so the matrix is well conditioned;
        the eigenvalues that :meth:`_regression` clips at 0 are then rounding errors).
        Pairwise statistics: the clipped eigendecomposition of :meth:`_regression`.
        """
        if self.from_complete_rows:
            o = self._index(np.flatnonzero(pat))
            S_oo = sym(self.cov[np.ix_(o, o)])
            eps = self.ridge * max(float(np.trace(S_oo)) / o.size, np.finfo(float).tiny)
            L = robust_cholesky(S_oo + eps * np.eye(o.size))
            if L is not None:
                return linalg.cho_solve((L, True), B, check_finite=False)
        _, _, V, d = self._regression(pat)
        return V @ ((V.T @ B) / d[:, None])

    def _regression(self, pat: np.ndarray) -> tuple:
        """Observed / missing indices, eigenvectors ``V`` and ``s + eps`` of ``Sigma_OO``."""
        o = self._index(np.flatnonzero(pat))
        m = self._index(np.flatnonzero(~pat))
        S_oo = self.cov[np.ix_(o, o)]
        s, V = robust_eigh(0.5 * (S_oo + S_oo.T), what="observed-view feature covariance")
        s = np.maximum(s, 0.0)
        eps = self.ridge * max(float(s.sum()) / o.size, np.finfo(float).tiny)
        return o, m, V, s + eps


def missing_patterns(n_views: int, always_missing: int | None = None) -> np.ndarray:
    """Every pattern of observed views with an observed and a missing view, shape (k, v).

    ``always_missing``: a view that is missing in every such pattern (the joint view,
    observed exactly where every other view is): ``2^(v-1) - 2`` patterns instead of
    ``2^v - 2``.
    """
    grid = np.array(np.meshgrid(*[[False, True]] * n_views, indexing="ij")).reshape(n_views, -1).T
    keep = grid.any(axis=1) & ~grid.all(axis=1)
    if always_missing is not None:
        others = np.delete(grid, always_missing, axis=1)
        keep &= ~grid[:, always_missing] & others.any(axis=1) & ~others.all(axis=1)
    return grid[keep]


@dataclass
class CompletedOutputs:
    """Linear outputs of rows with missing views, exact and without the covariance.

    What a linear model ``u -> u G^T`` of the completed features needs of
    :class:`ConditionalViews` to predict a row with missing views: for each pattern of
    observed views ``O``, the outputs are ``z_O B_O + b_O`` (see
    :meth:`ConditionalViews.completed_outputs`), the same to rounding as completing the
    row's features and multiplying.

    Attributes
    ----------
    patterns : ndarray of bool, shape (k, v)
        The patterns of observed views covered.
    coefs : list of ndarray, shape (|O| p, T)
        ``B_O`` of each pattern.
    offsets : ndarray of shape (k, T)
        ``b_O`` of each pattern.
    block : int
        ``p``, the width of a view's feature block.
    """

    patterns: np.ndarray
    coefs: list
    offsets: np.ndarray
    block: int

    @property
    def nbytes(self) -> int:
        """Bytes of the stored arrays."""
        return int(sum(B.nbytes for B in self.coefs) + self.offsets.nbytes + self.patterns.nbytes)

    def fill(self, out: np.ndarray, U: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Overwrite the outputs ``out`` (m, T) of the rows with a missing view.

        ``U`` (m, v p): the feature blocks of the observed views (the missing ones are
        not read); ``mask`` (m, v): observed views per row. A pattern not covered raises
        a ValueError naming it.
        """
        p = self.block
        for pat, rows in _patterns(mask):
            hit = np.flatnonzero((self.patterns == pat).all(axis=1))
            if hit.size == 0:
                raise ValueError(
                    f"rows with observed views {np.flatnonzero(pat).tolist()} (and the "
                    "others missing) cannot be predicted: this pattern of missing views "
                    "was not prepared at fit"
                )
            k = int(hit[0])
            o = (np.flatnonzero(pat)[:, None] * p + np.arange(p)[None, :]).ravel()
            out[rows] = U[np.ix_(rows, o)] @ self.coefs[k] + self.offsets[k]
        return out


def _patterns(mask: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(pattern, rows)`` for each distinct pattern of observed views with a missing view."""
    patterns, inverse = np.unique(mask, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    return [(pat, np.flatnonzero(inverse == k)) for k, pat in enumerate(patterns) if not pat.all()]
