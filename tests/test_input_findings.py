"""Bad-input findings fixed at the root of the one validation path (check_views)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvkernels import BlockNystrom, MultiViewKPCA, MVMLRegressor, check_views
from mvkernels.baselines import MLKRRegressor


def test_ragged_view_is_named():
    ragged = [[1.0, 2.0], [3.0], [4.0, 5.0]]
    with pytest.raises(ValueError, match="view 1 is ragged: row 1 has 1 entries but row 0 has 2"):
        MultiViewKPCA().fit([np.ones((3, 2)), ragged])
    with pytest.raises(ValueError, match="view 1 is ragged"):
        MVMLRegressor().fit([np.ones((3, 2)), ragged], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="view 0 is ragged"):
        check_views([[[1.0, 2.0], [3.0, 4.0, 5.0]]])
    with pytest.raises(ValueError, match="X is ragged"):
        check_views([[1.0, 2.0], [3.0]])
    fitted = MultiViewKPCA(n_components=1).fit([np.arange(8.0).reshape(4, 2), np.ones((4, 1))])
    with pytest.raises(ValueError, match="view 0 is ragged"):
        fitted.infer_views([ragged, None], missing=[1])


def test_non_psd_callable_kernel_is_reported_as_such(rng):
    X = rng.standard_normal((30, 3))
    with pytest.raises(ValueError, match="view 1: the kernel callable.s training Gram matrix"):
        MultiViewKPCA(kernel=["linear", lambda A, B: -A @ B.T], features=["kernel", None]).fit(
            [X, X]
        )


def test_mlkr_predictions_do_not_depend_on_the_container(rng):
    """MLKR stopped by max_iter amplifies BLAS rounding, which depends on the memory layout
    that each container produced (index-array views are Fortran-ordered): every container now
    gives one layout, so the predictions are identical."""
    A = rng.standard_normal((120, 7))
    y = 2.0 + np.sin(A[:, 0]) * A[:, 3] + 0.1 * rng.standard_normal(120)
    ref_views = [A[:, :3], A[:, 3:]]
    forms = [
        (A, [np.arange(3), np.arange(3, 7)]),
        (A, [3, 4]),
        (np.asfortranarray(A), [3, 4]),
        (pd.DataFrame(A), [3, 4]),
        (pd.DataFrame(A, columns=list("abcdefg")), [list("abc"), list("defg")]),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = MLKRRegressor(max_iter=30).fit(ref_views, y).predict(ref_views)
        for X, views in forms:
            got = MLKRRegressor(max_iter=30, views=views).fit(X, y).predict(X)
            np.testing.assert_array_equal(got, ref)
    for V in check_views(A, views=[np.arange(3), np.arange(3, 7)]):
        assert V.flags.c_contiguous


@pytest.mark.parametrize("n_views", [2, 3])
def test_single_landmark_min_eigenvalue(rng, n_views):
    """One landmark per view: d = n_views, and the structured solver's rank-r factor W of
    A = s I + W W^T has r > d columns; the smallest eigenvalue comes from W W^T."""
    Xs = [rng.standard_normal((80, 2)) for _ in range(n_views)]
    y = Xs[0][:, 0] + Xs[1][:, 1] ** 2
    m = MVMLRegressor(n_landmarks=1, random_state=0).fit(Xs, y)
    assert m.solver_ == "structured"
    lam = np.linalg.eigvalsh(m.metric_)[0]
    assert m.metric_min_eigenvalue_ == pytest.approx(lam, rel=1e-10)


def test_float32_input_gives_float64_output_equal_to_float64_input(rng):
    """The documented rule: computations and outputs are float64 whatever the input dtype;
    float32 input gives the float64 answer of its (exactly converted) values."""
    Xs = [rng.standard_normal((60, 3)).astype(np.float32), rng.standard_normal((60, 2))]
    y = (Xs[0][:, 0] + Xs[1][:, 1]).astype(np.float32)
    X64 = [X.astype(np.float64) for X in Xs]
    for est in [
        MVMLRegressor(n_landmarks=20, random_state=0),
        MLKRRegressor(max_iter=5),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            p32 = est.fit(Xs, y).predict(Xs)
            p64 = est.fit(X64, y.astype(np.float64)).predict(X64)
        assert p32.dtype == np.float64
        np.testing.assert_array_equal(p32, p64)
    for tr in [BlockNystrom(n_landmarks=20, random_state=0), MultiViewKPCA(n_components=2)]:
        t32 = tr.fit(Xs).transform(Xs)
        assert t32.dtype == np.float64
        np.testing.assert_array_equal(t32, tr.fit(X64).transform(X64))
