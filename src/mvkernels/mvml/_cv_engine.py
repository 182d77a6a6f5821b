"""The one seam between the cross-validated search (:mod:`.cv`) and the estimator it
searches: :class:`CVEngine`, which an estimator returns from ``_cv_engine()``.

The search reads everything it needs of an estimator through it: the loss (its flags,
its centred problems and offsets, the batched held-out outputs of
:meth:`~._losses.SquareLoss.subset_fold_outputs`), the fold paths of the block Nystrom
search (:meth:`~._losses.Loss.fold_paths`, :meth:`~._losses.Loss.fold_row_subsets`), the
full-kernel fold fits (the problem of a fold's kernels, Algorithm 1's recorded paths on
it, the held-out outputs of any coefficients) and the decision values of a refitted
model. So the search calls no other private method of an estimator, and a new loss or
estimator changes the search only through its own ``_make_loss`` (or ``_cv_engine``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ._driver import PathResult
from ._fitted_mode import FullFit
from ._losses import Loss
from ._problem import MVMLProblem

__all__ = ["CVEngine"]


class CVEngine:
    """What a cross-validated search reads of one estimator (``estimator._cv_engine()``).

    Parameters
    ----------
    estimator : _BaseMVML
        The estimator searched, with the parameters of a candidate but for its grid
        (``alpha``, ``eta``: the fold paths run every value; ``tol=None``). The full-kernel
        methods (:meth:`fold_problem`, :meth:`solve_path`, :meth:`outputs`) fit it on one
        fold (one engine per fold); the Nystrom fold paths fit a fresh copy per call, so
        that one engine serves every fold, in parallel threads too.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import MVMLRegressor
    >>> rng = np.random.default_rng(0)
    >>> Xs, y = [rng.normal(size=(30, 3)), rng.normal(size=(30, 2))], rng.normal(size=30)
    >>> est = MVMLRegressor(n_landmarks=None, metric="identity", joint_view=False)
    >>> engine = est._cv_engine()
    >>> problem = engine.fold_problem([X[:20] for X in Xs], y[:20, None])
    >>> [result] = engine.solve_path(problem, [(1.0, 1.0)])[0]  # one (alpha, eta), one target
    >>> G = (result.g * problem.weight_vector(result.w)).reshape(1, 2, 20)
    >>> engine.outputs(G, None, [X[20:] for X in Xs]).shape
    (10, 1)
    """

    def __init__(self, estimator: Any):
        self.estimator = estimator
        # a loss's solutions shared across this engine's folds (the hinge loss's first
        # g-steps, which seed the next fold's: HingeLoss.fold_seeds)
        self.fold_seeds: dict = {}

    @cached_property
    def loss(self) -> Loss:
        """The estimator's loss (:class:`~._losses.Loss`), built once per engine."""
        return self.estimator._make_loss()

    def check_params(self) -> None:
        """The estimator's parameter checks that the declarative constraints cannot
        express (``ValueError`` naming the parameter)."""
        self.estimator._check_params()

    @property
    def auto_feature_budget(self) -> int:
        """The total Nystrom features the estimator's ``n_landmarks="auto"`` aims at
        (its loss's budget, :func:`~mvkernels.mvml.auto_n_landmarks`): the search's
        landmark count under a named ``n_landmarks``."""
        return int(self.estimator._auto_feature_budget)

    def _fresh(self) -> Any:
        """A copy of the estimator with the same parameters (nothing fitted)."""
        est = self.estimator
        return type(est)(**est.get_params(deep=False))

    # ------------------------------------------------------------------ Nystrom folds
    def fold_paths(
        self,
        problem: MVMLProblem,
        Xtr: list,
        alphas: np.ndarray,
        etas: np.ndarray,
        K: int,
        rows: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Weighted coefficients ``w (.) g`` of every candidate on one fold's ``problem``,
        shape ``(n_alpha, n_eta, K, T, d)``, and the basis they are expressed in
        (:meth:`Loss.fold_paths <mvkernels.mvml._losses.Loss.fold_paths>`, with the
        fit context of a fresh copy of the estimator). ``rows``: the fold's training
        features when it has fewer rows than features."""
        est = self._fresh()
        loss = est._make_loss()
        share = getattr(loss, "share_fold_seeds", None)
        if share is not None:
            share(self.fold_seeds)
        return loss.fold_paths(est._fit_context(), problem, Xtr, alphas, etas, K, rows)

    def fold_row_subsets(
        self,
        feature_map: Any,
        U: np.ndarray,
        rows: list[np.ndarray],
        labels: list[np.ndarray],
        sample_weight: np.ndarray | None,
        alphas: np.ndarray,
        etas: np.ndarray,
        K: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The fold paths of one-target problems on subsets of a fold's training rows in
        batches (one-vs-one: the class pairs) and their offsets
        (:meth:`HingeLoss.fold_row_subsets
        <mvkernels.mvml._hinge_loss.HingeLoss.fold_row_subsets>`, on a fresh copy of the
        estimator); where :meth:`Loss.row_subsets_apply
        <mvkernels.mvml._losses.Loss.row_subsets_apply>` says so."""
        return (
            self._fresh()
            ._make_loss()
            .fold_row_subsets(feature_map, U, rows, labels, sample_weight, alphas, etas, K)
        )

    # ------------------------------------------------------------------ full-kernel folds
    def fold_problem(
        self, Xtr: list, Y: np.ndarray, loss_weight: np.ndarray | None = None
    ) -> MVMLProblem:
        """The problem of the training views ``Xtr`` (the fold's kernels, fitted on the
        estimator) with targets ``Y`` and the rows' loss weights ``loss_weight`` (None:
        unweighted), built by this engine's :attr:`loss` (one loss per fold)."""
        return self.estimator._fold_problem(Xtr, Y, loss_weight, self.loss)

    def solve_path(self, problem: MVMLProblem, grid: list) -> list[list[PathResult]]:
        """Algorithm 1 on ``problem`` at every ``(alpha, eta)`` of ``grid``, each result
        with its recorded path (one list of per-target results per pair), solved by this
        engine's :attr:`loss`."""
        return self.estimator._solve_path(problem, grid, record_path=True, loss=self.loss)

    def outputs(self, G: np.ndarray, offset: np.ndarray | None, X: list) -> np.ndarray:
        """Outputs ``(n_rows, T)`` on the views ``X`` of weighted coefficients ``G``
        ``(T, v, n)`` on the rows of :meth:`fold_problem` and offsets ``offset`` (T,)
        (None: none)."""
        return FullFit.outputs(self.estimator, G, offset=offset).outputs(X)

    # ------------------------------------------------------------------ fitted models
    def decision(self, X: Any) -> Any:
        """The decision values ``(n_rows, T)`` of the fitted estimator on the views ``X``."""
        return self.estimator._decision(X)
