"""Baselines of the MVML paper, with the same multi-view input as the MVML estimators.

Every estimator here takes a list of views (or one 2-D array cut by ``views``, see
:func:`mvkernels._validation.check_views`), a per-view kernel (:mod:`mvkernels.kernels`;
default Gaussian with sigma = mean pairwise training distance, MVML paper Sec. 4.2) and an optional
block Nystrom approximation (``n_landmarks``, :class:`mvkernels.nystrom.BlockNystrom`:
the same landmark samples for every view, as MVML uses in the paper's Table 1, so every
method of that table sees the same approximated kernels ``K_l ~ U_l U_l^T``).

The methods (sources, and the choices each one leaves open, are in ``docs/baselines.md``):

===========================  ===================================================  ============
estimator                    method                                               source
===========================  ===================================================  ============
SingleViewRegressor /        kernel ridge (or SVM) on one view; the view is the   MVML paper
SingleViewClassifier         best by ``cv``-fold CV *on the training set*         Sec. 4
EarlyFusionRegressor /       one kernel on the concatenated views                 MVML paper
EarlyFusionClassifier                                                             Sec. 4 (ef)
LateFusionRegressor /        one model per view, outputs averaged                 MVML paper
LateFusionClassifier                                                              Sec. 4 (lf)
LpMKLRegressor /             lp-norm multiple kernel learning,                    Kloft et al.
LpMKLClassifier              ``K = sum_m beta_m K_m``, ``||beta||_p = 1``         2011 (JMLR)
OKLRegressor /               output kernel learning, ``k(x, x') L``,              Dinuzzo et al.
OKLClassifier                block coordinate descent on ``C`` and ``L``          2011 (ICML)
MLKRRegressor /              metric learning for kernel regression                Weinberger &
MLKRClassifier               (own implementation, L-BFGS)                         Tesauro 2007
===========================  ===================================================  ============

Losses and targets: the regressors use the square loss (kernel ridge, no intercept, like
MVML). The classifiers use one-vs-all ``+-1`` target columns (like
:class:`mvkernels.MVMLClassifier`; a single column for two classes) with
``loss="hinge"`` (a binary SVM per column: ``sklearn.svm.SVC`` on the precomputed
kernel, with intercept) or ``loss="squared"`` (kernel ridge on the ``+-1`` columns,
the "kernel regression" the MVML paper applies lpMKL with); prediction is the class of
largest output.

Nystrom mode builds the ``n x n`` approximate Gram matrices ``U_l U_l^T`` (and
``U*_l U_l^T`` at predict time): exact kernel machines on the approximated kernels, meant
for the papers' sizes (a few thousand training samples), not for millions of rows.
"""

from ._base import ViewGrams, kernel_ridge_dual
from ._early_fusion import EarlyFusionClassifier, EarlyFusionRegressor
from ._late_fusion import LateFusionClassifier, LateFusionRegressor
from ._lpmkl import LpMKLClassifier, LpMKLRegressor, lpmkl_weight_update
from ._mlkr import MLKRClassifier, MLKRRegressor, mlkr_fit, mlkr_loss_grad
from ._okl import OKLClassifier, OKLRegressor, okl_c_step, okl_l_step, okl_objective
from ._single_view import SingleViewClassifier, SingleViewRegressor

__all__ = [
    "ViewGrams",
    "kernel_ridge_dual",
    "lpmkl_weight_update",
    "okl_objective",
    "okl_c_step",
    "okl_l_step",
    "mlkr_loss_grad",
    "mlkr_fit",
    "SingleViewRegressor",
    "SingleViewClassifier",
    "EarlyFusionRegressor",
    "EarlyFusionClassifier",
    "LateFusionRegressor",
    "LateFusionClassifier",
    "LpMKLRegressor",
    "LpMKLClassifier",
    "OKLRegressor",
    "OKLClassifier",
    "MLKRRegressor",
    "MLKRClassifier",
]
