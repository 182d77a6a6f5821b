"""The hinge loss's solver state and its batches of targets.

:class:`HingeState` is one target column's solver state across the g-steps of
:class:`~mvkernels.mvml._hinge_loss.HingeLoss` (the last exact solution, from which the
next g-step is warm-started, and what failed before), with what the final multipliers of
its last g-step need (:class:`ExactDual` after an active-set solve,
:class:`PrimalSolution` after liblinear alone). :class:`RowSubsets` and
:class:`_Targets` let :meth:`HingeLoss.dense_paths` run one-target problems on subsets of
one feature matrix's rows (one-vs-one: the class pairs) as one batch of the active-set
solvers (:mod:`mvkernels.mvml._hinge_active`): a subset's problem runs on every row of its
group with weight 0 off its own rows, which is the subset's problem alone (rows of weight
0 never join the free or the bound set); :func:`row_subset_groups` cuts the subsets into
groups of bounded size.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from ._hinge import dual_from_primal
from ._problem import MVMLProblem

__all__ = [
    "HingeState",
    "ExactDual",
    "PrimalSolution",
    "RowSubsets",
    "ROW_SUBSET_BUDGET",
    "row_subset_groups",
    "row_subset_batches",
]


@dataclass
class ExactDual:
    """The multipliers of a g-step solved exactly (an active-set solve).

    Attributes
    ----------
    dual : ndarray of shape (n,)
        The SVM's multipliers ``a_i`` of every row, in its box ``[0, C' c_scale]``.
    c_scale : float
        The g-step's features were ``x_i / sqrt(c_scale)`` (box ``C' c_scale``).
    """

    dual: np.ndarray
    c_scale: float = 1.0

    def multipliers(self, n_rows: int) -> np.ndarray:
        """The SVM's multipliers of the ``n_rows`` rows (``dual`` itself)."""
        return self.dual


@dataclass
class PrimalSolution:
    """A g-step solved by liblinear alone (which returns ``v`` only): what the KKT
    recovery of its multipliers (:func:`~mvkernels.mvml._hinge.dual_from_primal`) reads.

    Attributes
    ----------
    features : ndarray of shape (len(rows), k) or callable
        The features of ``rows``, or a function ``rows -> features`` that rebuilds them
        (for a buffer that later g-steps reuse; called at the end of the fit only).
    rows : ndarray of int
        The rows that can be support vectors (margin ``<= 1 + band``; the others have
        ``a_i = 0``).
    labels, margins : ndarray of shape (len(rows),)
        Their labels ``y_i`` and margins ``y_i <x_i, v>``.
    weight : ndarray of shape (len(rows),) or None
        Their weights ``s_i`` (boxes ``C' s_i``; None: 1 each).
    coef : ndarray of shape (k,)
        liblinear's solution ``v``.
    box : float
        The SVM's ``C'`` (times ``c_scale``).
    band : float
        Margins within ``band`` of 1 are free (:func:`~mvkernels.mvml._hinge.dual_from_primal`).
    c_scale : float
        As :attr:`ExactDual.c_scale`.
    """

    features: np.ndarray | Callable[[np.ndarray], np.ndarray]
    rows: np.ndarray
    labels: np.ndarray
    margins: np.ndarray
    weight: np.ndarray | None
    coef: np.ndarray
    box: float
    band: float
    c_scale: float = 1.0

    def multipliers(self, n_rows: int) -> np.ndarray:
        """The SVM's multipliers of the ``n_rows`` rows (0 off :attr:`rows`)."""
        X = self.features(self.rows) if callable(self.features) else self.features
        a = np.zeros(n_rows)
        a[self.rows] = dual_from_primal(
            X,
            self.labels,
            self.coef,
            self.box,
            band=self.band,
            margins=self.margins,
            weight=self.weight,
        )
        return a


@dataclass
class HingeState:
    """The hinge g-step's solver state of one target column, across its g-steps.

    Attributes
    ----------
    g, margins : ndarray or None
        The last g-step's solution and margins ``y_i <x_i, v>`` of every row.
    exact : bool
        Whether the last g-step was solved exactly (active set): the next one may
        warm-start from its sets.
    no_polish : bool
        An active-set solve failed: later g-steps run liblinear at ``svm_tol`` directly.
    cold, polished : tuple or None
        A solution found beforehand for the next g-step: the first g-step solved with
        the other targets, or the warm start solved in lockstep with them.
    last : ExactDual, PrimalSolution or None
        What the final multipliers of the last g-step need (:meth:`HingeLoss.final_dual`).
    dual : ndarray or None
        Multipliers kept by a g-step that computes them itself (reference solvers).
    rng : numpy.random.RandomState or None
        liblinear's seed generator.
    offset : float
        ``fit_intercept``: the last g-step's offset ``b`` (0 without).
    epochs, warm_starts : int
        liblinear iterations and warm starts taken, over all g-steps.
    converged : bool
        Whether every liblinear run stopped on its tolerance.
    """

    g: np.ndarray | None = None
    margins: np.ndarray | None = None
    exact: bool = False
    no_polish: bool = False
    cold: tuple | None = None
    polished: tuple | None = None
    last: ExactDual | PrimalSolution | None = None
    dual: np.ndarray | None = None
    rng: np.random.RandomState | None = None
    offset: float = 0.0
    epochs: int = 0
    warm_starts: int = 0
    converged: bool = True

    def copy(self) -> HingeState:
        """An independent copy, for a path that continues from this state: liblinear's
        seed generator and the multipliers' record copied, the arrays shared (every
        g-step replaces them, none writes into them)."""
        twin = replace(self)
        twin.rng = copy.deepcopy(self.rng)
        twin.last = None if self.last is None else replace(self.last)
        return twin

    def release(self) -> None:
        """Drop what only the next g-step and the final multipliers read (solutions,
        margins, warm starts, liblinear's seeds): after a fit the state keeps its flags
        and counters, so a fitted (and pickled) model does not carry ``O(n)`` arrays per
        target column."""
        self.g = self.margins = self.cold = self.polished = None
        self.last = self.dual = self.rng = None


@dataclass
class RowSubsets:
    """One-target problems on subsets of the rows of one feature matrix (one-vs-one: the
    class pairs), whose paths :meth:`HingeLoss.dense_paths` runs in one batch.

    Attributes
    ----------
    problems : list of MVMLProblem
        The problem of each subset (its rows' features, labels and weights: what a fit
        on the subset alone reads).
    rows : list of ndarray of int
        Each subset's rows among the ``n_rows`` rows of the features given with them
        (increasing).
    n_rows : int
    """

    problems: list
    rows: list
    n_rows: int


#: :meth:`HingeLoss.fit_row_subsets` batches problems on row subsets in groups of at
#: most about this many (problem, row) entries (:func:`row_subset_groups`): the batched
#: active sets run every problem of a group on all the group's rows, and past some size
#: the rows off each problem cost more than the batch saves. Measured on default
#: ``MVMLSVC()`` fits of Gaussian classes (20 features in 2 views; 5 to 26 classes of 40
#: to 200 rows): 5e4 was the fastest or within the timing noise of it on every case
#: (2e4 to 1e9 tried; one batch of every pair on every row was 1.9x slower than 5e4 with
#: 26 classes of 150 rows, and as fast with 10 classes of 60 rows)
ROW_SUBSET_BUDGET = 50_000


def row_subset_groups(rows: list[np.ndarray], n: int, budget: int) -> list[list[int]]:
    """Groups of the subsets ``rows`` (of ``range(n)``) to batch together, each with
    ``len(group) x |union of its rows|`` at most ``budget`` where possible.

    The rows are cut into atoms, rows in the same subsets (one-vs-one: the classes); the
    atoms, in order, into ``g`` blocks of about equal counts, and a group holds the
    subsets that meet the same blocks (one-vs-one: the pairs of two blocks of classes, on
    their rows): the smallest ``g`` whose groups all fit the budget (one group, every
    subset on every row, when that fits).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat(np.arange(4), 10)  # four classes, their six pairs
    >>> pairs = [np.flatnonzero((y == i) | (y == j)) for i in range(4) for j in range(i + 1, 4)]
    >>> row_subset_groups(pairs, 40, 240)  # 6 x 40 rows: one batch
    [[0, 1, 2, 3, 4, 5]]
    >>> row_subset_groups(pairs, 40, 100)  # blocks of classes {0, 1}, {2}, {3}
    [[0], [1, 3], [2, 4], [5]]
    """
    P = len(rows)
    member = np.zeros((n, P), dtype=bool)
    for k, r in enumerate(rows):
        member[r, k] = True
    packed = np.ascontiguousarray(np.packbits(member, axis=1))
    keyed = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, atom = np.unique(keyed, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # atoms in the order of their first row
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    atom = rank[np.ravel(atom)]
    n_atoms = order.size
    sizes = np.bincount(atom, minlength=n_atoms)
    atoms_of = [np.unique(atom[r]) for r in rows]
    groups: dict[tuple, list[int]] = {}
    for g in range(1, n_atoms + 1):
        block = (np.arange(n_atoms) * g) // n_atoms  # atom -> block
        block_rows = np.bincount(block, weights=sizes)
        groups = {}
        for k, a in enumerate(atoms_of):
            groups.setdefault(tuple(sorted(set(block[a].tolist()))), []).append(k)
        if all(len(m) * block_rows[list(key)].sum() <= budget for key, m in groups.items()):
            break
    return sorted(groups.values())


def row_subset_batches(
    problems: list[MVMLProblem], rows: list[np.ndarray], features: np.ndarray, budget: int
) -> Iterator[tuple[list[int], RowSubsets, np.ndarray]]:
    """The one-target ``problems`` on the rows ``rows[k]`` of ``features`` (n, d), in the
    groups of :func:`row_subset_groups`: per group, its problems' indices, their
    :class:`RowSubsets` (rows renumbered within the group's rows) and the group's rows
    of ``features`` (``features`` itself when the group holds every row)."""
    for group in row_subset_groups(rows, features.shape[0], budget):
        union = np.unique(np.concatenate([rows[k] for k in group]))
        subsets = RowSubsets(
            [problems[k] for k in group],
            [np.searchsorted(union, rows[k]) for k in group],
            union.size,
        )
        yield group, subsets, features if union.size == features.shape[0] else features[union]


class _Targets:
    """The targets of a batch of hinge-loss paths (:meth:`HingeLoss.dense_paths`): the
    columns of ``problem``'s targets on all its rows, or (``subsets``) one problem per
    row subset. The batched solvers (:mod:`._hinge_active`) run every target on all the
    rows, a subset's with weight 0 off its rows; a subset's solver state keeps its own
    rows only (:meth:`local`), as a fit on the subset alone does."""

    def __init__(self, problem: MVMLProblem, subsets: RowSubsets | None = None):
        self.problem, self.subsets = problem, subsets
        self.n = problem.n_samples if subsets is None else subsets.n_rows
        self.T = problem.n_targets if subsets is None else len(subsets.rows)

    def of(self, t: int) -> tuple[MVMLProblem, int]:
        """Target ``t``'s problem and its column there."""
        return (self.problem, t) if self.subsets is None else (self.subsets.problems[t], 0)

    def labels(self, ts: list[int]) -> np.ndarray:
        """The labels of the targets ``ts`` on all rows, (n, len(ts)) (0 off a subset)."""
        if self.subsets is None:
            return self.problem.Y[:, ts]
        Y = np.zeros((self.n, len(ts)))
        for j, t in enumerate(ts):
            Y[self.subsets.rows[t], j] = self.subsets.problems[t].Y[:, 0]
        return Y

    def weights(
        self, row_weight: Callable[[MVMLProblem], np.ndarray | None], ts: list[int]
    ) -> np.ndarray | None:
        """The rows' weights of the targets ``ts`` (``row_weight``: a problem's loss
        weights, :meth:`HingeLoss.row_weight`): the problem's (None, or (n,) shared);
        subsets: (len(ts), n), each subset's weights on its rows and 0 elsewhere."""
        if self.subsets is None:
            return row_weight(self.problem)
        Wt = np.zeros((len(ts), self.n))
        for j, t in enumerate(ts):
            sw = row_weight(self.subsets.problems[t])
            Wt[j, self.subsets.rows[t]] = 1.0 if sw is None else sw
        return Wt

    def margins(self, ts: list[int], local: list[np.ndarray]) -> np.ndarray:
        """The targets' margins (each on its own rows) on all rows, (len(ts), n); off a
        subset ``inf`` (read as nothing: those rows have weight 0)."""
        if self.subsets is None:
            return np.array(local)
        M = np.full((len(ts), self.n), np.inf)
        for j, t in enumerate(ts):
            M[j, self.subsets.rows[t]] = local[j]
        return M

    def local(self, t: int, solved: tuple) -> tuple:
        """A batched solution ``(v, a, m)`` of target ``t`` on its own rows."""
        if self.subsets is None:
            return solved
        v, a, m = solved
        rows = self.subsets.rows[t]
        return v, a[rows], m[rows]
