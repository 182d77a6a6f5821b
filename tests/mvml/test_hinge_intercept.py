"""fit_intercept for the hinge loss (MVMLSVC, MVMLSVCCV; issue 32, item 1).

The offset is the coefficient of a constant feature of value ``c = sqrt(kappa / C')``
appended to the g-step's features (``C' = C / (2 alpha)``): the g-step with an offset is
the bias-free SVM on ``[x_i, c]``, i.e. ``min C sum hinge(y (f + b)) + alpha <g, A^+ g> +
C b^2 / (2 kappa)``; as ``kappa`` grows ``b`` tends to the unpenalised bias of libsvm.
"""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.svm import SVC

from mvkernels import MVMLSVC, MVMLSVCCV, BlockNystrom, MVMLClassifier, MVMLClassifierCV
from mvkernels.mvml import FeatureRows, NystromProblem
from mvkernels.mvml._hinge import hinge_offsets
from mvkernels.mvml._hinge_loss import OFFSET_KAPPA, HingeLoss

#: MVMLSVC as the paper has it (one-vs-all, additive over the views), its defaults before
#: issue 32 (item 4) made them joint_view="auto", multi_class="auto": what these tests check
SVC_PAPER = dict(joint_view=False, multi_class="ovr")

GAMMA = 0.3


def _shifted(rng, n=60, threshold=1.0):
    """Two views; the positive class is the minority beyond a threshold (about 24 %)."""
    Xs = [rng.standard_normal((n, 3)), rng.standard_normal((n, 2))]
    y = (Xs[0][:, 0] + Xs[1][:, 0] > threshold).astype(int)
    return Xs, y


def _full_identity(Xs, y, alpha, **kw):
    """Full kernels, the identity metric, fixed weights 1/2: one g-step."""
    return MVMLSVC(
        **SVC_PAPER,
        alpha=alpha,
        metric="identity",
        n_landmarks=None,
        kernel_params={"gamma": GAMMA},
        fit_intercept=True,
        **kw,
    ).fit(Xs, y)


def _gstep_kernel(Xs, Zs=None):
    """The g-step's kernel ``<x_i, x_j> = sum_l w_l^2 (K_l K_l)_ij`` (rows of ``W H``,
    ``A = I``, ``w = 1/2``) between ``Zs`` (default: the training rows) and the rows."""
    Zs = Xs if Zs is None else Zs
    return sum(
        0.25 * rbf_kernel(Z, X, gamma=GAMMA) @ rbf_kernel(X, gamma=GAMMA) for X, Z in zip(Xs, Zs)
    )


# ------------------------------------------------------------------ the g-step
def test_offset_profile_is_the_exact_minimiser(rng):
    """hinge_offsets: no b does better (a fine grid around it), on several columns."""
    F = 2.0 * rng.standard_normal((40, 6)) + 1.0
    Y = np.where(rng.standard_normal((40, 6)) > 0.3, 1.0, -1.0)
    for kappa in (0.3, 10.0, 1e5):
        b, val = hinge_offsets(F, Y, kappa)
        for j in range(6):
            grid = b[j] + np.linspace(-1.0, 1.0, 2001)
            h = np.maximum(0.0, 1.0 - Y[:, j, None] * (F[:, j, None] + grid)).sum(0)
            h += grid**2 / (2.0 * kappa)
            assert val[j] <= h.min() + 1e-12
            assert val[j] == pytest.approx(h[1000], abs=1e-12)


def test_gstep_is_the_augmented_bias_free_svm_zero_duality_gap(rng):
    """Full kernels, A = I: (g, b) solve the bias-free SVM on the features ``[x_i, c]``
    with ``C' = 1 / (2 n alpha)``, ``c = sqrt(kappa / C')``: its dual with the kernel
    ``K_x + c^2`` (multipliers from dual_coef_ = 2 alpha a) has the same value."""
    Xs, y = _shifted(rng)
    n, alpha = y.size, 0.01
    est = _full_identity(Xs, y, alpha)
    ys = 2.0 * y - 1.0
    Cp = 1.0 / (2.0 * n * alpha)
    c = np.sqrt(OFFSET_KAPPA / Cp)
    Kx = _gstep_kernel(Xs)
    f = est.decision_function(Xs)
    b = est.intercept_
    primal = 0.5 * est.coef_ @ est.coef_ + 0.5 * (b / c) ** 2
    primal += Cp * np.maximum(0.0, 1.0 - ys * f).sum()
    a = est.dual_coef_ / (2.0 * alpha)
    assert np.all(a >= -1e-12) and np.all(a <= Cp + 1e-12)
    ay = a * ys
    dual = a.sum() - 0.5 * ay @ (Kx + c**2) @ ay
    assert abs(primal - dual) <= 1e-9 * primal
    assert b == pytest.approx(c**2 * ay.sum(), abs=1e-8)  # b = c v_b, v_b = c sum a_i y_i
    # the original problem's objective (C = 1/n): 2 alpha times the SVM's
    assert est.objective_[-1] == pytest.approx(2.0 * alpha * primal, rel=1e-10)


@pytest.mark.parametrize("kappa", [1.0, 100.0])
def test_offset_penalty_scales_with_kappa(rng, monkeypatch, kappa):
    """The duality of the previous test at another kappa (the constant column changes)."""
    monkeypatch.setattr(HingeLoss, "offset_kappa", kappa)
    Xs, y = _shifted(rng)
    n, alpha = y.size, 0.01
    est = _full_identity(Xs, y, alpha)
    ys, Cp = 2.0 * y - 1.0, 1.0 / (2.0 * n * alpha)
    c2 = kappa / Cp
    ay = est.dual_coef_ / (2.0 * alpha) * ys
    assert est.intercept_ == pytest.approx(c2 * ay.sum(), abs=1e-8)
    primal = 0.5 * est.coef_ @ est.coef_ + 0.5 * est.intercept_**2 / c2
    primal += Cp * np.maximum(0.0, 1.0 - ys * est.decision_function(Xs)).sum()
    dual = np.abs(ay).sum() - 0.5 * ay @ (_gstep_kernel(Xs) + c2) @ ay
    assert abs(primal - dual) <= 1e-9 * primal


def test_offset_converges_to_svc_bias_as_kappa_grows(rng, monkeypatch):
    """``SVC(kernel="precomputed", C=C')`` on the g-step's kernel has the unpenalised bias
    (its dual's ``sum a_i y_i = 0``): the offset and the decision values approach it as
    ``kappa`` grows, the gap shrinking about tenfold per tenfold kappa. (Larger kappa
    makes the constant column ``sqrt(kappa / C')`` dominate the features: at 1000 the
    active set fails here and liblinear does not converge.)"""
    Xs, y = _shifted(rng)
    Xt = [rng.standard_normal((15, 3)), rng.standard_normal((15, 2))]
    n, alpha = y.size, 0.01
    svc = SVC(kernel="precomputed", C=1.0 / (2.0 * n * alpha), tol=1e-12).fit(_gstep_kernel(Xs), y)
    ref = svc.decision_function(_gstep_kernel(Xs, Xt))
    gaps = []
    for kappa in (1.0, 10.0, 100.0):
        monkeypatch.setattr(HingeLoss, "offset_kappa", kappa)
        est = _full_identity(Xs, y, alpha)
        gaps.append(abs(est.intercept_ - svc.intercept_[0]))
        assert np.abs(est.decision_function(Xt) - ref).max() <= 3 * gaps[-1] + 1e-9
    assert all(g1 < g0 for g0, g1 in zip(gaps, gaps[1:]))
    assert gaps[-1] < 0.02 * abs(svc.intercept_[0]) and gaps[0] > 5 * gaps[-1]


# ------------------------------------------------------------------ what it fixes
def test_intercept_fixes_a_shifted_problem(rng):
    """Linear kernels, a boundary away from the origin: a bias-free model must pass
    through it; with the offset the boundary is learned."""
    Xs, y = _shifted(rng, n=200, threshold=1.5)
    Xt, yt = _shifted(rng, n=400, threshold=1.5)
    kw = dict(kernel="linear", n_landmarks=None, alpha=1e-4, random_state=0)
    a = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    b = MVMLSVC(**SVC_PAPER, fit_intercept=True, **kw).fit(Xs, y)
    assert b.score(Xt, yt) >= 0.95
    assert a.score(Xt, yt) <= b.score(Xt, yt) - 0.05
    assert b.intercept_ < -1.0  # the boundary x_1 + x_2 = 1.5 (decision x_1 + x_2 - 1.5)


def test_far_rows_take_the_majority_class_with_the_offset(rng):
    """RBF kernels: far from the training rows the decision is the offset alone."""
    Xs, y = _shifted(rng, n=80, threshold=-0.6)  # class 1 is the majority
    far = [X + 50.0 for X in Xs]
    a = MVMLSVC(**SVC_PAPER, alpha=1e-3, random_state=0).fit(Xs, y)
    b = MVMLSVC(**SVC_PAPER, alpha=1e-3, random_state=0, fit_intercept=True).fit(Xs, y)
    assert np.abs(a.decision_function(far)).max() < 1e-8
    np.testing.assert_allclose(b.decision_function(far), b.intercept_, atol=1e-8)
    assert b.intercept_ > 0 and np.all(b.predict(far) == 1)


# ------------------------------------------------------------------ solvers and paths
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(metric="identity"),
        dict(metric="cov"),
        dict(n_landmarks=None),
        dict(metric="sparse", eta=0.1),
        dict(learn_weights=True),
    ],
)
def test_objective_decreases_and_offset_is_the_profile_minimiser(rng, kw):
    Xs, y = _shifted(rng, n=70)
    est = MVMLSVC(**SVC_PAPER, max_iter=3, random_state=0, fit_intercept=True, **kw).fit(Xs, y)
    h = np.asarray(est.objective_)
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))
    f = est.decision_function(Xs) - est.intercept_
    b, val = hinge_offsets(f[:, None], (2.0 * y - 1.0)[:, None], OFFSET_KAPPA)
    assert est.intercept_ == pytest.approx(b[0], abs=1e-12)
    # the last objective: the data term at this offset plus alpha <g, A^+ g>
    assert h[-1] >= val[0] / y.size - 1e-12


def test_structured_and_dense_paths_agree_with_intercept(rng):
    Xs, y = _shifted(rng, n=70)
    yc = np.digitize(Xs[0][:, 1], [-0.4, 0.4])
    kw = dict(max_iter=3, random_state=0, fit_intercept=True, n_landmarks=10)
    a = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, yc)
    b = MVMLSVC(**SVC_PAPER, solver="dense", **kw).fit(Xs, yc)
    assert (a.solver_, b.solver_) == ("structured", "dense")
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-7)
    np.testing.assert_allclose(a.decision_function(Xs), b.decision_function(Xs), atol=1e-7)


def test_cold_solver_without_warm_start_gives_the_same_model(rng, monkeypatch):
    """The warm starts (lockstep polish, extras with the constant column) change nothing."""
    Xs, y = _shifted(rng, n=70)
    yc = np.digitize(Xs[0][:, 1], [-0.4, 0.4])
    kw = dict(max_iter=3, random_state=0, fit_intercept=True, n_landmarks=10)
    a = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, yc)
    monkeypatch.setattr(HingeLoss, "warm_start", False)
    b = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, yc)
    np.testing.assert_allclose(a.decision_function(Xs), b.decision_function(Xs), atol=1e-7)


def test_one_vs_one_offsets_are_the_pairs_binary_fits(rng):
    Xs, _ = _shifted(rng, n=75)
    yc = np.digitize(Xs[0][:, 1] + 0.5 * Xs[1][:, 1], [-0.5, 0.5])
    kw = dict(max_iter=2, random_state=0, fit_intercept=True, n_landmarks=12)
    ovo = MVMLSVC(multi_class="ovo", decision_function_shape="ovo", **kw).fit(Xs, yc)
    D = ovo.decision_function(Xs)
    for k, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        rows = np.flatnonzero((yc == i) | (yc == j))
        ovo_problem = ovo._ovo_rows[k]
        np.testing.assert_array_equal(ovo_problem, rows)
        assert np.isfinite(ovo.intercept_[k])
        # the pair's decision values on its rows: margins of its own binary problem
        f = D[rows, k]
        yy = np.where(yc[rows] == i, 1.0, -1.0)
        b, _ = hinge_offsets((f - ovo.intercept_[k])[:, None], yy[:, None], OFFSET_KAPPA)
        assert ovo.intercept_[k] == pytest.approx(b[0], abs=1e-10)
    assert ovo.score(Xs, yc) > 0.8


# ------------------------------------------------------------------ cross-validation
def test_svc_cv_fold_scores_equal_direct_refits(rng):
    """MVMLSVCCV(fit_intercept=True): every candidate's fold score equals a refit of
    MVMLSVC on the fold (same map), its offset from the fold's training rows."""
    Xs, _ = _shifted(rng, n=60)
    yc = np.digitize(Xs[0][:, 1] + Xs[1][:, 0], [-0.8, 0.8])
    cv = MVMLSVCCV(
        joint_view=False,
        alphas=[1e-3, 1e-1],
        etas=[0.1, 1.0],
        bandwidth_factors=[2.0],
        max_iter=2,
        n_landmarks=12,
        random_state=0,
        fit_intercept=True,
    ).fit(Xs, yc)
    splits = list(StratifiedKFold(3).split(Xs[0], yc))
    classes = np.unique(yc)
    Y = MVMLClassifier._encode_targets(np.searchsorted(classes, yc), 3)
    nys = BlockNystrom(kernel_params=cv.best_kernel_params_, n_landmarks=12, random_state=0)
    nys.fit(Xs)
    res = cv.cv_results_
    for i, params in enumerate(res["params"]):
        ref = []
        for tr, te in splits:
            problem = NystromProblem(
                tr.size,
                2,
                12,
                Y[tr],
                feature_rows=FeatureRows(nys, U=nys.transform([X[tr] for X in Xs])),
            )
            est = MVMLSVC(
                **SVC_PAPER,
                alpha=params["alpha"],
                eta=params["eta"],
                max_iter=params["max_iter"],
                n_landmarks=12,
                tol=None,
                random_state=0,
                fit_intercept=True,
            )
            out = est._solve(problem)
            Ute = nys.transform([X[te] for X in Xs])
            D = np.column_stack([Ute @ (r.g / 2) + r.intercept for r in out])
            ref.append(accuracy_score(yc[te], classes[np.argmax(D, axis=1)]))
        got = [res[f"split{k}_test_score"][i] for k in range(3)]
        np.testing.assert_allclose(got, ref, atol=1e-12, err_msg=str(params))
    assert cv.best_estimator_.fit_intercept and cv.best_estimator_.intercept_.shape == (3,)


def test_svc_cv_full_kernels_fold_scores_equal_direct_refits(rng):
    Xs, y = _shifted(rng, n=45)
    cv = MVMLSVCCV(
        joint_view=False,
        alphas=[1e-2],
        etas=[1.0],
        bandwidth_factors=[2.0],
        max_iter=2,
        cv=KFold(3),
        n_landmarks=None,
        random_state=0,
        fit_intercept=True,
    ).fit(Xs, y)
    res = cv.cv_results_
    for i, params in enumerate(res["params"]):
        for k, (tr, te) in enumerate(KFold(3).split(Xs[0])):
            est = MVMLSVC(
                **SVC_PAPER,
                alpha=1e-2,
                eta=1.0,
                max_iter=params["max_iter"],
                n_landmarks=None,
                kernel_params=cv.best_kernel_params_,
                tol=None,
                random_state=0,
                fit_intercept=True,
            ).fit([X[tr] for X in Xs], y[tr])
            ref = est.score([X[te] for X in Xs], y[te])
            assert res[f"split{k}_test_score"][i] == pytest.approx(ref, abs=1e-12)


def test_classifier_cv_auto_loss_with_intercept(rng):
    """loss="auto" searches both losses with their offsets, on the same folds (a
    ``scoring``: no hinge candidate abandoned, so every one is scored)."""
    Xs, y = _shifted(rng, n=60)
    cv = MVMLClassifierCV(
        loss="auto",
        scoring="accuracy",
        alphas=[1e-2],
        etas=[1.0],
        bandwidth_factors=[2.0],
        max_iter=2,
        n_landmarks=10,
        random_state=0,
        fit_intercept=True,
    ).fit(Xs, y)
    losses = set(cv.cv_results_["param_loss"])
    assert losses == {"squared", "hinge"}
    hinge = cv.cv_results_["param_loss"] == "hinge"
    assert np.all(np.isfinite(cv.cv_results_["mean_test_score"][hinge]))
    assert cv.best_estimator_.fit_intercept
    assert cv.score(Xs, y) > 0.8


# ------------------------------------------------------------------ other inputs
def test_dask_views_give_the_in_memory_fit_with_intercept(rng):
    da = pytest.importorskip("dask.array")
    Xs, y = _shifted(rng, n=60)
    kw = dict(max_iter=2, n_landmarks=12, random_state=0, fit_intercept=True)
    ref = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    dX = [da.from_array(X, chunks=(20, -1)) for X in Xs]
    got = MVMLSVC(**SVC_PAPER, **kw).fit(dX, da.from_array(y, chunks=20))
    assert got.intercept_ == pytest.approx(ref.intercept_, abs=1e-9)
    np.testing.assert_allclose(
        np.asarray(got.decision_function(dX)), ref.decision_function(Xs), atol=1e-9
    )


@pytest.mark.parametrize("n_landmarks", ["auto", None])
def test_missing_views_with_intercept(rng, n_landmarks):
    Xs, y = _shifted(rng, n=60, threshold=-0.6)
    Xs[0][:6] = np.nan
    Xs[1][40:44] = np.nan
    est = MVMLSVC(
        **SVC_PAPER, max_iter=2, n_landmarks=n_landmarks, random_state=0, fit_intercept=True
    )
    est.fit(Xs, y)
    D = est.decision_function(Xs)
    assert np.all(np.isfinite(D)) and est.intercept_ != 0.0
    assert est.score(Xs, y) > 0.8


def test_sparse_views_equal_dense_views_with_intercept(rng):
    sp = pytest.importorskip("scipy.sparse")
    Xs, y = _shifted(rng, n=60)
    kw = dict(max_iter=2, n_landmarks=12, random_state=0, fit_intercept=True)
    ref = MVMLSVC(**SVC_PAPER, **kw).fit(Xs, y)
    got = MVMLSVC(**SVC_PAPER, **kw).fit([sp.csr_matrix(X) for X in Xs], y)
    assert got.intercept_ == pytest.approx(ref.intercept_, abs=1e-6)
