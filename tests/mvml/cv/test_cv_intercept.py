"""The intercept as a part axis of the CV estimators: ``fit_intercept="auto"`` on
``MVMLRegressorCV``, ``MVMLClassifierCV`` and ``MVMLSVCCV`` (``PART_AXES``)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from _abandon import check_abandoned, fold_order
from mvkernels import MVMLSVCCV, MVMLClassifierCV, MVMLRegressorCV
from mvkernels.mvml.cv._grid import part_axis


def _shifted(seed=0, n=30):
    """Regression far from 0 (``+ 100``) on few rows far apart: with a narrow bandwidth a
    bias-free model pulls a held-out row's output towards 0, an offset does not."""
    rng = np.random.default_rng(seed)
    X1, X2 = rng.uniform(-6, 6, size=(n, 1)), rng.uniform(-6, 6, size=(n, 1))
    return [X1, X2], np.sin(X1[:, 0]) + 0.5 * X2[:, 0] + 100.0


def _bump(seed=0, n=40):
    """A bump at 0 on a target that is 0 elsewhere: the offset (the positive training
    mean) is wrong for the held-out rows away from the bump."""
    rng = np.random.default_rng(seed)
    X1, X2 = rng.uniform(-6, 6, size=(n, 1)), rng.normal(size=(n, 1))
    return [X1, X2], 5.0 * np.exp(-(X1[:, 0] ** 2) / 0.5)


def _imbalanced(seed=0):
    """One large class spread over a square and two small tight ones: a held-out row of
    the large class far from every training row gets one-vs-rest decision values near 0
    without an offset, near each class's mean target (the large class's highest) with
    one."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], [40, 8, 8])
    X = rng.uniform(-10, 10, size=(y.size, 2))
    X[y == 1] = [3.0, 3.0] + 0.3 * rng.normal(size=(8, 2))
    X[y == 2] = [-3.0, -3.0] + 0.3 * rng.normal(size=(8, 2))
    return [X[:, :1], X[:, 1:]], y


def _balanced(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 30)
    X = np.where(y[:, None] == 0, -2.0, 2.0) + rng.normal(size=(60, 2))
    return [X[:, :1], X[:, 1:]], y


CASES = {
    "regressor": (MVMLRegressorCV, _shifted, True),
    "classifier": (MVMLClassifierCV, _imbalanced, False),
    "svc": (MVMLSVCCV, _imbalanced, False),
}


def _fit(cls, data, **kw):
    Xs, y = data()
    kw = dict(cv=3, random_state=0, bandwidth_factors=[4.0, 16.0], **kw)
    return cls(**kw).fit(Xs, y), Xs


@pytest.mark.parametrize("case", list(CASES))
def test_auto_is_the_union_of_both_searches_on_the_same_folds(case):
    """The default value's search first, exactly as alone; the other value's rows are its
    search alone on the folds each candidate was scored on (abandoned once it could not
    beat the first's best); the best of both, ties to the default, and its refit."""
    cls, data, default = CASES[case]
    auto, Xs = _fit(cls, data, fit_intercept="auto")
    alone = {v: _fit(cls, data, fit_intercept=v)[0] for v in (default, not default)}
    first, second = alone[default], alone[not default]
    res = auto.cv_results_
    values = np.asarray(res["param_fit_intercept"], dtype=bool)
    n = len(first.cv_results_["params"])
    assert_array_equal(values, [default] * n + [not default] * len(second.cv_results_["params"]))
    for key, column in first.cv_results_.items():
        if not key.endswith("_time") and not key.startswith(("param_", "rank_")):
            got = res[key][:n]
            if key == "params":
                assert got == [{"fit_intercept": default, **p} for p in column]
            else:
                assert_array_equal(np.asarray(got), np.asarray(column))
    order = fold_order([first.cv_results_])
    check_abandoned(res, ~(values == default), second.cv_results_, first.best_score_, order)
    winner = second if second.best_score_ > first.best_score_ else first
    assert auto.best_score_ == max(first.best_score_, second.best_score_)
    assert auto.best_params_ == {"fit_intercept": winner.fit_intercept, **winner.best_params_}
    assert res["params"][auto.best_index_] == auto.best_params_
    assert res["rank_test_score"][auto.best_index_] == 1
    assert auto.best_estimator_.fit_intercept is winner.fit_intercept
    assert auto.fit_intercept == "auto"  # the parameter as given
    out = "decision_function" if hasattr(auto, "decision_function") else "predict"
    assert_allclose(getattr(auto, out)(Xs), getattr(winner, out)(Xs), rtol=1e-12, atol=1e-12)
    if hasattr(auto, "predict_proba"):
        assert_allclose(auto.predict_proba(Xs), winner.predict_proba(Xs), rtol=1e-12)


@pytest.mark.parametrize(
    "case, data, factors, expected",
    [
        ("regressor", _shifted, [16.0], True),
        ("classifier", _imbalanced, [16.0], True),
        ("regressor", _bump, [4.0], False),
        ("classifier", _balanced, None, False),
    ],
    ids=["shifted-targets", "imbalanced-classes", "bump", "balanced-classes"],
)
def test_the_intercept_is_chosen_where_it_matters(case, data, factors, expected):
    """Narrow bandwidths (factor 16: the rows are far apart for the kernel) where the
    offset matters."""
    cls = CASES[case][0]
    kw = dict(bandwidth_factors=factors)
    Xs, y = data()
    fits = {
        v: cls(fit_intercept=v, cv=3, random_state=0, **kw).fit(Xs, y)
        for v in (False, True, "auto")
    }
    auto = fits["auto"]
    assert auto.best_params_["fit_intercept"] is expected
    assert auto.best_estimator_.fit_intercept is expected
    assert auto.best_score_ == fits[expected].best_score_
    if data in (_shifted, _imbalanced):  # by a margin
        assert fits[True].best_score_ > fits[False].best_score_ + 0.03
    if data is _bump:
        assert fits[False].best_score_ > fits[True].best_score_ + 0.01
    if data is _balanced:  # both perfect: the tie goes to the default, nothing else fitted
        assert fits[True].best_score_ == fits[False].best_score_ == 1.0
        later = np.asarray(auto.cv_results_["param_fit_intercept"], dtype=bool)
        assert np.isnan(auto.cv_results_["mean_test_score"][later]).all()


@pytest.mark.parametrize("case", list(CASES))
def test_ties_go_to_the_default(case):
    """A scoring that ties every candidate (a callable: nothing is abandoned): the first
    candidate of the default value's search wins (False for the classifiers, True for
    the regressor, the classes' defaults)."""
    cls, data, default = CASES[case]
    auto, _ = _fit(cls, data, fit_intercept="auto", scoring=_zero)
    first, _ = _fit(cls, data, fit_intercept=default, scoring=_zero)
    assert part_axis("fit_intercept").searched(auto) == (default, not default)
    assert auto.best_params_ == {"fit_intercept": default, **first.best_params_}
    assert auto.best_index_ == first.best_index_  # the default's rows come first
    scored = np.isfinite(auto.cv_results_["mean_test_score"]).sum()
    assert scored == 2 * np.isfinite(first.cv_results_["mean_test_score"]).sum()


def _zero(est, X, y):
    return 0.0


def test_beside_the_decomposition_the_product_of_parts_shares_screens(monkeypatch):
    """With ``multi_class="auto"``: four searches, the product of both axes, in the order
    of ``PART_AXES`` (the decomposition, then the intercept); one leave-one-out screen per
    intercept value (the decomposition's parts share it); the best of the four."""
    from mvkernels.mvml.cv import _folds_screen

    keys = []
    screen = _folds_screen.screen_pairs

    def counted(fs, S):
        keys.append(dict(fs.screen_key)["fit_intercept"])
        return screen(fs, S)

    monkeypatch.setattr(_folds_screen, "screen_pairs", counted)
    kw = dict(multi_class="auto", scoring="accuracy")  # no part abandoned
    auto, Xs = _fit(MVMLClassifierCV, _imbalanced, fit_intercept="auto", **kw)
    assert keys == [False, True]
    monkeypatch.undo()
    res = auto.cv_results_
    combos = list(zip(res["param_multi_class"], res["param_fit_intercept"]))
    assert list(dict.fromkeys(combos)) == [
        ("ovr", False),
        ("ovr", True),
        ("ovo", False),
        ("ovo", True),
    ]
    alone = {
        (mc, fi): _fit(MVMLClassifierCV, _imbalanced, multi_class=mc, fit_intercept=fi)[0]
        for mc, fi in dict.fromkeys(combos)
    }
    for (mc, fi), est in alone.items():
        rows = np.array([c == (mc, fi) for c in combos])
        assert_array_equal(res["mean_test_score"][rows], est.cv_results_["mean_test_score"])
    best = max(alone.values(), key=lambda e: e.best_score_)  # the first of the best
    assert auto.best_score_ == best.best_score_
    assert auto.best_estimator_.multi_class == best.multi_class
    assert auto.best_estimator_.fit_intercept is best.fit_intercept


def test_fit_intercept_is_validated_and_a_bool_is_not_split():
    Xs, y = _balanced()
    for cls in (MVMLRegressorCV, MVMLClassifierCV, MVMLSVCCV):
        with pytest.raises(ValueError, match="fit_intercept"):
            cls(fit_intercept="yes").fit(Xs, y)
    est = MVMLClassifierCV(fit_intercept=True, cv=3, random_state=0).fit(Xs, y)
    assert "fit_intercept" not in est.best_params_
    assert "param_fit_intercept" not in est.cv_results_
    assert est.best_estimator_.fit_intercept is True


def test_the_reduced_models_of_missing_views_take_the_choice():
    """With missing views the refit searches a model per pattern of observed views from
    the chosen part: its intercept value, not "auto" again."""
    Xs, y = _shifted(1, n=45)
    Xs[1] = Xs[1].copy()
    Xs[1][:9] = np.nan
    kw = dict(cv=3, random_state=0, bandwidth_factors=[16.0])
    auto = MVMLRegressorCV(fit_intercept="auto", **kw).fit(Xs, y)
    assert auto.best_params_["fit_intercept"] is True
    reduced = auto.best_estimator_.reduced_models_
    assert reduced and all(m.fit_intercept is True for m in reduced.values())
    alone = MVMLRegressorCV(fit_intercept=True, **kw).fit(Xs, y)
    assert_allclose(auto.predict(Xs), alone.predict(Xs), rtol=1e-12)
