"""Where the hinge loss's active-set solves of a CV fit go: counts and CPU by caller.

The hinge g-steps of MVML-SVM are solved exactly by active sets
(``mvkernels.mvml._hinge_active``): a guess of the KKT sets (rows at the bound, free,
inactive) is corrected until every row meets its condition, each correction one Cholesky
solve per problem. This script fits ``MVMLClassifierCV(loss="auto")`` and ``MVMLSVCCV()``
on the "digits, 3 views" set of ``bench_vs_sklearn.py --quick`` (600 training rows) and on
the digits draws of ``bench_small_data.py`` (10 classes, 20 rows a class, 6 draws) and
counts, per caller of the active-set solver:

- problems: the g-steps handed to the solver;
- solves: one free-set solve of one problem (a problem takes one per correction, plus one);
- corrections per settled problem; how many settled with the sets they started from (the
  first solve on the new features was already exact); how many did not settle (their
  caller falls back: from scratch, then liblinear);
- CPU s inside the solver, and its share of the fit.

The callers: the first g-step of a path (``A = I``) grown from scratch, moved from the
next larger ``alpha``'s solutions (rebox) or from the previous CV fold's (reseed); the warm
starts across Algorithm 1's outer iterations, in one batch per iteration
(``HingeLoss.warm_g_steps``) or, where that does not settle, the path's own
(``HingeLoss.svm_g``); and the polish of liblinear's solutions where both fail. Fit times
are CPU seconds (``time.process_time``) with the BLAS and OpenMP pools on one thread; the
counts do not depend on the machine.

Run:  .venv/bin/python benchmarks/bench_hinge_solves.py
Writes docs/results/benchmarks/hinge_solves.md (``--out`` to change).
"""

from __future__ import annotations

import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, add_out, machine, markdown_table, parser, report, write_report
from bench_small_data import _draws_digits, _views  # noqa: E402
from bench_vs_sklearn import load_cases

from mvkernels import MVMLSVCCV, MVMLClassifierCV  # noqa: E402
from mvkernels.mvml import _hinge, _hinge_active  # noqa: E402

OUT = RESULTS / "hinge_solves.md"

FITS = {
    'MVMLClassifierCV(loss="auto")': lambda: MVMLClassifierCV(loss="auto", random_state=0),
    "MVMLSVCCV()": lambda: MVMLSVCCV(random_state=0),
}

#: the solver's callers, innermost first: the first of these names on the call stack of
#: a solve names its caller
CALLERS = {
    "rebox_solutions": "first g-step: from the larger alpha's",
    "reseed_solutions": "first g-step: from the previous fold's",
    "linear_svm_polished": "liblinear's solution polished",
    "warm_g_steps": "warm start, batched",
    "first_g_steps": "first g-step: from scratch",
    "_first_subset_g_steps": "first g-step: from scratch",
    "svm_g": "warm start, own",
}


class Counts:
    """The active-set solver's calls, counted by caller while installed."""

    def __init__(self) -> None:
        self.by: dict[str, Counter] = {}
        self.liblinear = 0
        self._solves = 0

    def caller(self) -> str:
        frame = sys._getframe(2)
        while frame is not None:
            name = CALLERS.get(frame.f_code.co_name)
            if name is not None:
                return name
            frame = frame.f_back
        return "other"

    def install(self) -> list[tuple[Any, str, Any]]:
        """Wrap the solver's entry points; returns what to restore."""
        saved = [
            (_hinge_active, name, getattr(_hinge_active, name))
            for name in ("_settle_active_sets", "_dual_solves", "_primal_solves")
        ] + [(_hinge, "linear_svm", _hinge.linear_svm)]
        settle, dual, primal = (s[2] for s in saved[:3])
        linear_svm = saved[3][2]

        def counted_settle(X, Y, C, at_c, free, *args: Any, **kwargs: Any) -> list:
            start_c, start_f = at_c.copy(), free.copy()
            solves0, t0 = self._solves, time.process_time()
            res = settle(X, Y, C, at_c, free, *args, **kwargs)
            c = self.by.setdefault(self.caller(), Counter())
            c["cpu"] += time.process_time() - t0
            c["solves"] += self._solves - solves0
            c["problems"] += len(res)
            for k, r in enumerate(res):
                if r is None:
                    c["failed"] += 1
                    continue
                c["settled"] += 1
                c["corrections"] += r[2]
                same = np.array_equal(start_c[k], at_c[k]) and np.array_equal(start_f[k], free[k])
                c["unchanged"] += int(r[2] == 0 and same)
            return res

        def counted_dual(gram, YT, CY, at_c, free, live, *args: Any, **kwargs: Any) -> Any:
            self._solves += len(live)
            return dual(gram, YT, CY, at_c, free, live, *args, **kwargs)

        def counted_primal(X, YT, Cs, CY, at_c, free, live, *args: Any, **kwargs: Any) -> Any:
            self._solves += len(live)
            return primal(X, YT, Cs, CY, at_c, free, live, *args, **kwargs)

        def counted_liblinear(*args: Any, **kwargs: Any) -> Any:
            self.liblinear += 1
            return linear_svm(*args, **kwargs)

        _hinge_active._settle_active_sets = counted_settle
        _hinge_active._dual_solves = counted_dual
        _hinge_active._primal_solves = counted_primal
        _hinge.linear_svm = counted_liblinear
        return saved


def data_sets(quick_rows: bool) -> dict[str, list[tuple[list[np.ndarray], np.ndarray]]]:
    """Per set, its training splits as views and labels."""
    [case] = [c for c in load_cases(quick_rows, ("digits",)) if c["name"] == "digits, 3 views"]
    cut = np.cumsum(case["sizes"])[:-1]
    digits = [(np.split(Xtr, cut, axis=1), ytr) for Xtr, ytr, _, _ in case["splits"]]
    small = [(_views(Xtr, w), ytr) for Xtr, ytr, _, _, w in _draws_digits(6, 20, 10)]
    return {
        f"digits, 3 views ({len(digits[0][1])} rows)": digits,
        "digits, 20 rows a class (6 draws)": small,
    }


def run(quick_rows: bool) -> list[list[str]]:
    """The table's rows: per set, fit and caller, the counts."""
    body = []
    for set_name, splits in data_sets(quick_rows).items():
        for fit_name, build in FITS.items():
            counts = Counts()
            saved = counts.install()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.process_time()
                    for Xs, y in splits:
                        build().fit(Xs, y)
                    fit_cpu = time.process_time() - t0
            finally:
                for module, name, value in saved:
                    setattr(module, name, value)
            total = Counter()
            for c in counts.by.values():
                total.update(c)
            rows = sorted(counts.by.items(), key=lambda kv: -kv[1]["solves"])
            for caller, c in [*rows, ("all", total)]:
                settled = max(c["settled"], 1)
                body.append(
                    [
                        set_name,
                        fit_name,
                        caller,
                        str(c["problems"]),
                        str(c["solves"]),
                        f"{c['corrections'] / settled:.1f}",
                        f"{c['unchanged']} ({100 * c['unchanged'] / settled:.0f} %)",
                        str(c["failed"]),
                        f"{c['cpu']:.3f}" + (f" of {fit_cpu:.3f}" if caller == "all" else ""),
                    ]
                )
                print(" | ".join(body[-1]), flush=True)
            body.append([set_name, fit_name, "liblinear runs", str(counts.liblinear)] + [""] * 5)
    return body


def write(body: list[list[str]], conditions: str, out: Path) -> None:
    """Write the Markdown table (and print it)."""
    head = [
        "Data set",
        "Fit",
        "Caller",
        "problems",
        "solves",
        "corrections a problem",
        "sets unchanged",
        "not settled",
        "solver CPU s (of the fit's)",
    ]
    text = report(
        "The hinge loss's active-set solves of a CV fit",
        "Generated by `benchmarks/bench_hinge_solves.py`: per caller of the active-set "
        "solver, the g-step problems handed to it, the free-set solves, the "
        "corrections per settled problem, the problems settled with the sets they "
        "started from, those that did not settle, and the CPU seconds inside the "
        "solver (on the `all` row: of the fit's, every split together); threads "
        f"pinned to 1; {conditions}.",
        markdown_table(head, body),
    )
    print()
    print(text)
    write_report(out, text)


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument(
        "--full", action="store_true", help="digits with all its training rows (not --quick's)"
    )
    add_out(ap, OUT)
    args = ap.parse_args()
    with threadpool_limits(1):
        body = run(not args.full)
        conditions = machine()
    write(body, conditions, args.out)


if __name__ == "__main__":
    main()
