"""Baselines on uWave (real data): the multi-view baselines beat single views, as in Table 1."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvkernels import baselines as B
from mvkernels.reproduce._uwave import VIEW_SIZES, load_split

pytestmark = pytest.mark.realdata


def test_uwave_baselines_at_6_percent_landmarks(data_dir):
    d = load_split(str(data_dir))
    common = dict(
        n_landmarks=0.06, views=VIEW_SIZES, random_state=0, kernel_params=d.view_gammas(8)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lp = B.LpMKLClassifier(loss="squared", alpha=0.1, **common).fit(d.X, d.y)
        single = B.SingleViewClassifier(C=10.0, **common).fit(d.X, d.y)
    acc_lp, acc_single = lp.score(d.Xt, d.yt), single.score(d.Xt, d.yt)
    # paper (6 %): lpMKL 92.34 %, best single-view SVM 56.54 %
    assert acc_lp >= 0.92
    assert acc_single < acc_lp - 0.1
    beta = lp.kernel_weights_
    assert np.linalg.norm(beta) == pytest.approx(1.0) and np.all(beta > 0.3)
    assert single.best_view_ in (0, 1, 2)
