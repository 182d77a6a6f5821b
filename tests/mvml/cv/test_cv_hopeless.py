"""The abandoning rule of the part axes (``_folds.hopeless``): a candidate is
abandoned once its best possible mean, averaged as ``cv_results_``'s means are, is not
above the earlier parts' best (a tie goes to the earlier part)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from mvkernels.mvml.cv._folds import hopeless


def _scoring(to_beat):
    """The rule beside earlier parts whose best mean score is ``to_beat``."""
    return SimpleNamespace(hopeless=lambda S, *a: hopeless(to_beat, S.n_splits, S.scorer, *a))


def test_a_candidate_that_can_at_best_tie_is_abandoned():
    S = SimpleNamespace(n_splits=5, scorer=None)
    earlier = np.array([0.95, 1.0, 0.975, 1.0, 0.9])
    to_beat = float(np.mean(earlier))
    f = _scoring(to_beat)
    # the same scores on folds 4, 0 and 2 (run worst first): at best the same mean
    tie = np.array([[0.95, 0.975, 0.9]])
    assert f.hopeless(S, tie, np.array([0, 2, 4])).all()
    # one more hit on a fold: it can still win
    ahead = np.array([[0.95, 1.0, 0.9]])
    assert not f.hopeless(S, ahead, np.array([0, 2, 4])).any()
    # every outcome of the folds left averages at most the bound (a rounded sum is
    # nondecreasing in each term), so the full search would not have chosen it either
    rng = np.random.default_rng(0)
    for _ in range(200):
        rest = rng.choice([0.9, 0.925, 0.95, 0.975, 1.0], size=2)
        assert np.mean([0.95, rest[0], 0.975, rest[1], 0.9]) <= to_beat
    # not scored: never chosen; scores of 1 to beat: everything is abandoned
    assert f.hopeless(S, np.array([[np.nan]]), np.array([1])).all()
    assert _scoring(1.0).hopeless(S, np.zeros((2, 0))).all()


def test_no_earlier_part_or_a_custom_scoring_abandons_nothing():
    S = SimpleNamespace(n_splits=3, scorer=None)
    assert not _scoring(None).hopeless(S, np.zeros((4, 2))).any()
    custom = SimpleNamespace(n_splits=3, scorer=lambda *a: 0.0)
    assert not _scoring(0.5).hopeless(custom, np.zeros((4, 2))).any()


def test_the_joint_only_candidates_pairs_are_abandoned_too():
    """multi_class="auto" on ten digits classes of 10 rows: the joint-only candidate's
    one-vs-one scores are those of the one-vs-one search alone on the folds it ran,
    its other folds abandoned (NaN) only where it could not beat one-vs-rest's best; the
    choice is the one of the two searches apart."""
    from sklearn.datasets import load_digits

    from _abandon import check_abandoned, fold_order
    from mvkernels import MVMLClassifierCV

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(2)
    rows = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), 10, replace=False) for c in range(10)]
    )
    X, y = X[rows] / 16.0, y[rows]
    Xs = [X[:, :32], X[:, 32:]]
    kw = dict(random_state=0, bandwidth_factors=[2.0, 4.0], max_iter=2)
    auto = MVMLClassifierCV(multi_class="auto", **kw).fit(Xs, y)
    ovr = MVMLClassifierCV(**kw).fit(Xs, y)
    ovo = MVMLClassifierCV(multi_class="ovo", **kw).fit(Xs, y)
    res = auto.cv_results_
    dec = np.asarray(res["param_multi_class"])
    only = np.asarray([p["joint_view"] == "only" for p in res["params"]])
    rows = (dec == "ovo") & only
    split_keys = [f"split{k}_test_score" for k in range(5)]
    alone = {k: np.asarray(ovo.cv_results_[k])[only[dec == "ovo"]] for k in split_keys}
    check_abandoned(res, rows, alone, ovr.best_score_, fold_order([ovr.cv_results_]))
    scored = np.isfinite(np.column_stack([res[k] for k in split_keys]))[rows]
    full = np.isfinite(np.column_stack([alone[k] for k in split_keys]))
    assert full.any() and scored.sum() < full.sum()  # some of its folds were not run
    winner = ovr if ovr.best_score_ >= ovo.best_score_ else ovo
    assert auto.best_params_ == {"multi_class": winner.multi_class, **winner.best_params_}
    assert auto.best_score_ == winner.best_score_
