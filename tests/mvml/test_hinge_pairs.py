"""One-vs-one MVML-SVM with its pairs in one batch (``HingeLoss.fit_row_subsets``): the
pairs' first g-steps and warm starts solved together on the rows of all classes (a
pair's rows of weight 0 off it) give the binary fits of the pairs on their own rows."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvkernels import MVMLSVC
from mvkernels.mvml import _hinge_loss
from mvkernels.mvml._base import _BaseMVML
from mvkernels.mvml._hinge_active import active_set_svm, polish_active_sets
from mvkernels.mvml._hinge_loss import HingeLoss
from mvkernels.mvml._hinge_state import row_subset_groups
from mvkernels.mvml._multiclass import ovo_pairs, pair_problem


def _blobs(n_per=12, K=4, seed=0, spread=1.5, noise=1.0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_per)
    X1 = noise * rng.normal(size=(y.size, 4))
    X2 = noise * rng.normal(size=(y.size, 3))
    X1[:, 0] += spread * y
    X2[:, 1] -= spread * (y % 2)
    return [X1, X2], y


@pytest.mark.parametrize(
    "params, fit",
    [
        (dict(), {}),
        (dict(fit_intercept=True), {}),
        (dict(class_weight="balanced", fit_intercept=True), {"weighted": True}),
        (dict(C=0.5, tol=1e-2, max_iter=6), {}),  # pairs stopping apart
        (dict(n_landmarks=2, alpha=1e-4), {}),  # free sets outgrow the features: liblinear
        (dict(), {"budget": 60}),  # in groups: the pairs of blocks of classes
    ],
    ids=["plain", "intercept", "weights", "tol", "liblinear", "groups"],
)
def test_pairs_in_one_batch_equal_binary_fits(params, fit, monkeypatch):
    """Every pair's coefficients, offset, objective path, iterations, metric and dual
    multipliers from the batched one-vs-one fit equal the binary fit of its problem on
    its rows alone (one structured path per pair), to 1e-10; the batch runs one path
    (several with a smaller budget: :func:`row_subset_groups`)."""
    if "budget" in fit:
        monkeypatch.setattr(_hinge_loss, "ROW_SUBSET_BUDGET", fit["budget"])
    Xs, y = _blobs()
    sw = np.random.default_rng(3).uniform(0.5, 2.0, y.size) if fit.get("weighted") else None
    kw = dict(alpha=1e-3, eta=0.5, max_iter=3, n_landmarks=10, joint_view=False, random_state=0)
    kw.update(params)
    calls = []
    dense_paths = HingeLoss.dense_paths

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("subsets") is not None)
        return dense_paths(self, *args, **kwargs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        HingeLoss.dense_paths = counted
        try:
            clf = MVMLSVC(multi_class="ovo", **kw).fit(Xs, y, sample_weight=sw)
        finally:
            HingeLoss.dense_paths = dense_paths
        n_groups = len(row_subset_groups(clf._ovo_rows, y.size, _hinge_loss.ROW_SUBSET_BUDGET))
        assert calls == [True] * n_groups and clf.solver_ == "structured"
        assert (n_groups > 1) == ("budget" in fit)
        problem = clf._build_problem(Xs, np.where(y[:, None] == np.arange(4), 1.0, -1.0))
        for k, (i, j) in enumerate(ovo_pairs(4)):
            sub, rows = pair_problem(problem, y, i, j)
            (r,) = _BaseMVML._solve(clf, sub)  # the pair's own binary fit
            np.testing.assert_allclose(clf.coef_[k], r.g, rtol=0, atol=1e-10)
            np.testing.assert_allclose(clf.intercept_[k], r.intercept, atol=1e-10)
            np.testing.assert_allclose(clf.objective_[k], r.history, rtol=1e-10, atol=0)
            assert clf.n_iter_[k] == r.n_iter
            A = _BaseMVML._metric_stack(clf, [r]).toarray()[0]
            np.testing.assert_allclose(clf.metric_[k], A, atol=1e-10)
            # the multipliers solve the free rows' Gram system (conditioned as it is):
            # relative to the largest
            dual = HingeLoss(clf).final_dual(r.state)
            atol = 1e-9 * np.abs(dual).max()
            np.testing.assert_allclose(clf.dual_coef_[rows, k], dual, rtol=0, atol=atol)
            assert clf.svm_epochs_[k] == r.state.epochs
    if params.get("n_landmarks") == 2:
        assert np.any(clf.svm_epochs_ > 0)  # the case where liblinear runs


def test_svc_default_batches_pairs_and_matches_one_fit_per_pair(monkeypatch):
    """``MVMLSVC()`` (one-vs-one, joint view "auto") on three classes of digits: the
    batched pairs give the fit whose pairs run one at a time (``batch_row_subsets``
    off), decision values and multipliers to 1e-10."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 3)[:150]
    Xs, y = [X[keep, :32], X[keep, 32:]], y[keep]
    batched = MVMLSVC(random_state=0).fit(Xs, y)
    monkeypatch.setattr(HingeLoss, "batch_row_subsets", False)
    one = MVMLSVC(random_state=0).fit(Xs, y)
    np.testing.assert_allclose(
        batched.decision_function(Xs), one.decision_function(Xs), rtol=0, atol=1e-10
    )
    np.testing.assert_allclose(batched.dual_coef_, one.dual_coef_, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(batched.n_iter_, one.n_iter_)


def test_per_problem_row_weights_equal_solves_on_the_subsets():
    """active_set_svm and polish_active_sets with one row of weights per problem (weight
    0 off a problem's rows, its own boxes, extra columns) give each problem's solution on
    its rows alone, to rounding; the multipliers and margins off a subset are not used."""
    rng = np.random.RandomState(4)
    n, d = 90, 60
    X = rng.randn(n, d)
    labels = rng.randint(0, 3, n)
    X[:, 0] += labels
    subsets = [np.flatnonzero(labels != c) for c in range(3)]
    Y = np.zeros((n, 3))
    W = np.zeros((3, n))
    s = rng.uniform(0.5, 2.0, n)
    for k, rows in enumerate(subsets):
        Y[rows, k] = np.where(labels[rows] == min(set(range(3)) - {k}), 1.0, -1.0)
        W[k, rows] = s[rows]
    C = np.array([0.05, 0.08, 0.1])  # soft margins: rows at the bound too
    E = [np.full((n, 1), 0.5 + k) for k in range(3)]
    batch = active_set_svm(X, Y, C, weight=W, extras=E)
    for k, rows in enumerate(subsets):
        [alone] = active_set_svm(
            X[rows], Y[rows, k : k + 1], C[k], weight=s[rows], extras=[E[k][rows]]
        )
        assert batch[k] is not None and alone is not None
        np.testing.assert_allclose(batch[k][0], alone[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(batch[k][1][rows], alone[1], rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(batch[k][1][W[k] == 0], 0.0)
        np.testing.assert_allclose(batch[k][2][rows], alone[2], rtol=1e-10, atol=1e-12)
    # warm starts from the solutions at other boxes: margins off a subset are inf
    M = np.full((3, n), np.inf)
    for k, rows in enumerate(subsets):
        M[k, rows] = batch[k][2][rows]
    C2 = 2.0 * C
    warm = polish_active_sets(X, Y, C2, M, 1e-6, extras=E, weight=W)
    for k, rows in enumerate(subsets):
        [alone] = polish_active_sets(
            X[rows],
            Y[rows, k : k + 1],
            C2[[k]],
            M[[k]][:, rows],
            1e-6,
            extras=[E[k][rows]],
            weight=s[rows],
        )
        assert warm[k] is not None and alone is not None
        np.testing.assert_allclose(warm[k][0], alone[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(warm[k][1][rows], alone[1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "params",
    [dict(), dict(fit_intercept=True, class_weight="balanced", joint_view=True)],
    ids=["plain", "intercept-weights-joint"],
)
def test_cv_fold_pairs_in_batches_equal_one_path_per_pair(params, monkeypatch):
    """MVMLSVCCV(multi_class="ovo"): the folds' pairs fitted in batches
    (``HingeLoss.fold_row_subsets``) give the scores of every candidate and the refitted
    model of the search whose pairs run one fold path each (``batch_row_subsets`` off)."""
    from mvkernels import MVMLSVCCV

    Xs, y = _blobs(n_per=15)
    kw = dict(
        multi_class="ovo",
        alphas=[1e-4, 1e-2],
        etas=[0.1, 1.0],
        n_landmarks=8,
        cv=3,
        random_state=0,
        **params,
    )
    calls = []
    fold = HingeLoss.fold_row_subsets

    def counted(self, *args, **kwargs):
        calls.append(1)
        return fold(self, *args, **kwargs)

    monkeypatch.setattr(HingeLoss, "fold_row_subsets", counted)
    batched = MVMLSVCCV(**kw).fit(Xs, y)
    assert calls  # the folds' pairs ran in batches
    monkeypatch.setattr(HingeLoss, "batch_row_subsets", False)
    one = MVMLSVCCV(**kw).fit(Xs, y)
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_array_equal(batched.cv_results_[key], one.cv_results_[key])
    assert batched.best_params_ == one.best_params_
    np.testing.assert_allclose(
        batched.decision_function(Xs), one.decision_function(Xs), rtol=0, atol=1e-10
    )
