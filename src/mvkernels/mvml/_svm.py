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
  ``C' = C / (2 alpha)`` on the features ``F^T z_i`` (``A = F F^T``), solved exactly by
  active-set solves (the first g-step from scratch for all targets at once, the later
  ones warm-started) or, where these give up, by scikit-learn's liblinear (compiled dual
  coordinate descent, O(n v p) per pass);
* ``_fit_structured``: with fixed weights and a dense / identity / Cov metric, the
  dense A-step keeps ``A = s I + W W^T`` (:class:`~mvkernels.mvml._lowrank.LowRankMetrics`,
  shared with the square-loss structured solver), so the g-step features are
  ``[sqrt(s) z_i, W^T z_i]`` and no ``(vp) x (vp)`` factorisation is ever computed;
* ``_data_loss``: ``C sum_i max(0, 1 - y_i f(x_i))``;
* ``_w_step``: the hinge-loss view weights (a small linear program, see :meth:`MVMLSVC._w_step`).

The A-steps (dense gradient / sparse proximal, :func:`mvkernels.mvml.metric_step` or
its low-rank form), the fixed metrics (identity, Cov), kernels, block Nystrom map,
one-vs-all, prediction and the stopping rule are inherited unchanged. See ``docs/mvml_svm.md``.

Dask input (Nystrom mode only): the hinge loss has no sufficient statistics and the dual
coordinate descent (liblinear) needs random access to every row's features at every epoch, so the
training features ``U`` (n x vp) are computed on the workers and *gathered* to the client
(one pass, as a NumPy array) when they fit in :data:`DASK_GATHER_MAX_BYTES`; above it
``fit`` raises a ValueError that points to :class:`~mvkernels.MVMLClassifier` (square
loss, one Dask reduction, any n). Prediction on Dask views stays lazy (inherited).
"""

from __future__ import annotations

import copy
import warnings
from contextlib import nullcontext
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from .._arrays import is_dask_collection
from .._threads import serial_blas
from ..nystrom import FeatureMoments
from ..nystrom._missing import ConditionalViews
from ._estimators import MVMLClassifier, _mvml_constraints
from ._hinge import (
    COLD_ADD,
    COLD_MIN_BOX,
    PRESOLVE_TOL,
    WARM_BAND,
    WARM_ROUNDS,
    LinearSVMResult,
    active_set_svm,
    dual_from_primal,
    linear_svm_polished,
    polish_active_set,
    polish_active_sets,
    polish_applies,
    svm_c_prime,
)
from ._lowrank import LowRankMetrics
from ._metric import LEARNED_METRICS, PSDFactor
from ._problem import MVMLProblem

__all__ = ["MVMLSVC", "DASK_GATHER_MAX_BYTES", "HINGE_FEATURE_BUDGET"]

#: largest training feature matrix (n x vp float64, plus the n x K targets) that
#: :class:`MVMLSVC` gathers to the client on Dask input (2 GiB)
DASK_GATHER_MAX_BYTES = 2 * 1024**3

#: ``n_landmarks="auto"`` of the hinge-loss estimators: about 200 Nystrom features in all
#: (:func:`~mvkernels.mvml.auto_n_landmarks`). Every g-step runs the dual solver over all
#: ``n x v p`` features (the hinge loss has no sufficient statistics), so its cost is
#: linear in ``v p``: the square-loss budget (600) makes each g-step about three times
#: dearer, and on digits (2 views) 100 landmarks per view were as accurate as 300
HINGE_FEATURE_BUDGET = 200


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
    n_landmarks : "auto", None, int or float in (0, 1], default="auto"
        As :class:`~mvkernels.MVMLClassifier`, but ``"auto"`` aims at about 200 Nystrom
        features in all (``p = min(n, ceil(200 / v))`` landmarks per view,
        :data:`~mvkernels.mvml._svm.HINGE_FEATURE_BUDGET`): every g-step runs the dual solver
        over all ``n x v p`` features.
    max_iter : int, default=2
        Outer iterations of Algorithm 1 (each: g-step, A-step), then a final g-step. Two
        are as accurate as ten on the benchmark data (``docs/mvml_svm.md``) at a fraction of
        the cost; :class:`~mvkernels.MVMLSVCCV` selects the number by cross-validation.
    landmarks, kernel, kernel_params, tol, step_size, n_a_steps, \
sparse_threshold, eig_floor, chunk_size, views, random_state, solver, bandwidth_factor, \
joint_view
        As :class:`~mvkernels.MVMLClassifier` (``random_state`` also seeds liblinear's
        coordinate order). ``solver="auto"`` runs the low-rank dense A-step (fixed weights,
        dense / identity / Cov metric); ``"dense"`` the reference A-step with a
        factorisation of the ``(vp) x (vp)`` metric per step. Both give the same model
        up to the dual solver's tolerance.
    C : float or None, default=None
        Weight of the hinge loss; ``None`` means ``1 / n_samples``, the paper's choice
        (eq. 7). Only the ratio ``C / alpha`` enters the g-step; ``alpha`` and ``eta``
        alone set the A-step.
    svm_tol : float, default=1e-3
        liblinear's tolerance: it stops when the projected gradients (margins minus 1 on
        free multipliers) spread by at most ``svm_tol``; it is tightened (down to 1e-8)
        when needed so that each g-step decreases the objective. Each g-step first tries
        the exact solution: the first g-step by an active set grown from scratch
        (:func:`mvkernels.mvml._hinge.active_set_svm`, no liblinear run), the later ones
        from the previous exact g-step's active set solved on the new features (a warm
        start, no liblinear run), else liblinear at tolerance 0.03 and its active set
        solved exactly (:func:`mvkernels.mvml._hinge.linear_svm_polished`); ``svm_tol``
        applies when that fails.
    svm_max_epochs : int, default=10000
        Maximum liblinear iterations (passes over the active coordinates) of one g-step.
    probability : bool, default=False
        Enable ``predict_proba`` (as :class:`~mvkernels.MVMLClassifier`: softmax of the
        decision values with a slope fitted on 5-fold out-of-fold values; 5 extra fits).

    Attributes
    ----------
    classes_, metric_, metric_min_eigenvalue_, coef_, weights_, n_iter_, objective_, \
mode_, nystrom_, kernels_, n_views_
        As :class:`~mvkernels.MVMLClassifier`; ``objective_`` is the primal objective
        above after each outer iteration and after the final g-step.
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, K)
        The paper's multipliers ``alpha_i`` of the final g-step, ``0 <= alpha_i <= C``:
        those of its active-set solve, or, after liblinear alone, recovered from its
        solution by the KKT conditions (:func:`mvkernels.mvml._hinge.dual_from_primal`;
        liblinear returns ``v`` only).
    C_ : float
        The hinge weight used (``1 / n`` when ``C=None``).
    objective_increase_ : float or ndarray of shape (K,)
        Largest relative increase of ``objective_`` between consecutive entries (0 when
        it is non-increasing). A ``ConvergenceWarning`` reports any increase above 1e-6.
    svm_epochs_ : int or ndarray of shape (K,)
        Total liblinear iterations over all g-steps.

    See Also
    --------
    MVMLSVCCV : The same with built-in cross-validation of the hyperparameters.
    MVMLClassifier : MVML with the square loss on +-1 targets.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import MVMLSVC
    >>> rng = np.random.RandomState(0)
    >>> X1, X2 = rng.randn(60, 3), rng.randn(60, 2)
    >>> y = (X1[:, 0] + X2[:, 0] > 0).astype(int)
    >>> clf = MVMLSVC(max_iter=3, random_state=0).fit([X1, X2], y)
    >>> clf.solver_, bool(clf.score([X1, X2], y) > 0.9)
    ('structured', True)
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
        max_iter: int = 2,
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
        svm_max_epochs: int = 10000,
        probability: bool = False,
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
            probability=probability,
            joint_view=joint_view,
        )
        self.C = C
        self.svm_tol = svm_tol
        self.svm_max_epochs = svm_max_epochs

    _auto_feature_budget = HINGE_FEATURE_BUDGET

    #: warm-start each g-step from the previous exact one (see :meth:`_svm_g`); tests and
    #: the benchmark switch it off to compare with cold solves
    _warm_start = True

    _parameter_constraints: dict = {
        **_mvml_constraints(),
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "svm_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "probability": ["boolean"],
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

    # ------------------------------------------------------------------ Dask
    def _build_problem(self, X: Any, Y: Any) -> MVMLProblem:
        """MVML's problem; on Dask input, also gather ``U`` and ``Y`` (see module doc).

        Up to :data:`~mvkernels._threads.SERIAL_BLAS_MAX_SIZE` rows the kernel rows, the
        features and their moments are thin products: one BLAS thread is faster (measured
        5-10x on 2 shared cores for the digits features)."""
        threads = nullcontext() if is_dask_collection(Y) else serial_blas(int(Y.shape[0]))
        with threads:
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
                f"hinge-loss dual solver needs random access to all rows): "
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

    def _nystrom_problem(self, nys: Any, Xs: list, Y: Any, complete: bool) -> MVMLProblem:
        """NumPy input: the features ``U`` are computed once and kept (every g-step needs
        them). The hinge loss needs no sufficient statistics: only the Cov metric's
        initial metric and, with complete training rows, the map's missing-view
        statistics read them (from ``U``, not from a second pass over the data)."""
        if is_dask_collection(Y) or any(is_dask_collection(V) for V in Xs):
            return super()._nystrom_problem(nys, Xs, Y, complete)
        Xs = nys.check_views(Xs)
        Y = np.asarray(Y, dtype=np.float64)
        U = nys.features(Xs)
        n, v, p = U.shape[0], int(nys.n_views_), int(nys.n_landmarks_)
        if complete or self.metric == "cov":
            # the target moments only for the Cov metric's problem (the missing-view model
            # reads the feature moments alone)
            mom = FeatureMoments.from_features(
                U, Y.reshape(n, -1) if self.metric == "cov" else None
            )
            if complete:
                nys.set_missing_model(ConditionalViews.from_moments(mom, v, p))
            if self.metric == "cov":
                return MVMLProblem.from_moments(mom, nys, Y, Xs=Xs, U=U)
        return MVMLProblem("nystrom", n, v, p, Y, feature_map=nys, Xs=Xs, U=U)

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
            cache = (problem, problem.features(), {})
            self._train_features: tuple | None = cache
        key = np.asarray(w, dtype=np.float64).tobytes()
        weighted = cache[2]
        if key not in weighted:
            weighted.clear()
            weighted[key] = cache[1] * problem.weight_vector(w)
        return weighted[key]

    def _solver_rng(self, state: dict, t: int) -> np.random.RandomState:
        """liblinear's seed generator for target ``t``: seeded by ``random_state`` (an int;
        0 otherwise, so that fits are reproducible) and ``t``; kept across g-steps."""
        if "rng" not in state:
            seed = int(self.random_state) if isinstance(self.random_state, Integral) else 0
            state["rng"] = np.random.RandomState((seed * 1009 + t) % (2**32))
        return state["rng"]

    def _svm_g(
        self,
        problem: MVMLProblem,
        t: int,
        X: np.ndarray,
        state: dict,
        value: Any,
        objective: Any,
        ref: Any,
        c_scale: float = 1.0,
        rebuild: Any = None,
    ) -> np.ndarray:
        """The g-step of target ``t`` on the features ``X = F^T phi_i``; returns ``g``.

        ``value(v) -> g`` and ``objective(g, m)`` with ``m`` the margins
        ``y_i <x_i, v>`` of all rows (the hinge loss is ``C sum max(0, 1 - m)``). If an
        inexact ``g`` (liblinear's alone) does not improve the objective on ``ref()`` (the
        previous ``g`` under the current metric, or None; possible when the solver stops at
        ``svm_tol`` after an A-step), the tolerance is divided by 10 and the problem solved
        again, down to 1e-8. An exact solution (active set) is the minimiser: neither
        objective is computed then.

        A solution found beforehand is taken as it is: the first g-step's
        (``state["cold"]``, :meth:`_first_g_steps`) or the warm start solved with the other
        targets (``state["polished"]``, :meth:`_warm_g_steps`).

        Warm start: after an exact g-step (``state["exact"]``), the next one first solves
        the previous active set on the new features
        (:func:`~mvkernels.mvml._hinge.polish_active_set`, band
        :data:`~mvkernels.mvml._hinge.WARM_BAND`, at most
        :data:`~mvkernels.mvml._hinge.WARM_ROUNDS` corrections, each adding at most
        :data:`~mvkernels.mvml._hinge.COLD_ADD` rows to the free set, KKT-verified); liblinear does
        not run when that succeeds (counted in ``state["warm_starts"]``). Otherwise
        liblinear (which has no warm start) runs on a working set of rows chosen by the previous
        margins, with an exact check on all rows
        (:func:`~mvkernels.mvml._hinge.linear_svm_working_set`), at a loose tolerance
        whose active set is then solved exactly
        (:func:`~mvkernels.mvml._hinge.linear_svm_polished`; liblinear at ``svm_tol``
        when that fails).
        """
        y = problem.Y[:, t]
        # features given as x_i / sqrt(c_scale): the same problem with C' c_scale
        Cp = svm_c_prime(self._hinge_weight(problem), self.alpha) * c_scale
        tol = float(self.svm_tol)
        warm = cold = state.pop("cold", None)  # solved with the other targets (first g-step)
        polished = state.pop("polished", None)  # solved with the others: _warm_g_steps
        if cold is None and polished is not None:
            warm = polished
        elif cold is None and self._warm_start_applies(state):
            # warm start: the previous exact g-step's active set (rows at the bound, on
            # the margin, inactive) solved on the new features, KKT-verified on every row
            warm = polish_active_set(
                X, y, Cp, state["margins"], WARM_BAND, rounds=WARM_ROUNDS, max_add=COLD_ADD
            )
        if warm is not None:
            v, dual, margins = warm
            res = LinearSVMResult(v, 0, True)
            g = value(v)
            if cold is None:
                state["warm_starts"] = state.get("warm_starts", 0) + 1
        while warm is None:
            res, margins, dual = linear_svm_polished(
                X,
                y,
                Cp,
                state.get("margins"),
                tol=tol,
                max_iter=int(self.svm_max_epochs),
                random_state=self._solver_rng(state, t),
                # after one failed active-set solve (e.g. a noisy, low-dimensional
                # problem), this target's g-steps run liblinear at svm_tol directly
                presolve_tol=tol if state.get("no_polish") else PRESOLVE_TOL,
            )
            state["no_polish"] = state.get("no_polish", False) or dual is None
            state["epochs"] = state.get("epochs", 0) + res.n_iter
            g = value(res.coef)
            if dual is not None or tol <= 1e-8:
                break  # an exact solution (dual) is the minimiser: no tighter tolerance
            r = ref() if ref is not None else None
            if r is None or objective(g, margins) <= r + 1e-12 * abs(r):
                break
            tol *= 0.1
        state["g"] = g
        state["margins"] = margins
        state["exact"] = dual is not None
        state["converged"] = state.get("converged", True) and res.converged
        if dual is not None:  # the multipliers of the exact solution
            state["last"] = dict(a=dual, c_scale=c_scale)
            return g
        # what the final multipliers need: the rows that can be support vectors (margin
        # <= 1 + band; the others have a_i = 0), or ``rebuild(rows)`` for a reused buffer
        band = max(tol, 1e-9)
        rows = np.flatnonzero(margins <= 1.0 + band)
        state["last"] = dict(
            X=X[rows] if rebuild is None else rebuild,  # rebuilt at the end of fit only
            rows=rows,
            y=y[rows],
            v=res.coef,
            Cp=Cp,
            band=band,
            c_scale=c_scale,
            margins=margins[rows],
        )
        return g

    def _g_step(
        self, problem: MVMLProblem, t: int, factor: PSDFactor, w: np.ndarray, state: dict
    ) -> np.ndarray:
        """Hinge-loss g-step (eq. 7-8) for target column ``t``, any metric factor.

        liblinear on the bias-free SVM with features ``F^T phi_i`` and
        ``C' = C / (2 alpha)`` (see :meth:`_svm_g`); ``g = F v``.
        """
        F = factor.F
        X = self._phi(problem, w) @ F
        g_old = state.get("g")

        def ref() -> float | None:
            if g_old is None:
                return None
            return self._data_loss(problem, t, g_old, w) + self.alpha * factor.quad(g_old)

        def value(v: np.ndarray) -> np.ndarray:
            return F @ v

        def objective(g: np.ndarray, m: np.ndarray) -> float:
            return self._hinge_from_margins(problem, m) + self.alpha * factor.quad(g)

        return self._svm_g(problem, t, X, state, value, objective, ref)

    # ------------------------------------------------------------------ structured
    def _structured_applies(self, problem: MVMLProblem) -> bool:
        """Low-rank path: fixed weights and a dense (from ``A = I``) or fixed metric, in
        both modes (the hinge g-step only needs the features), and this class's g-step
        and loss (a subclass that overrides them gets the dense reference path)."""
        return (
            self.solver == "auto"
            and type(self)._g_step is MVMLSVC._g_step
            and type(self)._data_loss is MVMLSVC._data_loss
            and not self.learn_weights
            and self.metric in ("dense", "identity", "cov")
        )

    def _fit_structured(
        self, problem: MVMLProblem, A0: np.ndarray, record_path: bool = False
    ) -> list[dict]:
        """Algorithm 1 with the hinge g-step and the low-rank dense A-step.

        The metric of every target is ``A = s I + W W^T``
        (:class:`~mvkernels.mvml._lowrank.LowRankMetrics`, the same A-step as the
        square-loss structured solver); with ``F = [sqrt(s) I, W]`` the g-step features
        are ``[sqrt(s) phi_i, W^T phi_i]`` (``O(n d r)`` per g-step) and
        ``<g, A^{-1} g>`` comes from the Woodbury identity. Same iterates as the dense
        path (:meth:`_fit_target`) up to the dual solver's tolerance. Fixed metrics
        (identity, Cov) need one g-step.
        """
        v, T = problem.n_views, problem.n_targets
        w = np.full(v, 1.0 / v)
        Phi = self._phi(problem, w)
        states: list[dict] = [{} for _ in range(T)]
        alpha = float(self.alpha)
        if self.metric not in LEARNED_METRICS:
            factor = PSDFactor(A0, eig_floor=self.eig_floor)
            out = []
            for t in range(T):
                g = self._g_step(problem, t, factor, w, states[t])
                obj = self._data_loss(problem, t, g, w) + alpha * factor.quad(g)
                out.append(
                    dict(
                        A=A0,
                        g=g,
                        w=w,
                        history=np.array([obj]),
                        n_iter=1,
                        converged=True,
                        state=states[t],
                        path=g[None],
                        path_w=w[None],
                    )
                )
            return out
        return self._dense_paths(problem, Phi, w, [float(self.eta)])

    def _dense_paths(
        self,
        problem: MVMLProblem,
        Phi: np.ndarray,
        w: np.ndarray,
        etas: list[float],
        seed_margins: np.ndarray | None = None,
    ) -> list[dict]:
        """The low-rank dense path of every ``(eta, target)`` pair, ``eta``-major.

        The first g-step (metric ``A = I``) does not depend on ``eta``: it is solved once
        per target and shared by every ``eta`` (with a copy of its solver state, so that
        each path continues exactly as a fit with that ``eta`` alone); it is solved for
        every target at once by the active set from scratch (:meth:`_first_g_steps`).
        ``seed_margins`` (T, n), e.g. the first g-step's margins at a neighbouring
        ``alpha``, choose liblinear's working set of rows for a target where that gives up
        (the result is exact whatever they are, see
        :func:`~mvkernels.mvml._hinge.linear_svm_working_set`); each result's
        ``"first_margins"`` holds the margins of its first g-step.
        """
        T, d = problem.n_targets, problem.dim
        E = len(etas)
        B = E * T
        alpha = float(self.alpha)
        R = self.max_iter * self.n_a_steps
        mets = LowRankMetrics.identity(B, d, R)
        states: list[dict] = [{} for _ in range(B)]
        if seed_margins is not None:
            for t in range(T):
                states[t]["margins"] = np.asarray(seed_margins[t], dtype=np.float64)
        first_margins: list[np.ndarray] = []
        # features x_i / sqrt(s) = [phi_i, W^T phi_i / sqrt(s)] (the problem with C' s):
        # phi_i written once; liblinear skips the zero columns of the A-steps to come
        X = np.zeros((Phi.shape[0], d + R))
        X[:, :d] = Phi
        self._first_g_steps(problem, X, states[:T])

        def g_step(b: int) -> np.ndarray:
            t = b % T
            r = mets.r
            W = mets.columns(b)
            sq = np.sqrt(mets.s[b])
            if r and "polished" not in states[b]:  # (the solution needs no features)
                X[:, d : d + r] = (Phi @ W) / sq
            g_old, m_old = states[b].get("g"), states[b].get("margins")

            def ref() -> float | None:  # read only after an inexact solve
                if g_old is None:
                    return None
                q_old = mets.solve([b], g_old[None])[0][0]
                # margins do not depend on the metric (fixed weights): no product with Phi
                return self._hinge_from_margins(problem, m_old) + alpha * float(g_old @ q_old)

            def value(vv: np.ndarray, W: np.ndarray = W, sq: float = sq) -> np.ndarray:
                return vv[:d] + W @ (vv[d : d + r] / sq)  # g = F v with v = vv / sqrt(s)

            def objective(g: np.ndarray, m: np.ndarray) -> float:
                q = mets.solve([b], g[None])[0][0]
                return self._hinge_from_margins(problem, m) + alpha * float(g @ q)

            def rebuild(rows: np.ndarray, W: np.ndarray = W, sq: float = sq) -> np.ndarray:
                Xb = np.zeros((rows.size, X.shape[1]))
                Xb[:, :d] = Phi[rows]
                Xb[:, d : d + W.shape[1]] = (Phi[rows] @ W) / sq
                return Xb

            return self._svm_g(
                problem,
                t,
                X,
                states[b],
                value,
                objective,
                ref,
                c_scale=float(mets.s[b]),
                rebuild=rebuild,
            )

        histories: list[list[float]] = [[] for _ in range(B)]
        paths: list[list[np.ndarray]] = [[] for _ in range(B)]
        n_iter = np.zeros(B, dtype=int)
        converged = np.zeros(B, dtype=bool)
        active = np.arange(B)
        al = np.full(B, alpha)
        et = np.repeat(np.asarray(etas, dtype=np.float64), T)
        G = np.zeros((B, d))
        for it in range(self.max_iter):
            if active.size == 0:
                break
            n_iter[active] = it + 1
            if it > 0:
                self._warm_g_steps(problem, Phi, mets, states, active.tolist())
            for b in active.tolist():
                if it == 0 and b >= T:  # A = I for every eta: share the first g-step
                    G[b] = G[b % T]
                    states[b] = copy.deepcopy(states[b % T])
                else:
                    G[b] = g_step(int(b))
                if it == 0 and b < T:
                    first_margins.append(states[b]["margins"])
                if it > 0:
                    paths[b].append(G[b])
            s_obj = np.zeros(active.size)
            for _ in range(self.n_a_steps):
                q, Wq, xg = mets.solve(active, G[active])
                s_obj = mets.a_step(
                    active, G[active], q, Wq, xg, al[active], et[active], self.step_size
                )
            for j, b in enumerate(active.tolist()):
                loss = self._hinge_from_margins(problem, states[b]["margins"])
                histories[b].append(loss + float(s_obj[j]))
            if self.tol is not None:
                for b in active.tolist():
                    h = histories[b]
                    if len(h) > 1 and abs(h[-2] - h[-1]) <= self.tol * max(
                        abs(h[-2]), np.finfo(float).tiny
                    ):
                        converged[b] = True
                active = np.flatnonzero(~converged)
        out = []
        self._warm_g_steps(problem, Phi, mets, states, list(range(B)))
        for b in range(B):
            g = g_step(b)
            q = mets.solve([b], g[None])[0][0]
            obj = self._hinge_from_margins(problem, states[b]["margins"]) + alpha * float(g @ q)
            obj += et[b] * float(mets.frob2([b])[0])
            histories[b].append(obj)
            paths[b].append(g)
            out.append(
                dict(
                    # kept structured: A = s I + W W^T (the estimator's MetricStack builds
                    # the dense metric on access; the CV's paths never need it)
                    A=None,
                    metric_lowrank=(float(mets.s[b]), mets.columns(b)),
                    g=g,
                    w=w,
                    history=np.asarray(histories[b]),
                    n_iter=int(n_iter[b]),
                    converged=bool(converged[b]),
                    state=states[b],
                    first_margins=first_margins[b % T],
                    min_eig=mets.min_eigenvalue(b),
                    path=np.asarray(paths[b]),
                    path_w=np.tile(w, (len(paths[b]), 1)),
                )
            )
        return out

    def _warm_start_applies(self, state: dict) -> bool:
        """Whether a target's next g-step starts from its previous solution's sets: the
        warm start is on and that g-step was exact, with no failed active set before."""
        return bool(self._warm_start and state.get("exact") and not state.get("no_polish"))

    def _warm_g_steps(
        self,
        problem: MVMLProblem,
        Phi: np.ndarray,
        mets: LowRankMetrics,
        states: list[dict],
        paths: list[int],
    ) -> None:
        """The warm starts of the next g-step of the ``paths`` (of :meth:`_dense_paths`)
        solved together, before :meth:`_svm_g` reads them.

        Path ``b`` (target ``t = b mod T``) has the features ``[phi_i, W_b^T phi_i /
        sqrt(s_b)]`` and the box ``C' s_b``; where its previous g-step was exact, the sets
        of that solution are corrected on the new features for every such path at once
        (:func:`~mvkernels.mvml._hinge.polish_active_sets`: the products with ``Phi`` of
        all paths' ``W_b`` and, per correction, of all their solutions are one product
        each, where one path at a time reads ``Phi`` for each). A solution is stored in
        ``state["polished"]``; a path whose sets do not settle here (every row is checked
        at every correction, where its own warm start checks the rows near its margin
        first) gets its own warm start in :meth:`_svm_g`, then liblinear's path.
        """
        warm = [b for b in paths if "cold" not in states[b] and self._warm_start_applies(states[b])]
        if not warm:
            return
        T, r = problem.n_targets, mets.r
        sq = np.sqrt(mets.s[warm])
        extras = None
        if r:
            W = np.hstack([mets.columns(b) / q for b, q in zip(warm, sq)])
            P = Phi @ W
            extras = [P[:, j * r : (j + 1) * r] for j in range(len(warm))]
        Cp = svm_c_prime(self._hinge_weight(problem), self.alpha) * mets.s[warm]
        solved = polish_active_sets(
            Phi,
            problem.Y[:, [b % T for b in warm]],
            Cp,
            np.array([states[b]["margins"] for b in warm]),
            WARM_BAND,
            extras=extras,
            rounds=WARM_ROUNDS,
            max_add=COLD_ADD,
        )
        for b, res in zip(warm, solved):
            if res is not None:
                states[b]["polished"] = res

    def _first_g_steps(self, problem: MVMLProblem, X: np.ndarray, states: list[dict]) -> None:
        """The first g-step (``A = I``, features ``X``) of every target at once.

        The targets' problems share their rows (one-vs-all): the exact active-set
        solutions grown from scratch (:func:`~mvkernels.mvml._hinge.active_set_svm`, all
        targets' margins from one product per correction) replace liblinear's loose run
        and the polish of :meth:`_svm_g`, which reads them from ``state["cold"]``. Only
        where :meth:`_svm_g` would polish (:func:`~mvkernels.mvml._hinge.polish_applies`),
        down to the smaller box :data:`~mvkernels.mvml._hinge.COLD_MIN_BOX`; a target whose
        active set fails takes the usual path.
        """
        Cp = svm_c_prime(self._hinge_weight(problem), self.alpha)
        if not polish_applies(X, Cp, float(self.svm_tol), min_box=COLD_MIN_BOX):
            return
        for state, exact in zip(states, active_set_svm(X, problem.Y, Cp)):
            if exact is not None:
                state["cold"] = exact

    # ------------------------------------------------------------------ hooks
    def _hinge_from_margins(self, problem: MVMLProblem, m: np.ndarray) -> float:
        """``C sum_i max(0, 1 - m_i)`` for the margins ``m_i = y_i f(x_i)``."""
        return float(self._hinge_weight(problem) * np.maximum(0.0, 1.0 - m).sum())

    def _data_loss(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """Hinge loss ``C sum_i max(0, 1 - y_i w^T H_{x_i} g)`` (Nystrom: ``z_i^T g~``)."""
        return self._hinge_from_margins(problem, problem.Y[:, t] * (self._phi(problem, w) @ g))

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

    def _final_dual(self, state: dict) -> np.ndarray:
        """The paper's multipliers of the last g-step (KKT recovery from ``v``)."""
        if "last" not in state:  # a subclass's g-step that keeps its own multipliers
            return np.asarray(state["dual"])[:, 0]
        last = state.pop("last")
        if "a" in last:  # exact g-step (active-set solve)
            return 2.0 * self.alpha * last["a"] / last["c_scale"]
        a = np.zeros(state["margins"].shape[0])
        X = last["X"](last["rows"]) if callable(last["X"]) else last["X"]
        a[last["rows"]] = dual_from_primal(
            X, last["y"], last["v"], last["Cp"], band=last["band"], margins=last["margins"]
        )
        return 2.0 * self.alpha * a / last["c_scale"]

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
        with serial_blas(n):
            duals = np.column_stack([self._final_dual(s) for s in states])
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
                f"MVMLSVC: the dual solver (liblinear) reached svm_max_epochs="
                f"{self.svm_max_epochs} before svm_tol={self.svm_tol}",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self
