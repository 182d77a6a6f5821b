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

The A-steps (dense gradient / sparse proximal, :func:`mvkernels.mvml.metric_step` or
its low-rank form), the fixed metrics (identity, Cov), kernels, block Nystrom map,
one-vs-all and one-vs-one, prediction and the stopping rule are inherited unchanged:
:class:`MVMLSVC` is :class:`~mvkernels.MVMLClassifier` with its parameters and the hinge
loss (``_make_loss``), which also builds the problem data (the training features are
kept: the hinge loss has no sufficient statistics; on Dask input they are gathered to the
client, up to :data:`DASK_GATHER_MAX_BYTES`) and gives the fitted attributes of its final
g-steps (``C_``, ``dual_coef_``, ``svm_epochs_``, ``objective_increase_``), see
:mod:`mvkernels.mvml._hinge_fit`; its hooks read the fit's
:class:`~mvkernels.mvml._fit_context.FitContext`, not the estimator. See
``docs/mvml_svm.md``.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from sklearn.utils._param_validation import Interval, StrOptions

from ._base import mvml_constraints
from ._estimators import MVMLClassifier
from ._hinge_fit import DASK_GATHER_MAX_BYTES
from ._hinge_loss import HingeLoss
from ._multiclass import multiclass_constraints

__all__ = ["MVMLSVC", "DASK_GATHER_MAX_BYTES", "HINGE_FEATURE_BUDGET"]

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
        **mvml_constraints(),
        "solver": [StrOptions({"auto", "dense"})],  # "cg": the square loss only
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "svm_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "probability": ["boolean"],
        **multiclass_constraints(),
        "multi_class": [StrOptions({"ovr", "ovo", "auto"})],
    }

    #: ``dual_coef_`` is stored compactly and exactly in a pickle (its nonzero
    #: multipliers and their positions: one-vs-one's columns are zero off each pair's
    #: rows, and most multipliers of a pair are zero)
    _packed_attributes = ("dual_coef_",)

    # ------------------------------------------------------------------ loss
    def _make_loss(self) -> HingeLoss:
        """The hinge loss (:class:`~mvkernels.mvml._losses.HingeLoss`), built from this
        estimator's parameters once per fit."""
        return HingeLoss(self)
