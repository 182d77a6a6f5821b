"""What a fitted BlockNystrom stores: normalizers recomputed on load, the completion
statistics (kept, dropped for a single view, or replaced by the compact outputs of a
linear model) and their compact form against the direct formula."""

import pickle

import numpy as np
import pytest

from mvkernels import BlockNystrom
from mvkernels.nystrom._missing import ConditionalViews, missing_patterns


def _views(n=120, seed=0):
    rng = np.random.RandomState(seed)
    Z = rng.randn(n, 2)
    return [Z @ rng.randn(2, 3) + 0.3 * rng.randn(n, 3), Z @ rng.randn(2, 4), rng.randn(n, 2)]


def _with_missing(Xs, seed=1):
    rng = np.random.RandomState(seed)
    out = [X.copy() for X in Xs]
    for i in range(out[0].shape[0]):
        miss = rng.rand(len(out)) < 0.3
        if miss.all():
            miss[rng.randint(len(out))] = False
        for l in np.flatnonzero(miss):
            out[l][i] = np.nan
    return out


@pytest.mark.parametrize(
    "kernel, incomplete",
    [("rbf", False), ("rbf", True), ("laplacian", False), ("poly", False), ("linear", True)],
)
def test_pickle_drops_the_normalizers_and_recomputes_them_bit_for_bit(kernel, incomplete):
    Xs = _views()
    fit = _with_missing(Xs) if incomplete else Xs
    nys = BlockNystrom(kernel=kernel, n_landmarks=30, random_state=0).fit(fit)
    blob = pickle.dumps(nys)
    state = nys.__getstate__()
    assert all(S is None for S in state["normalizers_"])
    assert all(S is not None for S in nys.normalizers_)  # the fitted map is untouched
    back = pickle.loads(blob)
    for a, b in zip(nys.normalizers_, back.normalizers_):
        np.testing.assert_array_equal(a, b)
    Xt = _with_missing(_views(seed=3), seed=4)  # complete and incomplete rows
    np.testing.assert_array_equal(nys.transform(Xt), back.transform(Xt))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(back)).transform(Xt), nys.transform(Xt))
    stored = len(pickle.dumps({k: v for k, v in vars(nys).items() if k != "normalizers_"}))
    assert len(blob) < stored + 2000  # what the normalizers cost: nothing but the Nones


def test_precomputed_and_callable_normalizers_are_kept():
    Xs = _views()
    K = [X @ X.T + np.eye(len(X)) for X in Xs[:2]]
    nys = BlockNystrom(kernel="precomputed", n_landmarks=20, random_state=0).fit(K)
    assert all(S is not None for S in nys.__getstate__()["normalizers_"])
    back = pickle.loads(pickle.dumps(nys))
    np.testing.assert_array_equal(nys.transform(K), back.transform(K))
    kernels = [_linear, "rbf", "rbf"]  # a callable for view 0: kept; named: recomputed
    nys = BlockNystrom(kernel=kernels, n_landmarks=20, random_state=0).fit(Xs)
    kept = [S is not None for S in nys.__getstate__()["normalizers_"]]
    assert kept == [True, False, False]
    back = pickle.loads(pickle.dumps(nys))
    np.testing.assert_array_equal(nys.transform(Xs), back.transform(Xs))


def _linear(A, B):
    return A @ B.T


def test_a_single_view_keeps_no_completion_statistics():
    X = _views()[0]
    nys = BlockNystrom(n_landmarks=20, random_state=0).fit([X])
    assert not hasattr(nys, "missing_model_")
    Xt = X[:3].copy()
    Xt[0] = np.nan  # the sample's only view: refused, nothing to complete from
    with pytest.raises(ValueError, match="every view"):
        nys.transform([Xt])


def test_missing_patterns():
    assert missing_patterns(1).shape == (0, 1)
    P = missing_patterns(3)
    assert P.shape == (6, 3) and P.any(axis=1).all() and not P.all(axis=1).any()
    assert len({tuple(r) for r in P}) == 6
    J = missing_patterns(4, always_missing=3)  # the joint view, last: missing in each
    assert J.shape == (6, 4) and not J[:, 3].any()
    np.testing.assert_array_equal(J[:, :3], P)


@pytest.mark.parametrize("pairwise", [False, True])
def test_completed_outputs_equal_completion_then_product(pairwise):
    """``z_O B_O + b_O`` equals completing the row (the conditional expectation) and
    multiplying by ``G``, for every pattern of three views: statistics of complete rows
    (solved by Cholesky) and pairwise ones (the clipped eigendecomposition)."""
    rng = np.random.RandomState(0)
    v, p, T, m = 3, 4, 5, 40
    A = rng.randn(v * p, 2 * v * p)
    counts = np.array([[90.0, 60, 50], [60, 80, 40], [50, 40, 70]]) if pairwise else None
    model = ConditionalViews(
        rng.randn(v * p), A @ A.T / A.shape[1], n_views=v, block=p, counts=counts
    )
    assert model.from_complete_rows is not pairwise
    G = rng.randn(T, v * p)
    compact = model.completed_outputs(G)
    U = rng.randn(m, v * p)
    mask = missing_patterns(v)[np.arange(m) % 6]
    want = model.complete(U.copy(), mask) @ G.T
    U[np.repeat(~mask, p, axis=1)] = 0.0  # the missing blocks are not read
    got = compact.fill(U @ G.T, U, mask)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    only_some = model.completed_outputs(G, missing_patterns(v)[:2])
    with pytest.raises(ValueError, match="pattern of missing views"):
        only_some.fill(U @ G.T, U, mask)


def test_compact_missing_model_and_fit_missing_model():
    """Complete training rows: the statistics give way to the compact outputs, whose
    ``linear_outputs`` equal those of the statistics; ``transform`` then refuses missing
    views, naming the way back, which ``fit_missing_model`` takes."""
    Xs = _views()
    Xt = _with_missing(_views(seed=3), seed=4)
    nys = BlockNystrom(n_landmarks=10, random_state=0).fit(Xs)
    U = nys.transform(Xt)
    G = np.random.RandomState(1).randn(2, nys.n_views_ * nys.n_landmarks_)
    compact = nys.compact_missing_model(G)
    assert compact is not None and not hasattr(nys, "missing_model_")
    got = nys.linear_outputs(Xt, G, compact)
    np.testing.assert_allclose(got, U @ G.T, rtol=0, atol=1e-12 * np.abs(U @ G.T).max())
    np.testing.assert_array_equal(nys.transform(Xs), nys.transform(Xs))  # complete rows: fine
    with pytest.raises(ValueError, match=r"fit_missing_model\(X_train\)"):
        nys.transform(Xt)
    np.testing.assert_array_equal(nys.fit_missing_model(Xs).transform(Xt), U)
    # statistics of incomplete training rows are kept
    inc = BlockNystrom(n_landmarks=10, random_state=0).fit(_with_missing(Xs))
    assert inc.compact_missing_model(G) is None and hasattr(inc, "missing_model_")
    # a compact form that would not be smaller: the statistics are kept
    wide = np.ones((10_000, nys.n_views_ * nys.n_landmarks_))
    assert nys.compact_missing_model(wide) is None and hasattr(nys, "missing_model_")


def test_copies_keep_the_normalizers_without_recomputing(monkeypatch):
    """``copy.copy`` (as the joint-view candidates of the CV share a map) and
    ``copy.deepcopy`` keep the normalizers; only unpickling recomputes them."""
    import copy

    import mvkernels.nystrom._map as nystrom_map

    nys = BlockNystrom(n_landmarks=20, random_state=0).fit(_views())

    def refuse(*args, **kwargs):
        raise AssertionError("normalizers recomputed")

    monkeypatch.setattr(nystrom_map, "landmark_normalizer", refuse)
    shallow, deep = copy.copy(nys), copy.deepcopy(nys)
    assert shallow.normalizers_ is nys.normalizers_
    for a, b in zip(deep.normalizers_, nys.normalizers_):
        assert a is not b
        np.testing.assert_array_equal(a, b)
    with pytest.raises(AssertionError, match="recomputed"):
        pickle.loads(pickle.dumps(nys))
