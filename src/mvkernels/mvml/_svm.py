"""MVML-SVM: multi-view metric learning with the hinge loss (Huusari, Kadri & Capponi, JdS 2018).

Equation numbers are those of the paper
(``papers/002_69c5756a4c35ae14.txt``). The learning problem (eq. 6, with the hinge
weighted by ``C`` as the paper's dual box ``0 <= alpha_i <= C = 1/n`` implies)::

    min_{A, g, w}  C sum_i max(0, 1 - y_i w^T H_{x_i} g) + alpha <g, A^+ g> + eta R(A)

``alpha`` is the paper's lambda, ``R(A) = ||A||_F^2`` (dense) or the view-pair group norm
(sparse), exactly as in :mod:`mvkernels.mvml`. Everything except the loss is MVML's:
:class:`MVMLSVC` is :class:`mvkernels.mvml.MVMLClassifier` with the hinge loss,
:class:`~mvkernels.mvml._losses.HingeLoss` (``docs/mvml.md``, "Extending: a new loss"),
which owns:

* ``g_step``: the dual of the hinge problem (eq. 7-8, dual constant ``1/(4 alpha)``,
  see :mod:`mvkernels.mvml._hinge`), i.e. a bias-free linear SVM with
  ``C' = C / (2 alpha)`` on the features ``F^T z_i`` (``A = F F^T``), solved exactly by
  active-set solves (the first g-step from scratch for all targets at once, the later
  ones warm-started) or, where these give up, by scikit-learn's liblinear (compiled dual
  coordinate descent, O(n v p) per pass);
* ``fit_structured``: with fixed weights and a dense / identity / Cov metric, the
  dense A-step keeps ``A = s I + W W^T`` (:class:`~mvkernels.mvml._lowrank.LowRankMetrics`,
  shared with the square-loss structured solver), so the g-step features are
  ``[sqrt(s) z_i, W^T z_i]`` and no ``(vp) x (vp)`` factorisation is ever computed;
* ``data_loss``: ``C sum_i max(0, 1 - y_i f(x_i))``;
* ``w_step``: the hinge-loss view weights (a small linear program, see
  :meth:`~mvkernels.mvml._losses.HingeLoss.w_step`).

This module keeps what the hinge loss changes outside Algorithm 1: its parameters, the
problem data (the training features are kept: the hinge loss has no sufficient
statistics) and the multipliers of the final g-step.

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

import warnings
from contextlib import nullcontext
from dataclasses import replace
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from .._arrays import is_dask_collection
from .._packing import pack, unpack
from .._threads import serial_blas
from ..nystrom import FeatureMoments
from ..nystrom._missing import ConditionalViews
from ._base import _mvml_constraints
from ._estimators import MVMLClassifier
from ._hinge_loss import HingeLoss
from ._metric import metric_kind
from ._multiclass import multiclass_constraints
from ._problem import MVMLProblem, NystromProblem

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
    """Multi-view metric learning SVM (MVML-SVM): MVML with the hinge loss.

    Binary problems are one hinge-loss MVML problem (``+1`` = ``classes_[1]``); with
    K > 2 classes, by default (``multi_class="auto"``) K(K-1)/2 one-vs-one problems, as
    ``SVC``, or (``multi_class="ovr"``, the paper's) K independent one-vs-all problems,
    all sharing the kernels / Nystrom map.
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
    n_landmarks : "auto", "grow", None, int or float in (0, 1], default="auto"
        As :class:`~mvkernels.MVMLClassifier`, but ``"auto"`` aims at about 200 Nystrom
        features in all (``p = min(n, ceil(200 / v))`` landmarks per view,
        :data:`~mvkernels.mvml._svm.HINGE_FEATURE_BUDGET`; ``"grow"``: at least
        ``sqrt(n)`` per view): every g-step runs the dual solver over all ``n x v p``
        features.
    max_iter : int, default=2
        Outer iterations of Algorithm 1 (each: g-step, A-step), then a final g-step. Two
        are as accurate as ten on the benchmark data (``docs/mvml_svm.md``) at a fraction of
        the cost; :class:`~mvkernels.MVMLSVCCV` selects the number by cross-validation.
    landmarks, kernel, kernel_params, tol, step_size, n_a_steps, \
sparse_threshold, eig_floor, chunk_size, views, random_state, solver, bandwidth_factor, \
joint_view, feature_relevance
        As :class:`~mvkernels.MVMLClassifier` (``random_state`` also seeds liblinear's
        coordinate order). ``solver="auto"`` runs the low-rank dense A-step (fixed weights,
        dense / identity / Cov metric); ``"dense"`` the reference A-step with a
        factorisation of the ``(vp) x (vp)`` metric per step. Both give the same model
        up to the dual solver's tolerance.
    fit_intercept : bool, default=False
        Add an offset ``b`` per one-vs-all problem (or pair): the loss becomes
        ``C sum_i max(0, 1 - y_i (f(x_i) + b)) + C b^2 / (2 kappa)``, ``kappa = 10``
        (:data:`~mvkernels.mvml._hinge_loss.OFFSET_KAPPA`), a light penalty that keeps
        every g-step a bias-free SVM: ``b`` is the coefficient of a constant feature
        ``sqrt(kappa / C')`` appended to its features (liblinear's intercept scaling),
        close to libsvm's unpenalised bias (user guide, "The intercept"). False is the
        paper's bias-free model.
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
    multi_class : {"auto", "ovr", "ovo"}, default="auto"
        One-vs-rest or one-vs-one (one hinge-loss problem per pair of classes on the rows
        of the two classes, sharing the kernels / Nystrom map and the training features),
        as :class:`~mvkernels.MVMLClassifier`. ``"auto"``: one-vs-one with more than two
        classes on in-memory data, one-vs-rest on Dask input (where one-vs-one is not
        available). The hinge loss's pairs run in batches (Nystrom mode, learned dense
        metric: the active-set solves of a group of pairs share their products, each pair
        on its rows, the binary fit of the pair; ``HingeLoss.fit_row_subsets``) and
        one-vs-one, ``SVC``'s decomposition, is the more accurate on the benchmark sets:
        the former default (one-vs-rest, no joint view) lost to ``SVC()`` by 1.9 points on
        uWave and 2.9 on uWave with 8 classes x 10 rows; ``"ovr"`` with
        ``joint_view=False`` is the paper's model (user guide, "Defaults").
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        As :class:`~mvkernels.MVMLClassifier` (one-vs-one only).
    class_weight : None, "balanced" or dict, default=None
        Multiplies the loss weight of every row of a class, as in ``SVC``: a dict
        ``{label: weight}`` (other classes 1) or ``"balanced"``,
        ``n / (n_classes n_c)`` (``sample_weight``-weighted counts). The weighted hinge
        loss is ``C sum_i s_i c_{y_i} max(0, 1 - y_i f(x_i))``: row ``i``'s dual box is
        ``0 <= alpha_i <= s_i c_{y_i} C`` (``C=None``: ``C = 1 / sum_i s_i c_{y_i}``).
        See ``docs/mvml.md``, "Sample and class weights".

    Attributes
    ----------
    classes_, metric_, metric_min_eigenvalue_, coef_, weights_, n_iter_, objective_, \
mode_, nystrom_, kernels_, n_views_, feature_relevance_
        As :class:`~mvkernels.MVMLClassifier`; ``objective_`` is the primal objective
        above after each outer iteration and after the final g-step.
    intercept_ : float or ndarray of shape (K,) or (K(K-1)/2,)
        The offset ``b`` per problem (0.0 with ``fit_intercept=False``).
    dual_coef_ : ndarray of shape (n_samples,), (n_samples, K) or (n_samples, K(K-1)/2)
        The paper's multipliers ``alpha_i`` of the final g-step, ``0 <= alpha_i <= C``
        (``<= s_i C`` with the rows' weights ``s_i``):
        those of its active-set solve, or, after liblinear alone, recovered from its
        solution by the KKT conditions (:func:`mvkernels.mvml._hinge.dual_from_primal`;
        liblinear returns ``v`` only). One-vs-one: one column per pair, zero off the
        pair's rows. With ``fit_intercept``, ``b = (kappa / C) sum_i alpha_i y_i``.
    C_ : float or ndarray of shape (K(K-1)/2,)
        The hinge weight used (``1 / n`` when ``C=None``; ``1 / sum_i s_i`` with the
        rows' weights). One-vs-one with ``C=None``: one value per pair, ``1 / n_ij`` over
        the pair's own rows (``1 / sum`` of their weights).
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
        joint_view: bool | str = "auto",
        multi_class: str = "auto",
        decision_function_shape: str = "ovr",
        fit_intercept: bool = False,
        feature_relevance: Any = "none",
        class_weight: Any = None,
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
            multi_class=multi_class,
            decision_function_shape=decision_function_shape,
            fit_intercept=fit_intercept,
            feature_relevance=feature_relevance,
            class_weight=class_weight,
        )
        self.C = C
        self.svm_tol = svm_tol
        self.svm_max_epochs = svm_max_epochs

    _auto_feature_budget = HINGE_FEATURE_BUDGET

    _parameter_constraints: dict = {
        **_mvml_constraints(),
        "solver": [StrOptions({"auto", "dense"})],  # "cg": the square loss only
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "svm_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "probability": ["boolean"],
        **multiclass_constraints(),
        "multi_class": [StrOptions({"ovr", "ovo", "auto"})],
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
        if not isinstance(problem, NystromProblem) or not (
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
        return replace(
            problem, U=np.asarray(U, dtype=np.float64), Y=np.asarray(Yc, dtype=np.float64)
        )

    def _nystrom_problem(self, nys: Any, Xs: list, Y: Any, complete: bool) -> MVMLProblem:
        """NumPy input: the features ``U`` are computed once and kept (every g-step needs
        them). The hinge loss needs no sufficient statistics: only the Cov metric's
        initial metric and, with complete training rows, the map's missing-view
        statistics read them (from ``U``, not from a second pass over the data), weighted
        by the rows' loss weights (``_loss_weight``), which the problem keeps."""
        if is_dask_collection(Y) or any(is_dask_collection(V) for V in Xs):
            return super()._nystrom_problem(nys, Xs, Y, complete)
        Xs = nys.check_views(Xs)
        Y = np.asarray(Y, dtype=np.float64)
        U = nys.features(Xs)
        n, v, p = U.shape[0], int(nys.n_views_), int(nys.n_landmarks_)
        sw = self.__dict__.get("_loss_weight")
        stats = metric_kind(self.metric).needs_statistics  # the Cov metric's A0
        if complete or stats:
            # the target moments only for the Cov metric's problem (the missing-view model
            # reads the feature moments alone)
            mom = FeatureMoments.from_features(U, Y.reshape(n, -1) if stats else None, sw)
            if complete:
                nys.set_missing_model(ConditionalViews.from_moments(mom, v, p))
            if stats:
                return MVMLProblem.from_moments(mom, nys, Y, Xs=Xs, U=U, sample_weight=sw)
        return NystromProblem(n, v, p, Y, feature_map=nys, Xs=Xs, U=U, sample_weight=sw)

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict:
        """The state with ``dual_coef_`` stored compactly and exactly
        (:func:`mvkernels._packing.pack`: its nonzero multipliers and their positions;
        one-vs-one's columns are zero off each pair's rows, and most multipliers of a
        pair are zero)."""
        state = dict(super().__getstate__())
        if "dual_coef_" in state:
            state["dual_coef_"] = pack(state["dual_coef_"])
        return state

    def __setstate__(self, state: dict) -> None:
        """Restore a pickled model, ``dual_coef_`` bit for bit as fitted."""
        if "dual_coef_" in state:
            state = {**state, "dual_coef_": unpack(state["dual_coef_"])}
        super().__setstate__(state)

    # ------------------------------------------------------------------ loss
    def _make_loss(self) -> HingeLoss:
        """The hinge loss (:class:`~mvkernels.mvml._losses.HingeLoss`), built from this
        estimator's parameters once per fit."""
        return HingeLoss(self)

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MVMLSVC:
        """Fit on views ``X`` (list of arrays, or one array cut by ``views``) and labels ``y``.

        ``sample_weight`` (n,): frequency weights of the rows (None: 1 each), multiplied
        by ``class_weight``; rows of weight 0 are dropped first. Row ``i``'s hinge is
        weighted by its weight ``s_i``: its dual box is ``0 <= alpha_i <= s_i C`` (user
        guide, "Sample and class weights"; ``C=None``: ``C = 1 / sum_i s_i``)."""
        super().fit(X, y, sample_weight=sample_weight)
        states = self._fit_states
        n = self.n_samples_fit_
        lw = self.__dict__.get("_loss_weight")
        self.C_: float | np.ndarray
        if self.C is not None:
            self.C_ = float(self.C)
        elif self._ovo_active():  # each pair's own rows: 1 / n_ij (1 / their weight sum)
            rows = self._ovo_rows
            sums = [r.size if lw is None else float(np.sum(np.asarray(lw)[r])) for r in rows]
            self.C_ = 1.0 / np.asarray(sums, dtype=np.float64)
        else:
            self.C_ = 1.0 / n if lw is None else 1.0 / float(np.sum(lw))
        with serial_blas(n):
            loss = self._make_loss()
            duals = self._rows_to_columns([loss.final_dual(s) for s in states])
        for s in states:
            s.release()
        epochs = np.array([s.epochs for s in states])
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
        if not all(s.converged for s in states):
            warnings.warn(
                f"MVMLSVC: the dual solver (liblinear) reached svm_max_epochs="
                f"{self.svm_max_epochs} before svm_tol={self.svm_tol}",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self
