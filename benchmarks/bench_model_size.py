"""What a fitted MVML model weighs: pickled size, part by part.

The issue's case (issue 30): scikit-learn's handwritten digits (1797 rows, 10 classes),
the training part of ``train_test_split(random_state=0)`` (1347 rows), cut into two views
(top and bottom half of the image, 32 pixels each); every estimator with its defaults
(``n_landmarks="auto"``: 300 landmarks per view, ``d = v p = 600``, 900 with the joint
view of the classifiers' default ``joint_view="auto"``), seeded; ``SVC()`` on
the 64 pixels for reference, and one fit on training views with missing rows.

For each model, side by side in one run:

* ``pickled``: ``len(pickle.dumps(model))`` as stored now, and ``load``: the time of
  ``pickle.loads`` (it recomputes the Nystrom normalizers);
* ``plain arrays``: the same model pickled with its arrays stored plainly (no
  :func:`mvkernels._packing.pack`: landmark rows in float64, the joint view's rows not
  by reference, landmark indices in int64, ``dual_coef_``, fixed metrics and completion
  statistics dense);
* ``before``: ``plain arrays`` plus the arrays no longer stored (the normalizers, and
  the completion statistics that the compact outputs replace), i.e. the size a pickle
  had before they were dropped (without the fit-only arrays released since: the hinge
  solver states and the one-vs-one pairs' row lists);
* ``dense metric_``: the same model with plain arrays and the metrics stored as the
  dense ``(T, d, d)`` stack (what a pickle held before the structured metric storage);
* the parts: the Nystrom map as pickled (landmark rows), the normalizers it recomputes on
  load (not stored), the completion of missing views (kept: the compact outputs, or the
  statistics after a fit on incomplete rows; not kept: the ``vp x vp`` statistics), the
  metric storage, the coefficients and ``cv_results_``.

Run:  .venv/bin/python benchmarks/bench_model_size.py [--out docs/results/benchmarks/model_size.md]
"""

from __future__ import annotations

import contextlib
import copy
import pickle
import time

import numpy as np
from _common import RESULTS, add_out, cores, generated_by, markdown_table, parser, write_report
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from mvkernels import MVMLSVC, MVMLSVCCV, MVMLClassifier, MVMLClassifierCV, MVMLRegressor, _packing
from mvkernels.mvml import _base as _mvml_base
from mvkernels.mvml._lowrank import MetricStack
from mvkernels.nystrom import _map
from mvkernels.nystrom._map import _recomputable

MB = 1e6


def _mb(obj: object) -> float:
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)) / MB


@contextlib.contextmanager
def _plain_arrays():
    """Pickles store every array plainly (as before :mod:`mvkernels._packing`)."""
    saved = (_map.stored_landmarks, _map.pack, _mvml_base.pack, _packing.pack)
    _map.stored_landmarks, _map.pack, _mvml_base.pack, _packing.pack = (list, *[_identity] * 3)
    try:
        yield
    finally:
        _map.stored_landmarks, _map.pack, _mvml_base.pack, _packing.pack = saved


def _identity(a):
    return a


def _dense_copy(model):
    """The model with its metrics stored as the dense (T, d, d) stack."""
    est = getattr(model, "best_estimator_", model)
    out = copy.copy(model)
    dense = copy.copy(est)
    st = est._metric_store
    dense._metric_store = MetricStack(st.dim, st.n_problems, dense=st.toarray(), dims=st.dims)
    if est is model:
        return dense
    out.best_estimator_ = dense
    return out


def _parts(inner) -> dict[str, float]:
    """Sizes (MB) of the parts of a fitted MVML model (``inner``: not a CV wrapper)."""
    nys = inner.nystrom_
    normalizers = sum(
        S.nbytes for kern, S in zip(nys.kernels_, nys.normalizers_) if _recomputable(kern)
    )
    completed = getattr(inner, "_completed_outputs", None)
    stats = getattr(nys, "missing_model_", None)
    d = nys.n_views_ * nys.n_landmarks_
    dropped = 0.0 if completed is None and nys.n_views_ > 1 else 8 * (d * d + d)
    return {
        "map": _mb(nys),
        "normalizers": normalizers / MB,
        "kept": (completed.nbytes if completed is not None else 0)
        + (stats.nbytes if stats is not None else 0),
        "dropped": dropped / MB,
        "metric": _mb(inner._metric_store),
        "coef": _mb(inner._coefs),
    }


def _with_missing(Xs: list, seed: int = 0) -> list:
    """One view missing (NaN row) in a third of the rows."""
    rng = np.random.RandomState(seed)
    out = [X.astype(np.float64) for X in Xs]
    for i in range(out[0].shape[0]):
        k = rng.randint(3 * len(out))
        if k < len(out):
            out[k][i] = np.nan
    return out


def main() -> None:
    ap = parser(__doc__)
    add_out(ap, RESULTS / "model_size.md")
    args = ap.parse_args()
    X, y = load_digits(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, random_state=0)
    views = [X[:, :32], X[:, 32:]]
    cases = [
        ("MVMLClassifier()", MVMLClassifier(random_state=0), views, y),
        (
            "MVMLClassifier(joint_view=False) (the former default)",
            MVMLClassifier(joint_view=False, random_state=0),
            views,
            y,
        ),
        (
            'MVMLClassifier(metric="identity")',
            MVMLClassifier(metric="identity", random_state=0),
            views,
            y,
        ),
        ('MVMLClassifier(metric="cov")', MVMLClassifier(metric="cov", random_state=0), views, y),
        ("MVMLRegressor() (digit value as target)", MVMLRegressor(random_state=0), views, y * 1.0),
        ("MVMLClassifierCV()", MVMLClassifierCV(random_state=0), views, y),
        ("MVMLSVC() (one-vs-one, joint view)", MVMLSVC(random_state=0), views, y),
        ("MVMLSVCCV()", MVMLSVCCV(random_state=0), views, y),
        (
            "MVMLSVC(max_iter=3, joint_view=False, multi_class='ovr')",
            MVMLSVC(max_iter=3, joint_view=False, multi_class="ovr", random_state=0),
            views,
            y,
        ),
        (
            "MVMLClassifier(), a third of the rows missing a view",
            MVMLClassifier(random_state=0),
            _with_missing(views),
            y,
        ),
    ]
    t0 = time.perf_counter()
    svc = SVC().fit(X, y)
    svc_row = ("SVC() (64 pixels, for reference)", _mb(svc), time.perf_counter() - t0)
    rows = []
    for name, est, Xs, target in cases:
        t0 = time.perf_counter()
        est.fit(Xs, target)
        fit_s = time.perf_counter() - t0
        inner = getattr(est, "best_estimator_", est)
        blob = pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL)
        t0 = time.perf_counter()
        pickle.loads(blob)
        load_s = time.perf_counter() - t0
        size = len(blob) / MB
        parts = _parts(inner)
        kept = parts["kept"] / MB
        with _plain_arrays():
            plain = _mb(est)
            dense = _mb(_dense_copy(est))
        before = (
            plain + parts["normalizers"] + parts["dropped"] - (kept if parts["dropped"] else 0.0)
        )
        results = _mb(est.cv_results_) if hasattr(est, "cv_results_") else 0.0
        rows.append(
            (
                name,
                inner.solver_,
                inner._coefs.shape[0],
                inner._coefs.shape[1],
                size,
                plain,
                before,
                dense,
                parts["map"],
                parts["normalizers"],
                kept,
                parts["dropped"],
                parts["metric"],
                parts["coef"],
                results,
                fit_s,
                load_s,
            )
        )
        print(f"{name}: {size:.3f} MB (before: {before:.2f} MB), load {load_s:.3f} s", flush=True)
    head = [
        "model",
        "solver_",
        "T",
        "d",
        "pickled (MB)",
        "plain arrays (MB)",
        "before (MB)",
        "with dense metric_ (MB)",
        "Nystrom map (MB)",
        "normalizers, recomputed on load (MB)",
        "completion kept (MB)",
        "completion statistics not kept (MB)",
        "metric (MB)",
        "coef (MB)",
        "cv_results_ (MB)",
        "fit (s)",
        "load (s)",
    ]
    # each column's format (the first four as they are)
    formats = ["", "", "", "", ".3f", ".2f", ".2f", ".2f", ".3f", ".2f", ".3f", ".2f", ".3f"]
    formats += [".3f", ".2f", ".2f", ".3f"]
    body = [[format(v, f) for v, f in zip(r, formats, strict=True)] for r in rows]
    lines = [
        "# Model size",
        "",
        generated_by("python benchmarks/bench_model_size.py") + f" ({cores()} cores).",
        "",
        "Data: the training part of digits (`train_test_split(random_state=0)`: 1347 rows, "
        "10 classes), two views of 32 pixels (top / bottom half); defaults "
        "(`n_landmarks='auto'`: 300 landmarks per view, d = 600; 900 with the joint view that "
        "the classifiers append by default; the CV estimators' selected model). T: problems "
        "(classes or one-vs-one pairs; 1 for the regressor). `pickled`: "
        "`len(pickle.dumps(model))`; `plain arrays`: the same with every array stored "
        "plainly (landmark rows in float64 and the joint view's rows repeated, `dual_coef_`, "
        "fixed metrics and completion statistics dense), where the pickle stores them "
        "exactly in fewer bytes (digits' pixels are integers 0-16: exact in float16; the "
        "joint view's rows are the views' rows side by side; most multipliers are zero; a "
        "fixed metric and a covariance are symmetric); "
        "`before`: that plus the arrays no longer stored (the normalizers `S_l`, recomputed "
        "on load, and the `vp x vp` completion statistics that a fit on complete views "
        "replaces by the compact outputs of rows with missing views); `with dense metric_`: "
        "the model storing its T metrics as dense d x d matrices. `load`: `pickle.loads`, "
        "which recomputes the normalizers (one `p x p` eigendecomposition per view).",
        "",
        f"Reference: {svc_row[0]}: {svc_row[1]:.2f} MB pickled (fit {svc_row[2]:.2f} s).",
        "",
        markdown_table(head, body, aligned=False),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    write_report(args.out, text)


if __name__ == "__main__":
    main()
