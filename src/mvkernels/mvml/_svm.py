"""MVML-SVM: multi-view metric learning with the hinge loss (Huusari, Kadri & Capponi, JdS 2018).

Equation numbers are those of the paper
(``papers/002_69c5756a4c35ae14.txt``). The learning problem (eq. 6, with the hinge
weighted by ``C`` as the paper's dual box ``0 <= alpha_i <= C = 1/n`` implies)::

    min_{A, g, w}  C sum_i max(0, 1 - y_i w^T H_{x_i} g) + alpha <g, A^+ g> + eta R(A)

``alpha`` is the paper's lambda, ``R(A) = ||A||_F^2`` (dense) or the view-pair group norm
(sparse), exactly as in :mod:`mvkernels.mvml`. Everything except the loss is MVML's:
:class:`MVMLSVC` subclasses :class:`mvkernels.mvml.MVMLClassifier` and overrides only
its documented hooks (``docs/mvml.md``, "Extending: the g-step hook"):

* ``_g_step``: the dual of the hinge problem (eq. 7-8, dual constant ``1/(4 alpha)``,
  see :mod:`mvkernels.mvml._hinge`), i.e. a bias-free linear SVM with
  ``C' = C / (2 alpha)`` on the features ``F^T z_i`` (``A = F F^T``), by dual coordinate
  descent warm-started across outer iterations; O(n v p) per epoch in Nystrom mode;
* ``_data_loss``: ``C sum_i max(0, 1 - y_i f(x_i))``;
* ``_w_step``: the hinge-loss view weights (a small linear program, see :meth:`MVMLSVC._w_step`).

The A-steps (:func:`mvkernels.mvml.metric_step`, dense gradient / sparse proximal),
the fixed metrics (identity, Cov), kernels, block Nystrom map, one-vs-all, prediction
and the stopping rule are inherited unchanged. See ``docs/mvml_svm.md``.

Dask input (Nystrom mode only): the hinge loss has no sufficient statistics and the dual
coordinate descent needs random access to every row's features at every epoch, so the
training features ``U`` (n x vp) are computed on the workers and *gathered* to the client
(one pass, as a NumPy array) when they fit in :data:`DASK_GATHER_MAX_BYTES`; above it
``fit`` raises a ValueError that points to :class:`~mvkernels.MVMLClassifier` (square
loss, one Dask reduction, any n). Prediction on Dask views stays lazy (inherited).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from .._validation import is_dask_collection
from ._estimators import MVMLClassifier, _mvml_constraints
from ._hinge import hinge_gstep
from ._metric import PSDFactor
from ._problem import MVMLProblem

__all__ = ["MVMLSVC", "DASK_GATHER_MAX_BYTES"]

#: largest training feature matrix (n x vp float64, plus the n x K targets) that
#: :class:`MVMLSVC` gathers to the client on Dask input (2 GiB)
DASK_GATHER_MAX_BYTES = 2 * 1024**3


class MVMLSVC(MVMLClassifier):
    """Multi-view metric learning SVM (MVML-SVM): MVML with the hinge loss, one-vs-all.

    Binary problems are one hinge-loss MVML problem (``+1`` = ``classes_[1]``); with
    K > 2 classes, K independent one-vs-all problems sharing the kernels / Nystrom map.
    Algorithm 1 of the paper: alternate the g-step (dual of eq. 7, map eq. 8), the
    optional w-step and the unchanged MVML A-step (dense eq. 9 / 16, sparse eq. 12 / 18).

    Parameters
    ----------
    alpha : float, default=1e-5
        The paper's lambda: weight of ``<g, A^+ g>``. With the default ``C = 1/n`` the
        g-step is the standard SVM ``1/2 ||v||^2 + C' sum hinge`` with
        ``C' = 1 / (2 n alpha)`` (``C' ~ 56`` for n = 900). Larger values regularise
        strongly: 1e-3 (the default before 0.2) reached 82 % on uWave where 1e-5 reaches
        94 %; :class:`~mvkernels.MVMLSVCCV` selects it by cross-validation.
    eta : float, default=1.0
        Metric penalty (as :class:`~mvkernels.MVMLClassifier`).
    metric : {"dense", "sparse", "identity", "cov"}, default="dense"
        Learned dense / block-sparse metric (MVMLSVM / MVMLSVMsp), fixed identity
        (MVMLSVM_I) or cross-covariance metric (MVMLSVM_Cov).
    learn_weights : bool, default=False
        Learn the view weights ``w`` by minimising the hinge loss over the simplex;
        otherwise ``w = 1/v``.
    n_landmarks, landmarks, kernel, kernel_params, max_iter, tol, step_size, n_a_steps, \
sparse_threshold, eig_floor, chunk_size, views, random_state, solver, bandwidth_factor
        As :class:`~mvkernels.MVMLClassifier` (``random_state`` also seeds the coordinate
        order of the dual solver; the hinge loss always runs the reference solver).
    C : float or None, default=None
        Weight of the hinge loss; ``None`` means ``1 / n_samples``, the paper's choice
        (eq. 7). Only the ratio ``C / alpha`` enters the g-step; ``alpha`` and ``eta``
        alone set the A-step.
    svm_tol : float, default=1e-3
        Dual coordinate descent stops when every projected gradient (margin minus 1 on
        free multipliers) is below ``svm_tol``; it is tightened (down to 1e-8) when
        needed so that each g-step decreases the objective.
    svm_max_epochs : int, default=1000
        Maximum epochs of one dual coordinate descent run.
    shrinking : bool, default=True
        Shrinking heuristic of the dual coordinate descent (Hsieh et al. 2008).

    Attributes
    ----------
    classes_, metric_, metric_min_eigenvalue_, coef_, weights_, n_iter_, objective_, \
mode_, nystrom_, kernels_, n_views_
        As :class:`~mvkernels.MVMLClassifier`; ``objective_`` is the primal objective
        above after each outer iteration and after the final g-step.
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, K)
        The paper's multipliers ``alpha_i`` of the final g-step, ``0 <= alpha_i <= C``.
    C_ : float
        The hinge weight used (``1 / n`` when ``C=None``).
    objective_increase_ : float or ndarray of shape (K,)
        Largest relative increase of ``objective_`` between consecutive entries (0 when
        it is non-increasing). A ``ConvergenceWarning`` reports any increase above 1e-6.
    svm_epochs_ : int or ndarray of shape (K,)
        Total dual coordinate descent epochs over all g-steps.
    """

    def __init__(
        self,
        alpha: float = 1e-5,
        eta: float = 1.0,
        metric: str = "dense",
        learn_weights: bool = False,
        n_landmarks: int | float | str | None = "auto",
        landmarks: str = "uniform",
        kernel: Any = "rbf",
        kernel_params: Any = None,
        max_iter: int = 10,
        tol: float | None = None,
        step_size: float | str = "auto",
        n_a_steps: int = 1,
        sparse_threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
        solver: str = "auto",
        bandwidth_factor: float = 4.0,
        C: float | None = None,
        svm_tol: float = 1e-3,
        svm_max_epochs: int = 1000,
        shrinking: bool = True,
        joint_view: bool = False,
    ):
        super().__init__(
            alpha=alpha,
            eta=eta,
            metric=metric,
            learn_weights=learn_weights,
            n_landmarks=n_landmarks,
            landmarks=landmarks,
            kernel=kernel,
            kernel_params=kernel_params,
            max_iter=max_iter,
            tol=tol,
            step_size=step_size,
            n_a_steps=n_a_steps,
            sparse_threshold=sparse_threshold,
            eig_floor=eig_floor,
            chunk_size=chunk_size,
            views=views,
            random_state=random_state,
            solver=solver,
            bandwidth_factor=bandwidth_factor,
            joint_view=joint_view,
        )
        self.C = C
        self.svm_tol = svm_tol
        self.svm_max_epochs = svm_max_epochs
        self.shrinking = shrinking

    _parameter_constraints: dict = {
        **_mvml_constraints(),
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "svm_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "shrinking": ["boolean"],
    }

    # ------------------------------------------------------------------ params
    def _check_params(self) -> None:
        super()._check_params()
        if self.C is not None and (
            isinstance(self.C, bool)
            or not isinstance(self.C, Real)
            or not np.isfinite(self.C)
            or self.C <= 0
        ):
            raise ValueError(f"C must be None (1/n) or a finite number > 0, got {self.C!r}")
        if (
            isinstance(self.svm_tol, bool)
            or not isinstance(self.svm_tol, Real)
            or not self.svm_tol > 0
        ):
            raise ValueError(f"svm_tol must be a number > 0, got {self.svm_tol!r}")
        if (
            isinstance(self.svm_max_epochs, bool)
            or not isinstance(self.svm_max_epochs, Integral)
            or self.svm_max_epochs < 1
        ):
            raise ValueError(f"svm_max_epochs must be an int >= 1, got {self.svm_max_epochs!r}")
        if not isinstance(self.shrinking, (bool, np.bool_)):
            raise ValueError(f"shrinking must be a bool, got {self.shrinking!r}")

    # ------------------------------------------------------------------ Dask
    def _build_problem(self, X: Any, Y: Any) -> MVMLProblem:
        """MVML's problem; on Dask input, also gather ``U`` and ``Y`` (see module doc)."""
        problem = super()._build_problem(X, Y)
        if problem.mode != "nystrom" or not (
            is_dask_collection(problem.Y) or any(is_dask_collection(V) for V in problem.Xs)
        ):
            return problem
        import dask

        n, dim, T = problem.n_samples, problem.dim, problem.n_targets
        size = 8 * n * (dim + T)
        if size > DASK_GATHER_MAX_BYTES:
            raise ValueError(
                f"MVMLSVC on Dask input gathers the training features on the client (the "
                f"hinge-loss dual coordinate descent needs random access to all rows): "
                f"n x v p = {n} x {dim} float64 is {size / 2**30:.1f} GiB, above "
                f"mvkernels.mvml._svm.DASK_GATHER_MAX_BYTES = "
                f"{DASK_GATHER_MAX_BYTES / 2**30:.1f} GiB. Use MVMLClassifier (square "
                "loss, fitted by one Dask reduction for any n), fewer landmarks, or a "
                "subsample."
            )
        U = problem.feature_map.transform(problem.Xs)
        U, Yc = dask.compute(U, problem.Y)
        problem.U = np.asarray(U, dtype=np.float64)
        problem.Y = np.asarray(Yc, dtype=np.float64)
        return problem

    # ------------------------------------------------------------------ helpers
    def _hinge_weight(self, problem: MVMLProblem) -> float:
        return 1.0 / problem.n_samples if self.C is None else float(self.C)

    def _phi(self, problem: MVMLProblem, w: np.ndarray) -> np.ndarray:
        """Rows ``phi_i``: ``z_i = D_w u(x_i)`` (Nystrom) or the rows of ``W H`` (full).

        The Nystrom features ``U`` (n x vp) are computed once per fit (the hinge loss has
        no sufficient statistics) and kept until the end of ``fit``.
        """
        if problem.mode == "full":
            return problem.design(w)
        cache = getattr(self, "_train_features", None)
        if cache is None or cache[0] is not problem:
            cache = (problem, problem.features())
            self._train_features = cache
        return cache[1] * problem.weight_vector(w)

    def _solver_rng(self, state: dict, t: int) -> np.random.RandomState:
        """Coordinate-order generator of target ``t``: seeded by ``random_state`` (an int;
        0 otherwise, so that fits are reproducible) and ``t``; kept across g-steps."""
        if "rng" not in state:
            seed = int(self.random_state) if isinstance(self.random_state, Integral) else 0
            state["rng"] = np.random.RandomState((seed * 1009 + t) % (2**32))
        return state["rng"]

    # ------------------------------------------------------------------ hooks
    def _g_step(
        self, problem: MVMLProblem, t: int, factor: PSDFactor, w: np.ndarray, state: dict
    ) -> np.ndarray:
        """Hinge-loss g-step (eq. 7-8) for target column ``t``.

        Dual coordinate descent on the bias-free SVM with features ``F^T phi_i`` and
        ``C' = C / (2 alpha)``, warm-started from the previous multipliers of this target
        (``state["dual"]``). If the new ``g`` does not improve the objective on the
        previous one (possible when the solver stops at ``svm_tol`` after an A-step), the
        tolerance is divided by 10 and the solve resumed, down to 1e-8.
        """
        y = problem.Y[:, t]
        Phi = self._phi(problem, w)
        C = self._hinge_weight(problem)
        g_old = state.get("g")
        ref = None
        if g_old is not None:
            ref = self._data_loss(problem, t, g_old, w) + self.alpha * factor.quad(g_old)
        tol = float(self.svm_tol)
        while True:
            res = hinge_gstep(
                Phi,
                y,
                None,
                self.alpha,
                C,
                factors=[factor.F],
                tol=tol,
                max_epochs=int(self.svm_max_epochs),
                shrinking=bool(self.shrinking),
                alpha_init=state.get("dual"),
                random_state=self._solver_rng(state, t),
            )
            state["dual"] = res.alpha
            state["epochs"] = state.get("epochs", 0) + res.solver.n_epochs
            g = res.coef[0]
            if ref is None or tol <= 1e-8:
                break
            new = self._data_loss(problem, t, g, w) + self.alpha * float(res.reg[0])
            if new <= ref + 1e-12 * abs(ref):
                break
            tol *= 0.1
        state["g"] = g
        state["converged"] = res.solver.converged
        return g

    def _data_loss(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """Hinge loss ``C sum_i max(0, 1 - y_i w^T H_{x_i} g)`` (Nystrom: ``z_i^T g~``)."""
        margins = problem.Y[:, t] * (self._phi(problem, w) @ g)
        return float(self._hinge_weight(problem) * np.maximum(0.0, 1.0 - margins).sum())

    def _w_step(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Hinge-loss view weights: ``min_w sum_i max(0, 1 - y_i Z_i w)`` over the simplex.

        ``Z`` (n x v) holds the per-view outputs (column ``l`` = ``K_l g_l`` or
        ``U_l g~_l``, as in eq. 10 / 17). Only the loss depends on ``w``, so this is the
        exact w-minimiser; it is the linear program ``min sum xi`` s.t.
        ``xi_i >= 1 - y_i Z_i w``, ``xi >= 0``, ``w >= 0``, ``sum w = 1`` (HiGHS).
        The simplex fixes the scale as MVML's ``sum w = 1`` does (see
        :func:`mvkernels.mvml.least_squares_weights`), and ``w >= 0`` keeps the LP's
        vertex solutions from flipping the sign of a view. The current ``w`` is kept
        if the LP fails or does not improve the loss.
        """
        Z = problem.view_outputs(g)
        y = problem.Y[:, t]
        n, v = Z.shape
        c = np.concatenate([np.zeros(v), np.ones(n)])
        A_ub = np.hstack([-(y[:, None] * Z), -np.eye(n)])
        A_eq = np.concatenate([np.ones(v), np.zeros(n)])[None, :]
        res = linprog(
            c,
            A_ub=A_ub,
            b_ub=-np.ones(n),
            A_eq=A_eq,
            b_eq=[1.0],
            bounds=[(0, None)] * (v + n),
            method="highs",
        )
        if not res.success:
            return w
        w_new = np.asarray(res.x[:v], dtype=np.float64)
        old = np.maximum(0.0, 1.0 - y * (Z @ w)).sum()
        new = np.maximum(0.0, 1.0 - y * (Z @ w_new)).sum()
        return w_new if new <= old else w

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None) -> MVMLSVC:
        """Fit on views ``X`` (list of arrays, or one array cut by ``views``) and labels ``y``."""
        try:
            super().fit(X, y)
        finally:
            self._train_features = None
        states = self._fit_states
        n = self.n_samples_fit_
        self.C_ = 1.0 / n if self.C is None else float(self.C)
        duals = np.column_stack([s["dual"][:, 0] for s in states])
        epochs = np.array([s.get("epochs", 0) for s in states])
        incr: list[float] = []
        for h in self._histories:
            h = np.asarray(h)
            rel = (h[1:] - h[:-1]) / np.maximum(np.abs(h[:-1]), np.finfo(float).tiny)
            incr.append(float(max(rel.max(initial=0.0), 0.0)))
        increases = np.asarray(incr)
        single = duals.shape[1] == 1
        self.dual_coef_ = duals[:, 0] if single else duals
        self.svm_epochs_ = int(epochs[0]) if single else epochs
        self.objective_increase_ = float(increases[0]) if single else increases
        if np.any(increases > 1e-6):
            warnings.warn(
                f"MVMLSVC: the primal objective increased between outer iterations (largest "
                f"relative increase {increases.max():.3g}); the dual solver may have stopped "
                "early (svm_max_epochs) - see objective_ and objective_increase_",
                ConvergenceWarning,
                stacklevel=2,
            )
        if not all(s.get("converged", True) for s in states):
            warnings.warn(
                f"MVMLSVC: the dual coordinate descent reached svm_max_epochs="
                f"{self.svm_max_epochs} before svm_tol={self.svm_tol}",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self
