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

Layout of the subpackage (public names are re-exported here):

* :mod:`._metric`: factorisations (:class:`PSDFactor`), the A-steps (eq. 9/16 dense,
  eq. 12/18 sparse, :func:`metric_step`), the fixed metrics (MVML_Cov) and the view
  weights (eq. 10/17);
* :mod:`._problem`: :class:`MVMLProblem`, the training data of one fit;
* :mod:`._estimators`: Algorithm 1 (``_BaseMVML``), :class:`MVMLRegressor`,
  :class:`MVMLClassifier`;
* :mod:`._lowrank`: the structured solver (one eigendecomposition per fit, low-rank metric);
* :mod:`._hinge`, :mod:`._svm`: the hinge-loss g-step and :class:`MVMLSVC`;
* :mod:`._cv`: :class:`MVMLClassifierCV`, :class:`MVMLRegressorCV`, :class:`MVMLSVCCV`.

Dask input (Nystrom mode only) and the documented choices: see the user guide.
"""

from ._cv import MVMLSVCCV, MVMLClassifierCV, MVMLRegressorCV, complement_moments
from ._estimators import AUTO_FEATURE_BUDGET, MVMLClassifier, MVMLRegressor, auto_n_landmarks
from ._metric import (
    LEARNED_METRICS,
    METRICS,
    NotPSDError,
    PSDFactor,
    cov_metric_full,
    cov_metric_nystrom,
    dense_metric_update,
    group_norms,
    least_squares_weights,
    metric_penalty,
    metric_step,
    min_eigenvalue,
    prox_group_frobenius,
    rank_one_metric_minimiser,
    sparse_metric_update,
)
from ._problem import MVMLProblem
from ._svm import DASK_GATHER_MAX_BYTES, MVMLSVC

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
    "MVMLRegressor",
    "MVMLClassifier",
    "MVMLSVC",
    "DASK_GATHER_MAX_BYTES",
    "MVMLClassifierCV",
    "MVMLRegressorCV",
    "MVMLSVCCV",
    "complement_moments",
    "auto_n_landmarks",
    "AUTO_FEATURE_BUDGET",
]
