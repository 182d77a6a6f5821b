"""The data part of an MVML fit (:mod:`mvkernels.mvml._data_part`): the chooser picks the
in-memory or the Dask part once, and each part's operations agree with the plain NumPy
computation on small data."""

from __future__ import annotations

import pickle
import re
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mvkernels._targets import one_vs_all_targets
from mvkernels.mvml._data_part import (
    IN_MEMORY,
    DaskData,
    InMemoryData,
    data_part,
    map_rows,
)

da = pytest.importorskip("dask.array")

MVML = Path(__file__).resolve().parents[2] / "src" / "mvkernels" / "mvml"


def _views(seed: int = 0, n: int = 12) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, 2)), rng.normal(size=(n, 3))]


def _lazy(X: np.ndarray, chunks: int = 5):
    return da.from_array(X, chunks=(chunks, -1) if X.ndim == 2 else chunks)


# ---------------------------------------------------------------------------- the chooser
def test_chooser_numpy_sparse_and_single_array():
    Xs = _views()
    assert data_part(Xs, np.zeros(12)) is IN_MEMORY
    assert data_part([sp.csr_matrix(X) for X in Xs], np.zeros(12)) is IN_MEMORY
    assert data_part(np.hstack(Xs), None) is IN_MEMORY  # one array cut into views later
    assert data_part() is IN_MEMORY


def test_chooser_dask_views_targets_and_mixed():
    Xs = _views()
    lazy_views = [_lazy(X) for X in Xs]
    part = data_part(lazy_views, np.zeros(12))
    assert isinstance(part, DaskData) and (part.lazy_views, part.lazy_targets) == (True, False)
    part = data_part(Xs, _lazy(np.zeros(12)))
    assert isinstance(part, DaskData) and (part.lazy_views, part.lazy_targets) == (False, True)
    part = data_part([Xs[0], lazy_views[1]], _lazy(np.zeros(12)))  # one view lazy
    assert (part.lazy_views, part.lazy_targets, part.in_memory) == (True, True, False)
    assert data_part(_lazy(np.hstack(Xs))).lazy_views  # one Dask array cut into views later


def test_chooser_reads_validated_views_kind():
    from mvkernels._validation import check_views

    Xs = check_views([_lazy(X) for X in _views()])
    assert Xs.kind == "dask" and data_part(Xs).lazy_views
    assert data_part(check_views(_views())) is IN_MEMORY


def test_parts_pickle_and_compare():
    for part in (IN_MEMORY, DaskData(lazy_views=False, lazy_targets=True)):
        assert pickle.loads(pickle.dumps(part)) == part
    assert InMemoryData() == IN_MEMORY


# ---------------------------------------------------------------------------- operations
def test_to_client_and_compute():
    x = np.arange(6.0)
    assert IN_MEMORY.to_client(x) is x
    assert IN_MEMORY.compute(x, None) == (x, None)
    part = DaskData()
    np.testing.assert_array_equal(part.to_client(_lazy(x)), x)
    assert part.to_client(x) is x  # in-memory arrays stay as they are
    a, b = part.compute(_lazy(x), _lazy(2 * x))
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, 2 * x)


def test_check_targets_length_and_unknown_chunks():
    IN_MEMORY.check_targets(np.zeros(4), 4)
    with pytest.raises(ValueError, match="y has 3 samples but the views have 4"):
        IN_MEMORY.check_targets(np.zeros(3), 4)
    part = DaskData(lazy_views=False, lazy_targets=True)
    y = _lazy(np.arange(10.0))
    part.check_targets(y, 10)
    with pytest.raises(ValueError, match="y has 10 samples but the views have 4"):
        part.check_targets(y, 4)
    unknown = y[y > -1]  # a boolean selection: unknown row count
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        part.check_targets(unknown, 10)


def test_refuse_only_lazy_data():
    IN_MEMORY.refuse("never raised")
    with pytest.raises(ValueError, match="lazy"):
        DaskData(lazy_views=False, lazy_targets=True).refuse("lazy")
    DaskData(lazy_views=False, lazy_targets=True).refuse("views only", views_only=True)
    with pytest.raises(RuntimeError, match="views"):
        DaskData().refuse("views", RuntimeError, views_only=True)


def test_fit_threads():
    assert not isinstance(IN_MEMORY.fit_threads(10), nullcontext)
    assert not isinstance(DaskData().fit_threads(10), nullcontext)  # targets in memory
    lazy_y = DaskData(lazy_views=False, lazy_targets=True)
    assert isinstance(lazy_y.fit_threads(np.nan), nullcontext)  # unknown row count is fine
    with IN_MEMORY.fit_threads(10):
        pass


@pytest.mark.parametrize("shape", [(12,), (12, 3)])
def test_regression_targets_lazy_equal_eager(shape):
    y = np.random.default_rng(1).normal(size=shape)
    Y, single = IN_MEMORY.regression_targets(y)
    part = data_part(None, _lazy(y))
    Yl, single_l = part.regression_targets(_lazy(y))
    assert type(Yl).__module__.startswith("dask")
    assert single == single_l == (len(shape) == 1)
    np.testing.assert_array_equal(Yl.compute(), Y)
    assert Y.shape == (12, 1 if len(shape) == 1 else 3) and Y.dtype == np.float64
    # in-memory targets beside Dask views: validated at once (NaN refused)
    with pytest.raises(ValueError):
        DaskData().regression_targets(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="real numbers"):
        part.regression_targets(_lazy(np.array(["a", "b"])))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_lazy_class_targets_equal_one_vs_all(n_classes):
    y = np.random.default_rng(2).integers(0, n_classes, size=15) * 10
    y[:n_classes] = np.arange(n_classes) * 10  # every class present
    part = data_part(None, _lazy(y))
    classes, Y = part.lazy_class_targets(_lazy(y))
    ref_classes, yi = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(Y.compute(), one_vs_all_targets(yi, n_classes))
    with pytest.warns(Warning, match="column-vector"):  # an (n, 1) y is raveled
        _, Y2 = part.lazy_class_targets(_lazy(y[:, None]))
    np.testing.assert_array_equal(Y2.compute(), Y.compute())
    with pytest.raises(TypeError):
        IN_MEMORY.lazy_class_targets(y)


def test_gather_rows():
    Xs = _views()
    idx = np.array([7, 1, 4])
    ref = [X[idx] for X in Xs]
    for part, views in [
        (IN_MEMORY, Xs),
        (DaskData(), [_lazy(X) for X in Xs]),
        (DaskData(lazy_views=False, lazy_targets=True), Xs),
    ]:
        got = part.gather_rows(views, idx)
        assert all(isinstance(G, np.ndarray) for G in got)
        for G, R in zip(got, ref):
            np.testing.assert_array_equal(G, R)


def test_row_outputs_and_map_rows():
    Xs = _views()

    def fn(views):
        return np.column_stack([views[0].sum(axis=1), views[1].sum(axis=1)])

    ref = fn(Xs)
    np.testing.assert_array_equal(IN_MEMORY.row_outputs(fn, Xs, n_out=2), ref)
    lazy = DaskData().row_outputs(fn, [_lazy(X) for X in Xs], n_out=2)
    assert lazy.chunks[0] == (5, 5, 2)
    np.testing.assert_array_equal(lazy.compute(), ref)

    def arg(B):
        return B.argmax(axis=1)

    np.testing.assert_array_equal(map_rows(ref, arg, None), arg(ref))
    out = map_rows(_lazy(ref), arg, None, np.intp)
    np.testing.assert_array_equal(out.compute(), arg(ref))
    out = map_rows(_lazy(ref), lambda B: 2 * B, 2)
    np.testing.assert_array_equal(out.compute(), 2 * ref)


def test_side_by_side():
    Xs = _views()
    Xs[1][3] = np.nan  # a missing view: the block function sees it

    def block(*blocks):
        return np.hstack(blocks)

    ref = np.hstack(Xs)
    np.testing.assert_array_equal(IN_MEMORY.side_by_side(Xs, block), ref)
    S = IN_MEMORY.side_by_side([sp.csr_matrix(np.nan_to_num(X)) for X in Xs], block)
    assert sp.issparse(S) and S.format == "csr"
    np.testing.assert_array_equal(S.toarray(), np.nan_to_num(ref))
    lazy = DaskData().side_by_side([_lazy(Xs[0]), Xs[1]], block)  # mixed: aligned
    np.testing.assert_array_equal(lazy.compute(), ref)


def test_test_kernels():
    rng = np.random.default_rng(3)
    Ks = [rng.normal(size=(4, 6)), rng.normal(size=(4, 6))]
    for K, G in zip(IN_MEMORY.test_kernels(Ks, 6), Ks):
        np.testing.assert_array_equal(K, G)
    with pytest.raises(ValueError, match="view 1"):
        IN_MEMORY.test_kernels([Ks[0], Ks[1][:, :5]], 6)
    got = DaskData().test_kernels([_lazy(Ks[0], 2), Ks[1]], 6)
    assert type(got[0]).__module__.startswith("dask") and isinstance(got[1], np.ndarray)
    with pytest.raises(ValueError, match="view 0: precomputed test kernel"):
        DaskData().test_kernels([_lazy(Ks[0][:, :5], 2)], 6)


# ---------------------------------------------------------------------------- one decision
def test_no_dask_test_outside_the_part():
    """The NumPy/Dask decision of mvml/ (the CV package included) is asked of the data
    part only."""
    pattern = re.compile(r'is_dask_collection|views_kind|== "dask"|import dask')
    found = {
        str(path.relative_to(MVML)): len(pattern.findall(path.read_text()))
        for path in MVML.rglob("*.py")
        if path.name != "_data_part.py"
    }
    assert not {name: k for name, k in found.items() if k}, found


def test_row_block_sums_equal_direct_sum():
    rng = np.random.default_rng(4)
    U, y, w = rng.normal(size=(11, 3)), rng.normal(size=11), rng.random(11)

    def stats(Ub, yb, wb=None):
        r = (Ub.sum(axis=1) - yb) ** 2
        return np.array([r.sum(), 0.0 if wb is None else wb @ r])

    ref = stats(U, y, w)
    for chunk in (1, 4, 11, 50):
        np.testing.assert_allclose(IN_MEMORY.row_block_sums(stats, U, y, w, chunk), ref)
    got = DaskData().row_block_sums(stats, _lazy(U, 4), y, w, chunk=0)
    np.testing.assert_allclose(got, ref)
    np.testing.assert_allclose(DaskData().row_block_sums(stats, _lazy(U, 4), y, None, 0)[0], ref[0])
