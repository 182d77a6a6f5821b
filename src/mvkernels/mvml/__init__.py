"""Multi-view metric learning (MVML; Huusari, Kadri & Capponi, AISTATS 2018) and its
hinge-loss version (MVML-SVM; Huusari, Kadri & Capponi, JdS 2018).

The model is a vector-valued kernel machine whose block kernel matrix is
``K = H A H`` (eq. 5), ``H = blockdiag(K_1, ..., K_v)``, with a learned (or fixed)
symmetric positive (semi-)definite *metric* ``A`` between and within the views. After
the change of variable ``g = A H c`` the learning problem is (eq. 7 / 11)::

    min_{A, g, w}  L(y, W H g) + alpha <g, A^+ g> + eta R(A)

with the square loss (MVML) or the hinge loss (MVML-SVM), ``R(A) = ||A||_F^2``
(``metric="dense"``) or the view-pair group norm ``sum_{l <= m} ||A_{lm}, A_{ml}||_F``
(``metric="sparse"``); ``alpha`` is the paper's lambda. In block Nystrom mode (Sec. 3.5,
eq. 13-18) ``H`` is replaced by the features ``U`` (``K_l ~ U_l U_l^T``) and ``A``, ``g``
by ``A~ = U^T A U`` (vp x vp), ``g~``; with the square loss every iteration then only
needs the sufficient statistics ``C = sum_i u_i u_i^T`` and ``c = sum_i u_i y_i``.

Layout of the subpackage, one part per concern (public names are re-exported here):

* the problem: :mod:`._problem` (:class:`MVMLProblem`, the training data of one fit,
  one type per mode: :class:`FullProblem`, the kernels, and :class:`NystromProblem`, the
  Nystrom features in two typed parts, the square loss's :class:`NystromStatistics` and
  the :class:`FeatureRows` that a loss reading the rows needs, each present or not as a
  whole; each mode says how it does what depends on it, so no other part compares mode
  names), :mod:`._bandwidth`
  (default bandwidths), :mod:`._joint` (the joint view), :mod:`._relevance` (the learned
  column scales of ``feature_relevance="ard"``, applied to the input views first);
* the loss: :mod:`._losses` (:class:`~._losses.Loss` and the square loss) and
  :mod:`._hinge_loss` (the hinge loss, on the solvers of :mod:`._hinge` and
  :mod:`._hinge_active`; its solver state and batches of row subsets in
  :mod:`._hinge_state`; its problem data and fitted multipliers in :mod:`._hinge_fit`):
  the g-step, the data term, the w-step, the structured solver, the CV's fold paths of
  each loss, and the ends of a fit (``build_problem``, ``nystrom_problem``,
  ``fitted_attributes``: the problem data the loss reads, the attributes it adds); the
  hooks take the fit's :class:`~._fit_context.FitContext` (:mod:`._fit_context`: the
  estimator's problem builders, Algorithm 1's path, the initial metric, the rows' loss
  weights, the one-vs-one row subsets), never the estimator;
* the metric: :mod:`._metric_algebra` (the formulas on one matrix: factorisations,
  :class:`PSDFactor`; the A-step updates, eq. 9/16 dense and eq. 12/18 sparse; the fixed
  metrics, MVML_Cov; the view weights, eq. 10/17), :mod:`._metric` (the metric kinds and
  their initial metrics; the one backtracking A-step, :func:`metric_step`; the one metric
  interface, :class:`~._metric.Metric`, with its dense storage) and :mod:`._lowrank` (the
  low-rank storage ``s I + W W^T``, one metric or a
  batch of the structured solvers on one eigendecomposition per fit, and the fitted
  model's compact store, ``MetricStack``);
* Algorithm 1: :mod:`._driver` (the one outer loop, ``alternate`` / ``run_paths``, the
  bookkeeping every path shares, ``PathState``, the declared loop body of a path,
  ``PathBody``: ``g_steps``, ``a_steps``, ``objective``, ``finish``, and the one result
  type, ``PathResult``; the dense reference path for any loss and metric,
  ``ReferencePaths``, batched over the targets and over a regularisation path of
  ``(alpha, eta)`` pairs, which share their first g-steps (``Loss.g_steps_path``: every
  ``alpha`` in one call); the CV's folds and full-kernel search run their grid as one
  batch through ``_BaseMVML._solve_path``); each loss's batched structured path in its
  own module: :mod:`._square_paths` (``SquarePaths``, the square loss's low-rank dense
  path) and :mod:`._hinge_paths` (``HingePaths``, the hinge loss's); :mod:`._iterative`
  (the square loss's g-step by preconditioned conjugate gradient in Nystrom mode,
  ``solver="cg"``);
* the data: :mod:`._data_part` (in memory or Dask, decided once from the validated
  views and targets by ``data_part``: :class:`~._data_part.InMemoryData` or
  :class:`~._data_part.DaskData`, which the fit, a Nystrom problem (``problem.data``),
  prediction (from the test views) and the CV ask instead of testing the arrays:
  targets to the client, lazy target validation and label encoding, the BLAS threads,
  what needs data in memory, rows on the client, outputs chunked or not);
* the seam to model selection: :mod:`._cv_engine` (:class:`~._cv_engine.CVEngine`, what
  ``estimator._cv_engine()`` gives the CV: the loss, the fold paths, the full-kernel fold
  fits, a refitted model's decision values; the CV calls no other private method of an
  estimator);
* the estimators: :mod:`._base` (``_BaseMVML``: problem data, the choice of path,
  fitted attributes), :mod:`._estimators` (:class:`MVMLRegressor`,
  :class:`MVMLClassifier`), :mod:`._svm`
  (:class:`MVMLSVC`: the classifier with the hinge loss's parameters and loss), :mod:`._proba`
  (probabilities), :mod:`._reduced` (models of the observed views, missing views),
  :mod:`._multiclass` (``multi_class="ovo"``: one binary problem per pair of classes on
  the shared kernels, features or class statistics, their votes and pairwise coupling);
* model selection: :mod:`.cv` (:class:`MVMLClassifierCV`, :class:`MVMLRegressorCV`,
  :class:`MVMLSVCCV`; the grid of named axes in :mod:`.cv._grid`, the search in
  :mod:`.cv._search`, the searches of the part axes in :mod:`.cv._parts`, the
  fold-scoring object in :mod:`.cv._folds` and its steps in :mod:`.cv._steps` and
  ``cv/_folds_*.py``, scoring in :mod:`.cv._scoring`; the package docstring lists where
  each part lives) and :mod:`._screen` (the leave-one-out screen).

How to add

* a loss: a subclass of :class:`~._losses.Loss` (``g_step``, ``data_loss``, ``w_step``;
  with these alone the dense reference path runs it; optionally ``g_steps`` (several
  targets on one factorisation), ``g_steps_path`` (several ``alpha`` in one call),
  ``structured_applies`` / ``fit_structured`` (a batched path of its own: a
  :class:`~._driver.PathBody` in the loss's own module, run by
  :func:`~._driver.run_paths`, returning :class:`~._driver.PathResult` objects, as
  :mod:`._square_paths` and :mod:`._hinge_paths` do), ``fold_paths``, and, for a loss
  that reads the rows or adds fitted attributes, ``build_problem`` / ``nystrom_problem``
  / ``fitted_attributes``, which take a :class:`~._fit_context.FitContext` and return the
  attributes rather than set them) returned by an estimator's ``_make_loss`` (see the
  user guide, "Extending: a new loss"); a loss reads no attribute of an estimator
  (``tests/mvml/test_loss_seam.py``);
* a metric: a :class:`~._metric.MetricKind` registered in ``METRIC_KINDS`` (whether it is
  learned, its initial value, its penalty, its A-step's candidate and step cap, which
  :func:`metric_step`'s one backtracking loop runs, whether the structured paths cover
  it), and, for the structured solvers, its low-rank
  form in :mod:`._lowrank`; a new storage: a :class:`~._metric.Metric` subclass (every
  path hands on its metrics as :class:`~._metric.Metric` objects, which no caller asks
  the storage of);
* a mode (a new form of the training data): an :class:`MVMLProblem` subclass in
  :mod:`._problem` with its own fields and the per-mode methods (``centred``,
  ``ridge_system``, ``squared_residual``, ``view_outputs`` / ``view_moments``,
  ``cov_metric``, ``subset`` / ``subset_coefficients``, ``training_outputs``,
  ``with_views``; ``feature_space`` says whether the structured solvers, which read
  Nystrom statistics, apply), built by the estimator's ``_build_problem`` in
  :mod:`._base`; and its prediction side: one part in :mod:`._fitted_mode`
  (``FullFit`` / ``NystromFit``: the test views' checks, the output function, the
  compact missing-view model), chosen once at fit as ``_fitted_mode``;
* a kernel: one :class:`~mvkernels._kernel_families.KernelFamily` registered in
  ``KERNEL_FAMILIES`` (its name, parameters with their value checks, default bandwidth,
  the bandwidth parameter and how a bandwidth factor scales it, evaluation and sparse
  support), which validation, ``ViewKernel``, :mod:`._bandwidth`, the bandwidth grid and
  Dask read at each use;
* a CV axis: see :mod:`.cv` ("How a search axis is added"): a product axis is one
  :class:`~.cv._grid.Axis` (batched by the scoring steps, or looped over by the search);
  an axis whose values are whole searches on the same folds (the relevance, the loss,
  the multi-class decomposition) one :class:`~.cv._grid.PartAxis` in ``PART_AXES``.

* a data back end (beside NumPy and Dask): a :class:`~._data_part.DataPart` subclass
  with the same operations, returned by ``data_part`` for its arrays.

Dask input (Nystrom mode only) and the documented choices: see the user guide.
"""

from ._base import AUTO_FEATURE_BUDGET, auto_n_landmarks, grown_n_landmarks
from ._estimators import MVMLClassifier, MVMLRegressor
from ._metric import LEARNED_METRICS, METRICS, metric_step
from ._metric_algebra import (
    NotPSDError,
    PSDFactor,
    cov_metric_full,
    cov_metric_nystrom,
    dense_metric_update,
    group_norms,
    least_squares_weights,
    metric_penalty,
    min_eigenvalue,
    prox_group_frobenius,
    rank_one_metric_minimiser,
    sparse_metric_update,
)
from ._problem import FeatureRows, FullProblem, MVMLProblem, NystromProblem, NystromStatistics
from ._svm import DASK_GATHER_MAX_BYTES, MVMLSVC
from .cv import MVMLSVCCV, MVMLClassifierCV, MVMLRegressorCV, complement_moments

__all__ = [
    "METRICS",
    "LEARNED_METRICS",
    "PSDFactor",
    "NotPSDError",
    "dense_metric_update",
    "sparse_metric_update",
    "prox_group_frobenius",
    "group_norms",
    "metric_penalty",
    "metric_step",
    "min_eigenvalue",
    "rank_one_metric_minimiser",
    "cov_metric_full",
    "cov_metric_nystrom",
    "least_squares_weights",
    "MVMLProblem",
    "FullProblem",
    "NystromProblem",
    "NystromStatistics",
    "FeatureRows",
    "MVMLRegressor",
    "MVMLClassifier",
    "MVMLSVC",
    "DASK_GATHER_MAX_BYTES",
    "MVMLClassifierCV",
    "MVMLRegressorCV",
    "MVMLSVCCV",
    "complement_moments",
    "auto_n_landmarks",
    "grown_n_landmarks",
    "AUTO_FEATURE_BUDGET",
]
