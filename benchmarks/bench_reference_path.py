"""The dense reference path of Algorithm 1 before and after a change (its batching over
targets, then over the CV's regularisation path), side by side in one run, and its share
of the CV time.

The fits that take the dense reference path (``reference_paths`` in
``mvkernels/mvml/_driver.py``): the learned block-sparse metric (``metric="sparse"``),
learned view weights (``learn_weights=True``) and full-kernel mode (``n_landmarks=None``),
on many-class and multi-output problems: scikit-learn's digits (300 training rows, two
32-column views, 10 classes), uWave (8 classes, 15 rows a class, three views; from
``MVKERNELS_DATA``, skipped without it) and 1,000 rows of two Gaussian views with four
regression outputs; and the CV estimators on such paths, on a small grid (three alphas,
two etas, one bandwidth factor, 3 folds, 5 outer iterations; digits: 150 rows, 10
classes), for which the table also gives the share of the CV's CPU time spent inside the
reference path (a CV fold runs its whole ``(alpha, eta)`` grid as one batch of the
reference path since the regularisation path is batched; the cases with ``max_iter=2``
are those where the first g-steps, shared by the grid, are a third of the g-steps). As
``bench_engine.py``, the package of an earlier commit (``--against``, default ``main``)
is exported with ``git archive`` and each tree runs every case in a subprocess (before
the engine, e.g. 9946e0c, the reference path was ``_BaseMVML._fit_target``, one target at
a time: that method is timed there),
the trees alternating, ``--repeat`` times (minimum CPU time kept), BLAS on one thread.

Run:  .venv/bin/python benchmarks/bench_reference_path.py [--against main] [--repeat 3]
          [--out docs/results/benchmarks/reference_path.md]
"""

from __future__ import annotations

from _trees import PINNED, compare_main

#: the timed cases, run in a subprocess against one tree (prints a JSON dict name ->
#: [CPU s of the fit, CPU s inside the reference path])
CASES = (
    PINNED
    + r"""
import json, os, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from mvkernels import MVMLClassifier, MVMLClassifierCV, MVMLRegressor, MVMLRegressorCV
inside = [0.0]
try:  # the engine's module (the reference path a function of mvml/_driver.py)
    import mvkernels.mvml._base as base
    name = "reference_paths" if hasattr(base, "reference_paths") else "reference_path"
except ImportError:  # before the engine (9946e0c): a method of the estimators' base
    import mvkernels.mvml._estimators as est
    base, name = est._BaseMVML, "_fit_target"
inner = getattr(base, name)
def timed(*a, **k):
    t = time.process_time()
    try:
        return inner(*a, **k)
    finally:
        inside[0] += time.process_time() - t
setattr(base, name, timed)
X, y = load_digits(return_X_y=True)
tr, _ = train_test_split(np.arange(len(y)), train_size=300, random_state=0, stratify=y)
Xs, yy = [X[tr, :32], X[tr, 32:]], y[tr]
Xc, yc = [V[:150] for V in Xs], yy[:150]
# every estimator at the defaults of 9946e0c where they changed later (no joint view, no
# intercept, one-vs-rest; the preamble's pinned): both trees fit the same problems
MVMLClassifier, MVMLClassifierCV = pinned(MVMLClassifier), pinned(MVMLClassifierCV)
MVMLRegressor, MVMLRegressorCV = pinned(MVMLRegressor), pinned(MVMLRegressorCV)
grid = dict(alphas=[0.1, 1.0, 10.0], etas=[0.1, 1.0], bandwidth_factors=[4.0], cv=3)
grid.update(max_iter=5, random_state=0)
rng = np.random.RandomState(0)
R = [rng.randn(1000, 20), rng.randn(1000, 30)]
Yr = np.column_stack([np.sin(R[0][:, k]) + R[1][:, k] for k in range(4)])
old = dict(alpha=1.0, bandwidth_factor=4.0, random_state=0)
cases = {
    "digits 10 cl., metric='sparse'": lambda: MVMLClassifier(metric="sparse", **old).fit(Xs, yy),
    "digits 10 cl., learn_weights=True": lambda: MVMLClassifier(learn_weights=True, **old).fit(
        Xs, yy
    ),
    "digits 10 cl., learn_weights=True, metric='identity'": lambda: MVMLClassifier(
        learn_weights=True, metric="identity", **old
    ).fit(Xs, yy),
    "digits 10 cl., full, metric='dense'": lambda: MVMLClassifier(n_landmarks=None, **old).fit(
        Xs, yy
    ),
    "digits 10 cl., full, metric='sparse'": lambda: MVMLClassifier(
        n_landmarks=None, metric="sparse", **old
    ).fit(Xs, yy),
    "digits 10 cl., full, metric='cov'": lambda: MVMLClassifier(
        n_landmarks=None, metric="cov", **old
    ).fit(Xs, yy),
    "regression 4 outputs, metric='sparse'": lambda: MVMLRegressor(metric="sparse", **old).fit(
        R, Yr
    ),
    "regression 4 outputs, learn_weights=True": lambda: MVMLRegressor(
        learn_weights=True, **old
    ).fit(R, Yr),
    "CV digits 150 rows, metric='sparse'": lambda: MVMLClassifierCV(metric="sparse", **grid).fit(
        Xc, yc
    ),
    "CV digits 150 rows, learn_weights=True": lambda: MVMLClassifierCV(
        learn_weights=True, **grid
    ).fit(Xc, yc),
    "CV digits 150 rows, full, metric='dense'": lambda: MVMLClassifierCV(
        n_landmarks=None, **grid
    ).fit(Xc, yc),
    "CV digits 150 rows, metric='sparse', max_iter=2": lambda: MVMLClassifierCV(
        metric="sparse", **{**grid, "max_iter": 2}
    ).fit(Xc, yc),
    "CV digits 150 rows, full, learn_weights=True, max_iter=2": lambda: MVMLClassifierCV(
        n_landmarks=None, learn_weights=True, **{**grid, "max_iter": 2}
    ).fit(Xc, yc),
    "CV regression 4 outputs, learn_weights=True": lambda: MVMLRegressorCV(
        learn_weights=True, **grid
    ).fit([V[:300] for V in R], Yr[:300]),
}
if os.environ.get("MVKERNELS_DATA"):
    from mvkernels.datasets import load_uwave
    d = load_uwave()
    Xu, yu = d["Xs_train"], np.asarray(d["y_train"])
    rows = np.concatenate([np.flatnonzero(yu == c)[:15] for c in np.unique(yu)[:8]])
    Xu, yu = [np.asarray(V)[rows] for V in Xu], yu[rows]
    cases["uWave 8 cl., metric='sparse'"] = lambda: MVMLClassifier(
        metric="sparse", **old
    ).fit(Xu, yu)
    cases["uWave 8 cl., full, learn_weights=True"] = lambda: MVMLClassifier(
        n_landmarks=None, learn_weights=True, **old
    ).fit(Xu, yu)
out = {}
for case, fit in cases.items():
    inside[0] = 0.0
    t = time.process_time()
    fit()
    out[case] = [time.process_time() - t, inside[0]]
print(json.dumps(out))
"""
)


def _row(name: str, before: list[float] | None, now: list[float]) -> list[str]:
    """A case's row: CPU seconds before and now, their ratio and the reference path's share
    of the fit now."""
    b, (n, inside) = float("nan") if before is None else before[0], now
    return [f"`{name}`", f"{b:.3f}", f"{n:.3f}", f"{n / b:.2f}", f"{inside / n:.0%}"]


def main() -> None:
    compare_main(
        __doc__,
        script="bench_reference_path.py",
        cases=CASES,
        against="main",
        title="The dense reference path, batched over targets and the regularisation path",
        head=["fit", "before (s)", "now (s)", "now / before", "path share"],
        row=_row,
        cpu=lambda t: t[0],
        note="`path share`: the part of the fit's CPU time spent inside the reference path "
        "(`now`).",
    )


if __name__ == "__main__":
    main()
