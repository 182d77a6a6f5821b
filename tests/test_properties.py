"""Property-based robustness: every public estimator on random inputs and parameters.

Hypothesis draws shapes (0 to 9 samples, 1 to 3 views of 0 to 3 columns), dtypes (float,
int, bool, complex, object numbers, object strings), containers (list of views, one array
cut by ``views``, DataFrame), NaN/inf, mismatched view lengths and parameter values (valid
and invalid). Property: ``fit`` then ``predict``/``transform`` either raises a
``ValueError``/``TypeError`` whose message names the injected problem (the parameter's
name, "NaN", "complex", "samples", ...), or returns finite outputs of the right shape. No
other exception, no LAPACK error escaping, no ``ComplexWarning``.

Seeded (``derandomize=True``): the same examples on every run; small data and
``max_examples`` keep the module under two minutes on two cores.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import mvkernels
from mvkernels import baselines as B
from mvkernels.nystrom import BlockNystrom
from mvkernels.olok import OLOKRegressor, VVRLSRegressor
from mvkernels.rkm import MultiViewKPCA, RKMForecaster

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SETTINGS = settings(
    derandomize=True,
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

#: genuine limits of a data set that a clear error may report instead of an injected problem
#: (e.g. a NaN in a 1-sample view: "at least 2 samples required" is right too)
LEGIT = ("sample", "class", "identical", "landmark")

#: fragments of messages that come from deep inside NumPy/SciPy, never from a clear check
DEEP = (
    "could not broadcast",
    "operands could not",
    "index ",
    "out of bounds",
    "unsupported operand",
    "object of type",
    "has no attribute",
    "not subscriptable",
    "ufunc",
    "setting an array element with a sequence",
    "Internal Error",
    "allow_pickle",
    "singular matrix",
    "leading minor",
    "did not converge",
    "inhomogeneous",
)

DTYPES = ["float64", "float32", "int64", "bool", "complex", "object", "object-str"]
CONTAINERS = ["list", "single", "dataframe"]


# ----------------------------------------------------------------------------- data
@st.composite
def multiview(draw: Any, task: str, max_views: int = 3) -> dict:
    """Random multi-view data, its container, and the problems deliberately put in it."""
    n = draw(st.integers(0, 9))
    n_views = draw(st.integers(1, max_views))
    widths = [
        draw(st.integers(0, 3) if draw(st.booleans()) and n_views > 1 else st.integers(1, 3))
        for _ in range(n_views)
    ]
    dtype = draw(st.sampled_from(DTYPES))
    container = draw(st.sampled_from(CONTAINERS))
    corrupt = draw(st.sampled_from(["none", "none", "nan", "inf", "mismatch"]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.RandomState(seed)
    problems: list[tuple[str, ...]] = []
    y_problems: list[tuple[str, ...]] = []
    if n == 0:
        problems.append(("sample",))
    if 0 in widths:
        problems.append(("0 feature", "features", "0 columns", "selects no column", "views"))
    Xs = [rng.standard_normal((n, w)) for w in widths]
    if corrupt in ("nan", "inf") and n > 0 and sum(widths) > 0 and dtype not in ("int64", "bool"):
        v = next(i for i, w in enumerate(widths) if w > 0)
        Xs[v][rng.randint(n), 0] = np.nan if corrupt == "nan" else np.inf
        problems.append(("NaN", "nan", "inf", "finite"))
    Xs = [_cast(X, dtype, problems) for X in Xs]
    if corrupt == "mismatch" and container == "list" and n_views > 1:
        Xs[-1] = np.concatenate([Xs[-1], Xs[-1][:1] if n else np.zeros((1, widths[-1]))])
        problems.append(("samples", "sample"))
    if task == "classification":
        y = rng.randint(0, draw(st.integers(1, 3)), size=n)
    else:
        y = rng.standard_normal(n)
        if draw(st.integers(0, 9)) == 0 and n:
            y = y + 1j
            y_problems.append(("omplex",))
    X, views = _container(Xs, widths, container)
    return {
        "X": X,
        "views": views,
        "y": y,
        "n": n,
        "problems": problems,
        "y_problems": y_problems,
        "n_views": n_views,
        "widths": widths,
    }


def _cast(X: np.ndarray, dtype: str, problems: list) -> np.ndarray:
    if dtype == "complex":
        if X.size:
            problems.append(("omplex",))
        return X + 1j
    if dtype == "object":
        return X.astype(object)
    if dtype == "object-str":
        out = X.astype(object)
        if out.size:
            out.flat[0] = "a"
            problems.append(("convert", "numeric", "string", "could not", "str"))
        return out
    if dtype in ("int64", "bool"):
        return np.nan_to_num(X, nan=0.0, posinf=1.0).astype(dtype)
    return X.astype(dtype)


def _container(Xs: list, widths: list, container: str) -> tuple[Any, Any]:
    if container == "list" or any(X.shape[0] != Xs[0].shape[0] for X in Xs):
        return list(Xs), None
    X = np.hstack(Xs) if Xs else np.empty((0, 0))
    views = list(widths)
    if container == "dataframe":
        import pandas as pd

        return pd.DataFrame(X), views
    return X, views


# ----------------------------------------------------------------------------- params
#: (parameter, value, keywords its error must contain or None when the value is valid)
PARAMS = {
    "alpha": [
        (1.0, None),
        (1e-3, None),
        (-1.0, ("alpha",)),
        (np.nan, ("alpha",)),
        ("a", ("alpha",)),
    ],
    "C": [(1.0, None), (0.0, ("C",))],
    "kernel": [("rbf", None), ("linear", None), ("poly", None), ("cosine", ("kernel",))],
    "kernel_params": [
        (None, None),
        ({"gamma": 0.5}, None),
        ({"gamma": "x"}, ("gamma",)),
        ({"degree": 2.5}, ("degree",)),
    ],
    "n_landmarks": [
        (None, None),
        (0.5, None),
        (3, None),
        (0, ("n_landmarks",)),
        (1.5, ("n_landmarks",)),
    ],
    "landmarks": [
        ("uniform", None),
        ("kmeans++", None),
        ("leverage", None),
        ("foo", ("landmarks",)),
        (0.5, ("landmarks",)),
    ],
    "eig_floor": [(1e-10, None), (2.0, ("eig_floor",))],
    "chunk_size": [(None, None), (2, None), (-1, ("chunk_size",)), (2.5, ("chunk_size",))],
    "max_iter": [(3, None), (0, ("max_iter",))],
    "n_components": [(None, None), (1, None), (0, ("n_components",))],
}


@st.composite
def params_for(draw: Any, est: Any) -> tuple[dict, list]:
    names = set(est.get_params())
    chosen, problems = {}, []
    for name, options in PARAMS.items():
        if name not in names or not draw(st.booleans()):
            continue
        value, keys = draw(st.sampled_from(options))
        if (
            name == "n_landmarks"
            and value is None
            and "n_landmarks" in names
            and isinstance(est, BlockNystrom)
        ):
            continue  # BlockNystrom always approximates
        if name == "n_components" and value is None and isinstance(est, MultiViewKPCA):
            continue
        chosen[name] = value
        if keys is not None:
            problems.append(keys)
    return chosen, problems


# ----------------------------------------------------------------------------- property
def _check(est: Any, data: dict, param_problems: list, method: str, supervised: bool) -> None:
    problems = data["problems"] + param_problems + (data["y_problems"] if supervised else [])
    X, n = data["X"], data["n"]
    if data["views"] is not None and "views" in est.get_params():
        est.set_params(views=data["views"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            if supervised:
                est.fit(X, data["y"])
            else:
                est.fit(X)
            out = getattr(est, method)(X)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert not isinstance(exc, np.linalg.LinAlgError), f"LAPACK error escaped: {msg}"
        assert len(msg) > 10, f"unclear error {type(exc).__name__}: {msg!r}"
        assert not any(d in msg for d in DEEP), f"deep NumPy/SciPy error: {msg}"
        if problems:
            assert any(k in msg for keys in problems + [LEGIT] for k in keys), (
                f"error does not name the problem {problems}: {msg}"
            )
        return
    assert not problems, f"accepted bad input {problems}; output {out!r}"[:500]
    out = np.asarray(out, dtype=np.float64)
    assert out.shape[0] == n
    if supervised and method == "predict" and np.ndim(data["y"]) == 1:
        assert out.ndim == 1
    assert np.isfinite(out).all()


SUPERVISED = [
    (B.SingleViewRegressor, "regression"),
    (B.SingleViewClassifier, "classification"),
    (B.EarlyFusionRegressor, "regression"),
    (B.EarlyFusionClassifier, "classification"),
    (B.LateFusionRegressor, "regression"),
    (B.LateFusionClassifier, "classification"),
    (B.LpMKLRegressor, "regression"),
    (B.LpMKLClassifier, "classification"),
    (B.OKLRegressor, "regression"),
    (B.OKLClassifier, "classification"),
    (B.MLKRRegressor, "regression"),
    (B.MLKRClassifier, "classification"),
]

#: the MVML family (square and hinge loss)
OTHERS = [
    (mvkernels.MVMLRegressor, "regression"),
    (mvkernels.MVMLClassifier, "classification"),
    (mvkernels.MVMLSVC, "classification"),
]


@pytest.mark.parametrize("cls, task", SUPERVISED + OTHERS)
@SETTINGS
@given(st.data())
def test_supervised_estimators(cls, task, data):
    est = cls()
    if "max_iter" in est.get_params():
        est.set_params(max_iter=3)
    params, param_problems = data.draw(params_for(est))
    est.set_params(**params)
    _check(est, data.draw(multiview(task)), param_problems, "predict", supervised=True)


@pytest.mark.parametrize("cls", [BlockNystrom, MultiViewKPCA])
@SETTINGS
@given(st.data())
def test_transformers(cls, data):
    est = cls(random_state=0)
    params, param_problems = data.draw(params_for(est))
    est.set_params(**params)
    _check(est, data.draw(multiview("regression")), param_problems, "transform", supervised=False)


@pytest.mark.parametrize("cls", [OLOKRegressor, VVRLSRegressor])
@SETTINGS
@given(st.data())
def test_operator_valued_regressors(cls, data):
    d = data.draw(multiview("regression", max_views=1))
    X = d["X"][0] if isinstance(d["X"], list) else d["X"]  # one array (or DataFrame)
    n_out = data.draw(st.integers(1, 2))
    y = np.column_stack([d["y"]] * n_out) if n_out > 1 else d["y"]
    problems = d["problems"]
    est = cls()
    params, param_problems = data.draw(params_for(est))
    est.set_params(**params)
    _check(
        est,
        {**d, "X": X, "y": y, "problems": problems, "views": None},
        param_problems,
        "predict",
        supervised=True,
    )


@SETTINGS
@given(
    n=st.integers(0, 30),
    lag=st.sampled_from([1, 3, 0, 2.5, "x"]),
    dtype=st.sampled_from(["float64", "int64", "complex", "object-str"]),
    corrupt=st.sampled_from(["none", "nan", "inf"]),
    seed=st.integers(0, 2**16),
)
def test_rkm_forecaster(n, lag, dtype, corrupt, seed):
    rng = np.random.RandomState(seed)
    problems: list = []
    z = np.sin(np.arange(n) / 3.0) + 0.1 * rng.standard_normal(n)
    if corrupt != "none" and n:
        z[rng.randint(n)] = np.nan if corrupt == "nan" else np.inf
        if dtype not in ("int64", "bool"):  # _cast replaces NaN/inf by finite integers
            problems.append(("NaN", "nan", "inf", "finite"))
    z = _cast(z[:, None], dtype, problems)[:, 0]
    if not isinstance(lag, int) or lag < 1:
        problems.append(("lag",))
    elif n < lag + 3:
        problems.append(("needs at least", "values"))
    if dtype in ("int64", "bool"):  # rounding can leave a constant series
        problems.append(("constant",))
    est = RKMForecaster(lag=lag, n_components=1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            out = est.fit(z).forecast(3)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert not isinstance(exc, np.linalg.LinAlgError), msg
        assert not any(d in msg for d in DEEP), msg
        if problems:
            assert any(k in msg for keys in problems + [LEGIT] for k in keys), (problems, msg)
        return
    assert not [p for p in problems if p != ("constant",)], problems
    assert np.shape(out) == (3,) and np.isfinite(out).all()
