"""Multi-view input validation: the list and single-array forms, errors naming the view."""

import numpy as np
import pytest

from _views import two_views
from mvkernels import check_views


def test_list_and_single_array_forms_agree(rng):
    Xs = two_views(rng)
    X = np.hstack(Xs)
    for spec in ([3, 5], [slice(0, 3), slice(3, 8)], [np.arange(3), np.arange(3, 8)]):
        got = check_views(X, views=spec)
        assert [g.shape for g in got] == [(60, 3), (60, 5)]
        np.testing.assert_array_equal(got[1], Xs[1])
    assert len(check_views(X)) == 1  # no spec: one view with every column


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda Xs: [Xs[0], Xs[1][:50]], "view 1 has 50 samples, view 0 has 60"),
        (lambda Xs: [Xs[0], np.where(np.arange(5) == 2, np.nan, Xs[1])], "view 1 contains NaN"),
        (
            lambda Xs: [np.where(np.arange(3) == 0, np.inf, Xs[0]), Xs[1]],
            "view 0 contains infinity",
        ),
        (lambda Xs: [Xs[0], np.empty((60, 0))], "view 1 has 0 features"),
        (lambda Xs: [Xs[0][:0], Xs[1][:0]], "view 0 has 0 sample"),
        (lambda Xs: [Xs[0], Xs[1][:, 0]], "view 1 is 1-D"),
        (lambda Xs: [], "empty list"),
    ],
)
def test_bad_input_names_the_view(rng, bad, match):
    with pytest.raises(ValueError, match=match):
        check_views(bad(two_views(rng)))


def test_predict_time_checks(rng):
    Xs = two_views(rng)
    with pytest.raises(ValueError, match="expected 3 view"):
        check_views(Xs, n_views=3)
    with pytest.raises(ValueError, match="view 1 has 5 features, but 4 were seen"):
        check_views(Xs, n_features=[3, 4])
    with pytest.raises(ValueError, match="add up to 7 columns"):
        check_views(np.hstack(Xs), views=[3, 4])
    with pytest.raises(TypeError):
        check_views(None)
