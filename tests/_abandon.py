"""Shared checks of abandoned candidates (the part axes that abandon, ``PartAxis.abandon``):
a search beside an earlier part's best against the same search run alone."""

import numpy as np
from numpy.testing import assert_array_equal


def splits(res, mask=slice(None)):
    k = sum(1 for key in res if key.startswith("split"))
    return np.column_stack([np.asarray(res[f"split{j}_test_score"])[mask] for j in range(k)])


def check_abandoned(res, rows, alone, to_beat):
    """The candidates ``rows`` of a search beside an earlier best ``to_beat`` against the
    same search ``alone``: equal split scores up to the fold each was abandoned at, where
    even scores of 1 on its other folds would not have lifted it above ``to_beat``."""
    got, full = splits(res, rows), splits(alone)
    n = got.shape[1]
    for g, f in zip(got, full):
        k = int(np.argmax(~np.isfinite(g))) if not np.isfinite(g).all() else n
        assert_array_equal(g[:k], f[:k])
        assert not np.isfinite(g[k:]).any()
        if k < n and np.isfinite(f).all():  # abandoned: hopeless, and so it is
            assert (g[:k].sum() + n - k) / n <= to_beat
            assert f.mean() <= to_beat
