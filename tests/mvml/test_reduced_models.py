"""The CV estimators' reduced models for samples with missing views
(missing_views="reduced"): one model per pattern of observed views."""

import numpy as np
import pytest

from mvkernels import MVMLClassifierCV, MVMLRegressorCV

KW = dict(alphas=[1e-2, 1.0], etas=[1.0], bandwidth_factors=[1.0, 4.0], max_iter=1, cv=3)


def _data(rng, n=120):
    Z = rng.standard_normal((n, 2))
    Xs = [
        np.tanh(Z @ rng.standard_normal((2, 4))) + 0.1 * rng.standard_normal((n, 4)),
        np.tanh(Z @ rng.standard_normal((2, 3))) + 0.1 * rng.standard_normal((n, 3)),
        Z[:, :1] + 0.3 * rng.standard_normal((n, 2)),
    ]
    y = Z[:, 0] + Z[:, 1] ** 2
    mask = np.ones((n, 3), dtype=bool)
    mask[np.arange(0, n, 4), 0] = False
    mask[np.arange(1, n, 4), 1] = False
    mask[np.arange(2, n, 8), 2] = False
    mask[np.arange(3, n, 8), 1:] = False
    for l, X in enumerate(Xs):
        X[~mask[:, l]] = np.nan
    return Xs, y, mask


@pytest.mark.parametrize("estimator", ["regressor", "classifier"])
def test_reduced_model_equals_a_search_on_the_observed_views(rng, estimator):
    """A test row whose observed views are O gets exactly the outputs of the search run on
    the views O alone over the training rows observing any of them (missing_views=
    "complete" there), restricted by the search of all the views (reduced_search_params,
    REDUCED_CV_FOLDS folds); complete test rows get the model of all the views, which is
    the missing_views="complete" model."""
    from mvkernels.mvml._reduced import REDUCED_CV_FOLDS, reduced_search_params

    Xs, y, mask = _data(rng)
    if estimator == "classifier":
        y = np.digitize(y, [0.3, 1.2])
    cls = MVMLRegressorCV if estimator == "regressor" else MVMLClassifierCV
    tr, te = np.arange(80), np.arange(80, 120)
    red = cls(random_state=0, **KW).fit([X[tr] for X in Xs], y[tr])
    full = cls(random_state=0, missing_views="complete", **KW).fit([X[tr] for X in Xs], y[tr])
    models = red.best_estimator_.reduced_models_
    assert set(models) == {tuple(p) for p in np.unique(mask[tr], axis=0) if not p.all()}
    Xte = [X[te] for X in Xs]
    out = red.decision_function(Xte) if estimator == "classifier" else red.predict(Xte)
    ref_all = full.decision_function(Xte) if estimator == "classifier" else full.predict(Xte)
    complete = mask[te].all(axis=1)
    np.testing.assert_allclose(out[complete], ref_all[complete], rtol=0, atol=1e-12)
    pat = (True, False, True)
    views = np.flatnonzero(pat)
    rows = tr[mask[tr][:, views].any(axis=1)]
    restricted = {**KW, "cv": min(KW["cv"], REDUCED_CV_FOLDS)}
    restricted.update(reduced_search_params(red, views.size, np.array(KW["alphas"])))
    sub = cls(random_state=0, missing_views="complete", **restricted).fit(
        [Xs[l][rows] for l in views], y[rows]
    )
    sel = np.flatnonzero((mask[te] == pat).all(axis=1))
    assert sel.size > 0
    sub_te = [Xs[l][te][sel] for l in views]
    ref = sub.decision_function(sub_te) if estimator == "classifier" else sub.predict(sub_te)
    np.testing.assert_allclose(out[sel], ref, rtol=0, atol=1e-12)
    if estimator == "classifier":
        np.testing.assert_array_equal(red.predict(Xte)[sel], sub.predict(sub_te))
        np.testing.assert_allclose(red.predict_proba(Xte).sum(axis=1), 1.0)


def test_no_reduced_models_for_complete_training_rows_or_complete(rng):
    """Complete training rows fit no reduced model (predictions unchanged);
    missing_views="complete" fits none either."""
    Xs, y, _ = _data(rng)
    full = [np.nan_to_num(X) for X in Xs]
    a = MVMLRegressorCV(random_state=0, **KW).fit(full, y)
    assert not hasattr(a.best_estimator_, "reduced_models_")
    b = MVMLRegressorCV(random_state=0, missing_views="complete", **KW).fit(Xs, y)
    assert not hasattr(b.best_estimator_, "reduced_models_")


def test_bad_missing_views_value():
    X = np.random.default_rng(0).standard_normal((30, 4))
    with pytest.raises(ValueError, match="missing_views"):
        MVMLRegressorCV(missing_views="impute", views=[2, 2]).fit(X, X[:, 0])


def test_reduced_models_cap_keeps_the_most_frequent_patterns(rng, monkeypatch):
    """At most MAX_REDUCED_MODELS reduced models, for the most frequent patterns; rows of
    a pattern left out get the model of all the views (the "complete" model's outputs)."""
    from mvkernels.mvml import _reduced

    Xs, y, mask = _data(rng)
    mask[[6, 14], 0] = False  # two complete rows lose view 0: no tie among the top two
    Xs[0][[6, 14]] = np.nan
    monkeypatch.setattr(_reduced, "MAX_REDUCED_MODELS", 2)
    red = MVMLRegressorCV(random_state=0, **KW).fit(Xs, y)
    full = MVMLRegressorCV(random_state=0, missing_views="complete", **KW).fit(Xs, y)
    patterns, counts = np.unique(mask, axis=0, return_counts=True)
    strict = ~patterns.all(axis=1)
    patterns, counts = patterns[strict], counts[strict]
    assert np.sort(counts)[-2] > np.sort(counts)[-3]  # the most frequent two are well defined
    top = {tuple(bool(b) for b in p) for p in patterns[np.argsort(-counts)][:2]}
    assert set(red.best_estimator_.reduced_models_) == top
    left_out = ~(mask[:, None, :] == np.array(sorted(top))[None]).all(axis=2).any(axis=1)
    left_out &= ~mask.all(axis=1)
    assert left_out.any()
    # the same model, fitted twice: equal to rounding (1.5e-12 apart with the minimum
    # versions' numpy and OpenBLAS on some machines; another model would be ~1e-2 apart)
    np.testing.assert_allclose(
        red.predict(Xs)[left_out], full.predict(Xs)[left_out], rtol=1e-10, atol=1e-10
    )
