"""The MVML engine before and after a change: the same fits on this tree and on an earlier
commit's package, side by side in one run.

The engine refactoring (losses, metrics, the Algorithm-1 driver and the CV grid as parts)
must not make a fit slower. This benchmark exports ``src/mvkernels`` at a commit
(``--against``, default 9946e0c, ``main`` before the refactoring) with ``git archive``,
then times every case below in a subprocess per tree, the trees alternating, each case
``--repeat`` times (the minimum CPU time is kept: the least disturbed run on a shared
machine). BLAS runs on one thread in both, so the times compare the code, not the
scheduling. ``MVMLClassifier`` runs at the defaults of 9946e0c in both trees (``alpha=1``,
``bandwidth_factor=4``, ``joint_view=False``) and ``MVMLSVC`` at those of 9946e0c
(``joint_view=False``, one-vs-rest), so that both fit the same problems. The cases: scikit-learn's
digits (1,347 training rows, two 32-column views, 10 classes) for the default classifiers,
the learned block-sparse metric and the dense metric on the dense reference path
(``solver="dense"``), and the CV estimators; 3,000 rows of two Gaussian views for the
default regressor.

Run:  .venv/bin/python benchmarks/bench_engine.py [--against REV] [--repeat 3]
          [--out docs/results/benchmarks/engine.md]
"""

from __future__ import annotations

from _trees import PINNED, compare_main

#: ``main`` before the engine refactoring (issue 33)
BASE_COMMIT = "9946e0c"

#: the timed cases, run in a subprocess against one tree (prints a JSON dict name -> CPU s)
CASES = (
    PINNED
    + r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from mvkernels import MVMLSVC, MVMLSVCCV, MVMLClassifier, MVMLClassifierCV, MVMLRegressor
X, y = load_digits(return_X_y=True)
tr, _ = train_test_split(np.arange(len(y)), train_size=1347, random_state=0, stratify=y)
Xs, yy = [X[tr, :32], X[tr, 32:]], y[tr]
rng = np.random.RandomState(0)
R = [rng.randn(3000, 20), rng.randn(3000, 30)]
yr = np.sin(R[0][:, 0]) + R[1][:, 1]
# the single fits at the defaults of 9946e0c (no joint view, no intercept, one-vs-rest;
# they changed later), MVMLClassifier and MVMLRegressor also at its alpha 1 and bandwidth
# factor 4: both trees fit the same problems; the CV estimators at each tree's defaults
Classifier, SVC, Regressor = pinned(MVMLClassifier), pinned(MVMLSVC), pinned(MVMLRegressor)
old = dict(alpha=1.0, bandwidth_factor=4.0, random_state=0)
cases = {
    "MVMLClassifier()": lambda: Classifier(**old).fit(Xs, yy),
    "MVMLSVC()": lambda: SVC(random_state=0).fit(Xs, yy),
    "MVMLClassifier(metric='sparse')": lambda: Classifier(metric="sparse", **old).fit(Xs, yy),
    "MVMLClassifier(solver='dense', n_landmarks=0.2)": lambda: Classifier(
        solver="dense", n_landmarks=0.2, **old
    ).fit(Xs, yy),
    "MVMLRegressor(), 3000 rows": lambda: Regressor(**old).fit(R, yr),
    "MVMLClassifierCV()": lambda: MVMLClassifierCV(random_state=0).fit(Xs, yy),
    "MVMLSVCCV()": lambda: MVMLSVCCV(random_state=0).fit(Xs, yy),
}
out = {}
for name, fit in cases.items():
    t = time.process_time()
    fit()
    out[name] = time.process_time() - t
print(json.dumps(out))
"""
)


def _row(name: str, before: float | None, now: float) -> list[str]:
    """A case's row: CPU seconds before and now, and their ratio."""
    b = float("nan") if before is None else before
    return [f"`{name}`", f"{b:.3f}", f"{now:.3f}", f"{now / b:.2f}"]


def main() -> None:
    compare_main(
        __doc__,
        script="bench_engine.py",
        cases=CASES,
        against=BASE_COMMIT,
        title="The MVML engine before and after",
        head=["fit", "before (s)", "now (s)", "now / before"],
        row=_row,
    )


if __name__ == "__main__":
    main()
