"""A search along part axes fits the calibration of its best part only (the parts'
held-out values are kept until the union's choice), the one that part's own search
fits."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mvkernels import MVMLClassifierCV
from mvkernels.mvml import _proba


def _blobs(seed=0, n_per=15, k=4):
    rng = np.random.RandomState(seed)
    centres = rng.randn(k, 3) * 2.0
    y = np.repeat(np.arange(k), n_per)
    X = centres[y] + rng.randn(y.size, 3)
    return [X[:, :2], np.c_[X[:, 2:], rng.randn(y.size, 1)]], y


@pytest.mark.parametrize("params", [dict(multi_class="auto"), dict(loss="auto")])
def test_only_the_best_part_is_calibrated(monkeypatch, params):
    Xs, y = _blobs()
    calls = []
    calibration = _proba.BestOutOfFold.calibration

    def counted(self, *args, **kwargs):
        calls.append(1)
        return calibration(self, *args, **kwargs)

    kw = dict(cv=3, random_state=0, bandwidth_factors=[1.0, 4.0], max_iter=3)
    monkeypatch.setattr(_proba.BestOutOfFold, "calibration", counted)
    auto = MVMLClassifierCV(**params, **kw).fit(Xs, y)
    assert len(calls) == 1
    best = {k: auto.best_params_[k] for k in params}
    alone = MVMLClassifierCV(**best, **kw).fit(Xs, y)
    assert_array_equal(auto.predict_proba(Xs), alone.predict_proba(Xs))
