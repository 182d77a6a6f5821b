"""The fitted model's mode on the prediction side (``mvml/_fitted_mode.py``, issue 33):
one part chosen at fit, no mode-string comparisons left in the MVML source, and each
part's outputs equal to the direct formula of its mode (eq. 11 / eq. 13-18)."""

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

from mvkernels import MVMLSVC, MVMLClassifier, MVMLRegressor
from mvkernels.mvml._fitted_mode import FullFit, NystromFit

MVML = Path(__file__).resolve().parents[2] / "src" / "mvkernels" / "mvml"


def _views(n=50, seed=0):
    rng = np.random.RandomState(seed)
    Xs = [rng.randn(n, 3), rng.randn(n, 2)]
    y = Xs[0][:, 0] - 2 * Xs[1][:, 1] + 0.1 * rng.randn(n)
    return Xs, y


def _is_mode(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("mode", "mode_")


def test_no_mode_string_comparisons_in_the_mvml_source():
    """No ``x.mode_ == "..."`` / ``x.mode != "..."`` anywhere in ``mvml/`` (was 6 in
    ``_base.py``): the parts answer instead."""
    found = []
    for path in sorted(MVML.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(
                _is_mode(x) for x in [node.left, *node.comparators]
            ):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []


@pytest.mark.parametrize(
    "n_landmarks, part, mode", [(None, FullFit, "full"), (20, NystromFit, "nystrom")]
)
def test_fitted_part_follows_the_mode_and_pickles(n_landmarks, part, mode):
    Xs, y = _views()
    reg = MVMLRegressor(n_landmarks=n_landmarks, random_state=0).fit(Xs, y)
    assert reg.mode_ == mode and type(reg._fitted_mode) is part
    Xt, _ = _views(n=7, seed=1)
    back = pickle.loads(pickle.dumps(reg))
    assert type(back._fitted_mode) is part
    np.testing.assert_array_equal(back.predict(Xt), reg.predict(Xt))
    refit = reg.set_params(n_landmarks=20 if n_landmarks is None else None).fit(Xs, y)
    assert type(refit._fitted_mode) is not part  # chosen again at every fit


class _OldFormat:
    """Pickles an estimator as the models saved before ``_fitted_mode`` existed: its
    state without that attribute (restored by the estimator's ``__setstate__``)."""

    def __init__(self, est):
        self.est = est

    def __reduce__(self):
        state = self.est.__getstate__()
        del state["_fitted_mode"]
        return _restore, (type(self.est), state)


def _restore(cls, state):
    est = cls.__new__(cls)
    est.__setstate__(state)
    return est


@pytest.mark.parametrize("n_landmarks, part", [(None, FullFit), (20, NystromFit)])
@pytest.mark.parametrize("cls", [MVMLRegressor, MVMLClassifier, MVMLSVC])
def test_a_model_pickled_before_the_fitted_mode_predicts_the_same(cls, n_landmarks, part):
    """A model pickled without ``_fitted_mode`` (the format before the mode's part) gets
    the part of its ``mode_`` back at unpickling and predicts as the model saved
    (missing view rows included in Nystrom mode)."""
    Xs, y = _views()
    if cls is not MVMLRegressor:
        y = (y > np.median(y)).astype(int)
    est = cls(n_landmarks=n_landmarks, random_state=0, max_iter=3).fit(Xs, y)
    Xt, _ = _views(n=7, seed=1)
    if part is NystromFit:
        Xt[1][:2] = np.nan  # completed through the map
    old = pickle.loads(pickle.dumps(_OldFormat(est)))
    assert type(old) is cls and type(old._fitted_mode) is part
    np.testing.assert_array_equal(old.predict(Xt), est.predict(Xt))
    if cls is not MVMLRegressor:
        np.testing.assert_array_equal(old.decision_function(Xt), est.decision_function(Xt))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_full_outputs_are_the_kernel_expansion(fit_intercept):
    """Full mode (eq. 11): ``f(x) = sum_l w_l sum_i k_l(x, x_i) g_l,i (+ b)``."""
    Xs, y = _views()
    Xt, _ = _views(n=9, seed=2)
    reg = MVMLRegressor(
        n_landmarks=None, learn_weights=True, fit_intercept=fit_intercept, joint_view=False
    )
    reg.fit(Xs, y)
    n = len(y)
    want = sum(
        reg.weights_[l] * kern(Xt[l], Xs[l]) @ reg.coef_[l * n : (l + 1) * n]
        for l, kern in enumerate(reg.kernels_)
    )
    np.testing.assert_allclose(reg.predict(Xt), want + reg.intercept_, rtol=1e-10, atol=1e-12)


def test_nystrom_outputs_are_the_feature_expansion():
    """Nystrom mode (eq. 13-18): ``f(x) = sum_l w_l u_l(x)^T g~_l``, with the map's
    completion on rows with a missing view."""
    Xs, y = _views()
    Xt, _ = _views(n=9, seed=3)
    Xt[1][[2, 5]] = np.nan
    reg = MVMLRegressor(n_landmarks=15, learn_weights=True, joint_view=False, random_state=0).fit(
        Xs, y
    )
    got = reg.predict(Xt)  # the compact missing-view model kept at fit
    U = reg.nystrom_.fit_missing_model(Xs).transform(Xt)  # the completion statistics
    p = reg.n_landmarks_
    want = U @ (reg.coef_ * np.repeat(reg.weights_, p))
    np.testing.assert_allclose(got, want + reg.intercept_, rtol=1e-8, atol=1e-10)
