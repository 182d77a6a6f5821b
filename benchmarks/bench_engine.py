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

import argparse
import datetime
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: ``main`` before the engine refactoring (issue 33)
BASE_COMMIT = "9946e0c"

#: the timed cases, run in a subprocess against one tree (prints a JSON dict name -> CPU s)
CASES = r"""
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
# MVMLClassifier at the defaults of 9946e0c (alpha 1, bandwidth factor 4, no joint view;
# they changed later) and MVMLSVC without the joint view, one-vs-rest (9946e0c has no
# multi_class; the defaults are "auto" since): both trees fit the same problems
old = dict(alpha=1.0, bandwidth_factor=4.0, joint_view=False, random_state=0)
svc = dict(joint_view=False, random_state=0)
if "multi_class" in MVMLSVC().get_params():
    svc["multi_class"] = "ovr"
# MVMLRegressor at the defaults of 9946e0c (they changed later: alpha 0.1, bandwidth
# factor 1.5, the joint view and the intercept)
reg = dict(alpha=1.0, bandwidth_factor=4.0, joint_view=False, random_state=0)
if "fit_intercept" in MVMLRegressor().get_params():
    reg["fit_intercept"] = False
cases = {
    "MVMLClassifier()": lambda: MVMLClassifier(**old).fit(Xs, yy),
    "MVMLSVC()": lambda: MVMLSVC(**svc).fit(Xs, yy),
    "MVMLClassifier(metric='sparse')": lambda: MVMLClassifier(metric="sparse", **old).fit(Xs, yy),
    "MVMLClassifier(solver='dense', n_landmarks=0.2)": lambda: MVMLClassifier(
        solver="dense", n_landmarks=0.2, **old
    ).fit(Xs, yy),
    "MVMLRegressor(), 3000 rows": lambda: MVMLRegressor(**reg).fit(R, yr),
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


def export(rev: str, into: Path) -> Path:
    """``src/mvkernels`` of ``rev`` (git archive) extracted under ``into``; returns the
    folder to put on ``PYTHONPATH``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "src/mvkernels"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # pragma: no cover - Python < 3.12
            tar.extractall(into)
    return into / "src"


def run(src: Path, cases: str = CASES) -> Any:
    """Run the script ``cases`` on the package tree ``src`` (one BLAS thread, a subprocess)
    and return the JSON its last line prints."""
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", cases], env=env, capture_output=True, text=True)
    if done.returncode:  # the case's own traceback, not only the exit status
        sys.exit(f"the timed cases failed on {src} (exit {done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default=BASE_COMMIT, help="commit to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tree (minimum kept)")
    parser.add_argument("--out", type=Path, help="also write the table (Markdown) here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            old_src = export(args.against, Path(tmp))
        except (subprocess.CalledProcessError, FileNotFoundError) as exc:
            sys.exit(f"cannot export {args.against} from this repository's history: {exc}")
        trees = {"before": old_src, "now": ROOT / "src"}
        best: dict[str, dict[str, float]] = {k: {} for k in trees}
        for _ in range(args.repeat):
            for key, src in trees.items():
                for name, t in run(src).items():
                    best[key][name] = min(t, best[key].get(name, float("inf")))
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# The MVML engine before and after",
        "",
        f"Generated by `python benchmarks/bench_engine.py --against {args.against}` on "
        f"{datetime.date.today()} ({os.cpu_count()} cores, load {load:.1f}; one BLAS "
        f"thread; minimum CPU seconds of {args.repeat} runs per tree, trees alternating). "
        f"`before`: {args.against}; `now`: {head}.",
        "",
        "| fit | before (s) | now (s) | now / before |",
        "|---|---|---|---|",
    ]
    for name in best["now"]:
        b, n = best["before"].get(name, float("nan")), best["now"][name]
        lines.append(f"| `{name}` | {b:.3f} | {n:.3f} | {n / b:.2f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
