"""``mvkernels demo``: where multi-view learning pays, on data scikit-learn ships.

Two cases, both built from scikit-learn's handwritten digits (1797 images of 8 x 8
pixels, 10 classes), so the demo runs on a fresh machine without any download; a
stratified half of the images is used for training, the other half for testing.

``clean``
    :func:`mvkernels.datasets.load_digits_views`: top half, bottom half, row/column
    profiles -- three informative views of similar quality.
``unequal``
    :func:`corrupted_digits_views`: the same three views, the bottom half buried in
    Gaussian pixel noise, plus a pure-noise view and a *shuffled* view (the bottom half
    of another, random image: a sensor whose rows are misaligned with the labels).
    Two good views, one degraded, two useless.

Each case compares, with fit times:

* ``sklearn.svm.SVC()`` on the concatenated views (early fusion as a scikit-learn user
  would do it), the tuned SVC (:func:`tuned_svc`: ``C`` x ``gamma`` around
  ``gamma="scale"``, 5-fold), :class:`mvkernels.baselines.EarlyFusionClassifier`, and
  ``SVC()`` on the single view that 3-fold cross-validation on the training half prefers;
* ``MVMLClassifier()`` with its defaults (per-view Gaussian kernels, ``A~ = I`` start,
  dense learned metric, ``n_landmarks="auto"``, the joint view: all views together, for
  cross-view interactions; only the landmark seed is set), and with ``joint_view=False``
  (the papers' additive model);
* ``MVMLClassifierCV(random_state=random_state)`` (built-in model selection; ``--quick``: a
  smaller grid and 3 folds);
* hand-set MVML: ``alpha=1e-2, eta=1e-2, n_landmarks=0.1, max_iter=5``, additive
  (``joint_view=False``: one metric block and one weight per view, drawn below), with the
  view weights fixed (``w = 1/v``) and learned (``learn_weights=True``, eq. 17).

Every MVML model scores one Gaussian kernel per view, so a noisy view cannot swamp the
distances of the good ones as it does in a kernel on the concatenation; the learned
metric ``A~`` then leans on the informative views. What the model learned is shown by the
metric: ``metric_blocks.png`` (block norms of the learned part of ``A~`` as a v x v map
with view names) and, in the table, each view's share of the CV model's learned metric.
``view_weights.png`` (learned view weights, eq. 17) is drawn only when the learned weights
actually moved away from the uniform ``1/v``: otherwise it would show nothing learned.

Writes ``results.md`` / ``results.csv`` (the table) and the two figures into the output
folder, nothing elsewhere. Well under a minute of CPU time (``--quick``: about half).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_val_score,
    train_test_split,
)
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from .baselines import EarlyFusionClassifier
from .datasets import load_digits_views
from .mvml import MVMLClassifier, MVMLClassifierCV, group_norms

__all__ = [
    "aligned_markdown_table",
    "tuned_svc",
    "tuned_kernel_ridge",
    "CLEAN_VIEW_NAMES",
    "UNEQUAL_VIEW_NAMES",
    "corrupted_digits_views",
    "learned_block_norms",
    "run_demo",
]

CLEAN_VIEW_NAMES = ["top half", "bottom half", "profiles"]
UNEQUAL_VIEW_NAMES = [
    "top half",
    "bottom half + noise",
    "profiles",
    "pure noise",
    "shuffled bottom half",
]

#: corruption of the ``unequal`` case (:func:`corrupted_digits_views`)
NOISE_STD = 0.5
NOISE_DIM = 64
#: hand-set MVML settings shown beside the defaults and the CV estimator
HAND_SET: dict[str, Any] = {"alpha": 1e-2, "eta": 1e-2, "n_landmarks": 0.1, "max_iter": 5}
#: ``--quick`` grid of the CV estimator (the full demo uses its default grid, 5 folds)
QUICK_CV: dict[str, Any] = {
    "alphas": [1e-3, 1e-2, 1e-1],
    "etas": [1e-2, 1.0],
    "bandwidth_factors": [1.0, 2.0],
    "cv": 3,
}

Row = dict[str, Any]


def _log(msg: str) -> None:
    print(msg, flush=True)


def corrupted_digits_views(
    noise: float = NOISE_STD, noise_dim: int = NOISE_DIM, random_state: Any = 0
) -> tuple[list[np.ndarray], np.ndarray]:
    """Digits as five views of unequal quality (the demo's ``unequal`` case).

    Built from :func:`mvkernels.datasets.load_digits_views` (pixel values in [0, 1]):

    0. top half (32 pixels), unchanged;
    1. bottom half plus Gaussian noise of standard deviation ``noise`` per pixel;
    2. row and column profiles (16 values), unchanged;
    3. pure noise: ``noise_dim`` uniform [0, 1) values, independent of the image;
    4. the bottom half of a randomly permuted image (right content, wrong rows).

    Parameters
    ----------
    noise : float, default=0.5
        Standard deviation of the noise added to view 1.
    noise_dim : int, default=64
        Columns of the pure-noise view.
    random_state : int, RandomState or None, default=0
        Seed of the noise and of the permutation.

    Returns
    -------
    Xs : list of 5 ndarrays, each (1797, d_l)
    y : ndarray (1797,), labels 0..9
    """
    rng = check_random_state(random_state)
    (top, bottom, profiles), y = load_digits_views(return_X_y=True)
    n = len(y)
    noisy = bottom + noise * rng.standard_normal(bottom.shape)
    pure = rng.random_sample((n, noise_dim))
    shuffled = bottom[rng.permutation(n)]
    return [top, noisy, profiles, pure, shuffled], y


def _timed_fit(est: Any, X: np.ndarray, y: np.ndarray) -> tuple[Any, tuple[float, float]]:
    """The fitted estimator and (wall-clock, process CPU) seconds of ``fit``."""
    t, c = time.perf_counter(), time.process_time()
    est.fit(X, y)
    return est, (time.perf_counter() - t, time.process_time() - c)


def _run_case(
    case: str, Xs: list[np.ndarray], y: np.ndarray, names: list[str], quick: bool, random_state: int
) -> tuple[list[Row], dict[str, Any]]:
    """Fit every method on one case; returns the table rows and the fitted MVML models."""
    idx_tr, idx_te = train_test_split(
        np.arange(len(y)), train_size=0.5, stratify=y, random_state=random_state
    )
    Xtr = np.hstack([X[idx_tr] for X in Xs])
    Xte = np.hstack([X[idx_te] for X in Xs])
    ytr, yte = y[idx_tr], y[idx_te]
    sizes = [X.shape[1] for X in Xs]
    _log(
        f"[demo] case '{case}': {len(Xs)} views ({', '.join(names)}), "
        f"{len(ytr)} train / {len(yte)} test, {len(np.unique(y))} classes"
    )
    rows: list[Row] = []

    def add(
        method: str, est: Any, secs: tuple[float, float], X_test: np.ndarray, note: str = ""
    ) -> None:
        acc = float(est.score(X_test, yte))
        rows.append(
            {
                "case": case,
                "method": method,
                "test_accuracy": acc,
                "fit_seconds": secs[0],
                "cpu_seconds": secs[1],
                "note": note,
            }
        )

    est, secs = _timed_fit(SVC(), Xtr, ytr)
    add("SVC() on the concatenated views", est, secs, Xte)
    est, secs = _timed_fit(tuned_svc(Xtr), Xtr, ytr)
    add(
        "tuned SVC on the concatenated views",
        est,
        secs,
        Xte,
        note="best " + ", ".join(f"{k}={v:.3g}" for k, v in est.best_params_.items()),
    )
    est, secs = _timed_fit(EarlyFusionClassifier(), Xtr, ytr)
    add("EarlyFusionClassifier() (mvkernels.baselines)", est, secs, Xte)

    # best single view, chosen on the training half only
    t, c = time.perf_counter(), time.process_time()
    cv3 = StratifiedKFold(3, shuffle=True, random_state=random_state)
    cv_scores = [cross_val_score(SVC(), X[idx_tr], ytr, cv=cv3).mean() for X in Xs]
    best = int(np.argmax(cv_scores))
    est = SVC().fit(Xs[best][idx_tr], ytr)
    add(
        "SVC() on the best single view (3-fold CV)",
        est,
        (time.perf_counter() - t, time.process_time() - c),
        Xs[best][idx_te],
        note=f"view: {names[best]}",
    )

    fitted: dict[str, Any] = {}
    est, secs = _timed_fit(MVMLClassifier(views=sizes, random_state=random_state), Xtr, ytr)
    add(
        "MVMLClassifier() (defaults)", est, secs, Xte, note=f"{est.n_landmarks_} landmarks per view"
    )
    fitted["default"] = est
    est, secs = _timed_fit(
        MVMLClassifier(views=sizes, random_state=random_state, joint_view=False), Xtr, ytr
    )
    add("MVMLClassifier(joint_view=False)", est, secs, Xte, note="additive over the views")

    cv_kw = dict(QUICK_CV) if quick else {}
    est, secs = _timed_fit(
        MVMLClassifierCV(views=sizes, random_state=random_state, **cv_kw), Xtr, ytr
    )
    bp = est.best_params_
    add(
        f"MVMLClassifierCV(random_state={random_state})" + (" (quick grid)" if quick else ""),
        est,
        secs,
        Xte,
        note="best "
        + ", ".join(f"{k}={v}" if isinstance(v, bool) else f"{k}={v:g}" for k, v in bp.items())
        + _view_quality(est),
    )
    fitted["cv"] = est.best_estimator_

    hand = ", ".join(f"{k}={v:g}" for k, v in HAND_SET.items())
    est, secs = _timed_fit(
        MVMLClassifier(views=sizes, random_state=random_state, joint_view=False, **HAND_SET),
        Xtr,
        ytr,
    )
    add(f"MVMLClassifier({hand})", est, secs, Xte)
    fitted["hand"] = est
    est, secs = _timed_fit(
        MVMLClassifier(
            views=sizes, random_state=random_state, learn_weights=True, joint_view=False, **HAND_SET
        ),
        Xtr,
        ytr,
    )
    add(f"MVMLClassifier({hand}, learn_weights=True)", est, secs, Xte)
    fitted["hand_weights"] = est
    fitted["split_sizes"] = (len(ytr), len(yte))
    return rows, fitted


def tuned_svc(X: np.ndarray) -> GridSearchCV:
    """``GridSearchCV(SVC(), {"C": [0.1, 1, 10, 100], "gamma": [s / 4, s, 4 s]}, cv=5)``
    with ``s = 1 / (d var(X))``, scikit-learn's ``gamma="scale"`` value."""
    s = 1.0 / (X.shape[1] * X.var())
    return GridSearchCV(SVC(), {"C": [0.1, 1, 10, 100], "gamma": [s / 4, s, 4 * s]}, cv=5)


def tuned_kernel_ridge(X: np.ndarray) -> GridSearchCV:
    """``GridSearchCV(KernelRidge(kernel="rbf"), {"alpha": [1e-4, 1e-3, 1e-2, 0.1, 1],
    "gamma": [s / 4, s, 4 s]}, cv=5)`` with ``s = 1 / (d var(X))``, as :func:`tuned_svc`.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels.demo import tuned_kernel_ridge
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> sorted(tuned_kernel_ridge(X).fit(X, X[:, 0]).best_params_)
    ['alpha', 'gamma']
    """
    s = 1.0 / (X.shape[1] * X.var())
    grid = {"alpha": [1e-4, 1e-3, 1e-2, 0.1, 1.0], "gamma": [s / 4, s, 4 * s]}
    return GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=5)


def estimator_from_spec(spec: str, **defaults: Any) -> Any:
    """An MVML estimator from a call written as text, for benchmarks' extra configurations.

    ``spec`` is ``"Name(key=literal, ...)"`` with ``Name`` a public estimator of
    :mod:`mvkernels` and literal keyword values (:func:`ast.literal_eval`); ``defaults``
    (e.g. ``views``, ``random_state``) are added where ``spec`` does not set them.

    Examples
    --------
    >>> estimator_from_spec("MVMLClassifier(multi_class='ovo')", random_state=0)
    MVMLClassifier(multi_class='ovo', random_state=0)
    """
    import ast

    import mvkernels

    call = ast.parse(spec.strip(), mode="eval").body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.args):
        raise ValueError(f"expected 'Name(key=value, ...)', got {spec!r}")
    name = call.func.id
    if name not in mvkernels.__all__:
        raise ValueError(f"{name!r} is not a public estimator of mvkernels")
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    return getattr(mvkernels, name)(**{**defaults, **kwargs})


def _view_quality(cv: MVMLClassifierCV) -> str:
    """What the selected model leans on: each view's share of the learned metric
    (diagonal block norms of :func:`learned_block_norms`), when the metric is learned."""
    est = cv.best_estimator_
    if est.metric not in ("dense", "sparse"):
        return ""
    d = np.diag(learned_block_norms(est))
    if not d.sum() > 0:
        return ""
    return "; metric share per view " + "/".join(f"{x:.2f}" for x in d / d.sum())


def run_demo(
    output: str | Path = "results/demo", quick: bool = False, random_state: int = 0
) -> list[Row]:
    """Run the demo, print the table, write ``results.md``, ``results.csv`` and figures.

    Parameters
    ----------
    output : str or Path, default="results/demo"
        Folder for the table and figures (created; nothing is written elsewhere).
    quick : bool, default=False
        Smaller grid and 3 folds for :class:`MVMLClassifierCV` (a smoke test).
    random_state : int, default=0
        Seed of the train/test split and of the landmarks.

    Returns
    -------
    rows : list of dict
        One per (case, method): ``case``, ``method``, ``test_accuracy``,
        ``fit_seconds`` (wall clock), ``cpu_seconds`` (process CPU time), ``note``.
    """
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cases = [
        ("clean", *load_digits_views(return_X_y=True), CLEAN_VIEW_NAMES),
        ("unequal", *corrupted_digits_views(random_state=random_state), UNEQUAL_VIEW_NAMES),
    ]
    rows: list[Row] = []
    models: dict[str, tuple[dict[str, Any], list[str]]] = {}
    for case, Xs, y, names in cases:
        case_rows, fitted = _run_case(case, Xs, y, names, quick, random_state)
        split_sizes = fitted.pop("split_sizes")
        rows.extend(case_rows)
        models[case] = (fitted, names)

    table = _format_table(rows)
    print()
    print(table, flush=True)  # the one printed table (no per-row progress lines)
    (out / "results.md").write_text(_results_md(table, quick, *split_sizes))
    with open(out / "results.csv", "w") as fh:
        fh.write("case,method,test_accuracy,fit_seconds,cpu_seconds,note\n")
        for r in rows:
            note = r["note"].replace('"', "'")
            fh.write(
                f'{r["case"]},"{r["method"]}",{r["test_accuracy"]:.4f},'
                f'{r["fit_seconds"]:.3f},{r["cpu_seconds"]:.3f},"{note}"\n'
            )
    figs = _plot(models, out)
    _log(
        f"[demo] wrote {out / 'results.md'}, {out / 'results.csv'}"
        + (", " + ", ".join(str(f) for f in figs) if figs else " (matplotlib missing: no figures)")
        + f" in {time.perf_counter() - t0:.0f} s"
    )
    return rows


def _results_md(table: str, quick: bool, n_train: int, n_test: int) -> str:
    hand = ", ".join(f"{k}={v:g}" for k, v in HAND_SET.items())
    cv = (
        "a reduced grid (" + ", ".join(f"{k}={v}" for k, v in QUICK_CV.items()) + ")"
        if quick
        else "its default grid and 5 folds"
    )
    return (
        "# mvkernels demo: digits as multiple views\n\n"
        f"scikit-learn's handwritten digits, a stratified half for training ({n_train} "
        f"images) and the other half for testing ({n_test}).\n\n"
        "- **clean**: top half, bottom half, row/column profiles.\n"
        "- **unequal**: the same views with the bottom half buried in Gaussian pixel noise "
        f"(standard deviation {NOISE_STD:g} on [0, 1] pixels), plus a pure-noise view "
        f"({NOISE_DIM} uniform values) "
        "and a shuffled view (the bottom half of a random other image).\n\n"
        f"`MVMLClassifierCV` searched {cv}; its time includes the refit. Hand-set MVML: "
        f"{hand}. Times: wall-clock and process CPU seconds of `fit` on this machine (on a "
        "shared machine the CPU time is the steadier of the two).\n\n" + table + "\n\n"
        "Figures: `metric_blocks.png` (block norms of the learned part of the metric, "
        "`A~ - lambda_min(A~) I`, mean over the ten one-vs-all problems) and, only when "
        "the learned view weights left the uniform 1/v, `view_weights.png` (eq. 17, mean "
        "and per class). The CV row's note gives each view's share of the learned metric "
        "(diagonal block norms, normalised; a joint view comes last).\n"
    )


def aligned_markdown_table(head: list[str], body: list[list[str]]) -> str:
    """A Markdown table whose columns are padded to a common width (readable as text).

    Examples
    --------
    >>> print(aligned_markdown_table(["a", "bb"], [["1", "2"]]))
    | a | bb |
    |---|----|
    | 1 | 2  |
    """
    widths = [max(len(c) for c in col) for col in zip(head, *body)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), rule, *[line(b) for b in body]])


def _format_table(rows: list[Row]) -> str:
    """The results as a Markdown table with padded (aligned) columns."""
    head = ["case", "method", "test accuracy", "fit time (s)", "fit CPU time (s)", "note"]
    body = [
        [
            r["case"],
            r["method"],
            f"{r['test_accuracy']:.4f}",
            f"{r['fit_seconds']:.2f}",
            f"{r['cpu_seconds']:.2f}",
            r["note"],
        ]
        for r in rows
    ]
    return aligned_markdown_table(head, body)


def weights_were_learned(est: MVMLClassifier, tol: float = 0.02) -> bool:
    """Whether the view weights moved away from the uniform ``1/v`` (by more than ``tol``)."""
    W = np.atleast_2d(est.weights_)
    return bool(est.learn_weights and np.max(np.abs(W - 1.0 / W.shape[1])) > tol)


def learned_block_norms(est: MVMLClassifier) -> np.ndarray:
    """View-pair block norms of the learned part of ``A~``, mean over one-vs-all problems.

    From ``A~_0 = I`` the metric keeps an isotropic part that shrinks during learning
    (eq. 16); ``A~ - lambda_min(A~) I`` removes it and leaves what the data taught.
    Entry ``(l, m)``: :func:`mvkernels.mvml.group_norms` (Frobenius norm of the
    ``(l, m)`` and ``(m, l)`` blocks together).
    """
    mets = est.metric_ if est.metric_.ndim == 3 else est.metric_[None]
    lmin = np.atleast_1d(est.metric_min_eigenvalue_)
    v = est.n_views_
    return np.mean([group_norms(M - e * np.eye(M.shape[0]), v) for M, e in zip(mets, lmin)], axis=0)


def _plot(models: dict[str, tuple[dict[str, Any], list[str]]], out: Path) -> list[Path]:
    """``metric_blocks.png`` and ``view_weights.png`` from the learned-weights models."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    cases = list(models)
    paths = []

    fig, axes = plt.subplots(1, len(cases), figsize=(5.6 * len(cases), 5.0), squeeze=False)
    for ax, case in zip(axes[0], cases):
        fitted, names = models[case]
        N = learned_block_norms(fitted["hand_weights"])
        im = ax.imshow(N, cmap="viridis")
        v = len(names)
        ax.set_xticks(range(v), names, rotation=30, ha="right")
        ax.set_yticks(range(v), names)
        for a in range(v):
            for b in range(v):
                ax.text(
                    b,
                    a,
                    f"{N[a, b]:.2f}",
                    ha="center",
                    va="center",
                    color="w" if N[a, b] < 0.6 * N.max() else "k",
                    fontsize=9,
                )
        ax.set_title(
            f"case '{case}': block norms of A~ - min eig I\n"
            "(learned part, mean over one-vs-all problems)",
            fontsize=10,
        )
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    paths.append(out / "metric_blocks.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    learned = {
        c: np.atleast_2d(models[c][0]["hand_weights"].weights_)
        for c in cases
        if weights_were_learned(models[c][0]["hand_weights"])
    }
    if not learned:  # the weights stayed at 1/v: a figure would show nothing learned
        _log("[demo] view weights stayed uniform (1/v): no view_weights.png")
        return paths
    cases = list(learned)
    fig, axes = plt.subplots(1, len(cases), figsize=(5.6 * len(cases), 4.2), squeeze=False)
    for ax, case in zip(axes[0], cases):
        names = models[case][1]
        W = learned[case]  # (classes, v)
        v = len(names)
        x = np.arange(v)
        ax.bar(x, W.mean(axis=0), color="tab:blue", alpha=0.7, label="mean over classes")
        jitter = np.linspace(-0.25, 0.25, W.shape[0])
        for k in range(W.shape[0]):
            ax.plot(x + jitter[k], W[k], "k.", ms=3, label="one class vs rest" if k == 0 else None)
        ax.axhline(1.0 / v, color="tab:red", ls="--", lw=1, label="uniform 1/v")
        ax.set_xticks(x, names, rotation=30, ha="right")
        ax.set_ylabel("view weight (sum = 1)")
        ax.set_ylim(0.0, 1.3 * float(W.max()))
        ax.set_title(f"case '{case}': learned view weights (eq. 17)", fontsize=10)
        ax.legend(fontsize=8, loc="upper center", ncol=3)
    fig.tight_layout()
    paths.append(out / "view_weights.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths
