"""Shared checks of abandoned candidates (the part axes that abandon, ``PartAxis.abandon``):
a search beside an earlier part's best against the same search run alone."""

import numpy as np
from numpy.testing import assert_array_equal


def splits(res, mask=slice(None)):
    k = sum(1 for key in res if key.startswith("split"))
    return np.column_stack([np.asarray(res[f"split{j}_test_score"])[mask] for j in range(k)])


def fold_order(earlier):
    """The order a later part runs its folds in beside the earlier parts' ``cv_results_``
    (``earlier``, a list): their best candidate's worst fold first (ties in fold order)."""
    best = max(earlier, key=lambda res: np.nanmax(res["mean_test_score"]))
    i = int(np.nanargmax(best["mean_test_score"]))
    return np.argsort(splits(best)[i], kind="stable")


def check_abandoned(res, rows, alone, to_beat, order=None):
    """The candidates ``rows`` of a search beside an earlier best ``to_beat`` against the
    same search ``alone``: equal split scores on the folds each was scored on, where the
    folds left (NaN) are those not run once even scores of 1 on them would not have lifted
    it above ``to_beat``. ``order``: the order the folds ran in (:func:`fold_order`); then
    the folds scored are the first ones of that order."""
    got, full = splits(res, rows), splits(alone)
    for g, f in zip(got, full):
        done = np.isfinite(g)
        assert_array_equal(g[done], f[done])
        if order is not None:  # the folds scored: the first of the order, then none
            k = int(done.sum())
            assert done[np.asarray(order)[:k]].all()
        if not done.all() and np.isfinite(f).all():  # abandoned: hopeless, and so it is
            # its best case, scores of 1 on the folds not run, averaged as cv_results_'
            # means are (NumPy's mean of the folds in order): not above to_beat
            assert np.where(done, g, 1.0).mean() <= to_beat
            assert f.mean() <= to_beat
