"""Command line: ``mvkernels demo`` and ``mvkernels reproduce <name>``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from .reproduce import EXPERIMENTS

    parser = argparse.ArgumentParser(prog="mvkernels", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="MVML against baselines on embedded data")
    demo.add_argument("--output", default="results/demo", help="folder for the table and figure")
    demo.add_argument("--quick", action="store_true", help="smaller grid, for a smoke test")
    demo.add_argument("--random-state", type=int, default=0)

    rep = sub.add_parser("reproduce", help="reproduce a paper's table or figure")
    rep.add_argument("name", choices=sorted(EXPERIMENTS) + ["all"],
                     help="which experiment ('all': every one, plus an index page)")
    rep.add_argument("--quick", action="store_true", help="a reduced run of a few minutes")
    rep.add_argument("--output", default=None,
                     help="results folder (default results/<name>; for 'all': the root, default results)")
    rep.add_argument("--data", default=None, help="data folder (default $MVKERNELS_DATA or ../shared/data)")
    rep.add_argument("--random-state", type=int, default=0)
    rep.add_argument("--index", default=None, metavar="ROOT",
                     help="also rewrite the results index ROOT/README.md (single experiment only; "
                          "'all' writes it inside --output); by default nothing is written "
                          "outside --output")

    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        run_demo(output=args.output, quick=args.quick, random_state=args.random_state)
        return 0
    from .reproduce import run_all, run_experiment

    if args.name == "all":
        if args.index is not None:
            parser.error("--index applies to a single experiment; 'all' writes the index "
                         "inside --output")
        results = run_all(quick=args.quick, output=args.output or "results", data_dir=args.data,
                          random_state=args.random_state)
        failed = [n for n, r in results.items() if isinstance(r, Exception)]
        if failed:
            print(f"[reproduce all] failed: {', '.join(failed)}", file=sys.stderr)
            return 1
        return 0
    run_experiment(
        args.name, quick=args.quick, output=args.output, data_dir=args.data,
        random_state=args.random_state, index=args.index,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
