"""Command line: ``mvkernels demo`` and ``mvkernels reproduce NAME``.

The help texts are plain text (``mvkernels --help``, ``mvkernels reproduce --help``); every
option states its default. An error ends the command with one line on stderr,
``mvkernels: error: TYPE: MESSAGE``, and exit status 1 (2 for a usage error, 130 for
Ctrl-C); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

DESCRIPTION = """\
Multi-view and operator-valued kernel learning: run the demo or reproduce the papers.
Run 'mvkernels COMMAND --help' for the options of a command."""

EPILOG = """\
The real data folder is the --data option, else the MVKERNELS_DATA environment variable,
else ~/mvkernels_data; missing files are downloaded there (mvkernels.datasets.fetch_*).
An error is reported in one line on stderr (exit status 1); --debug shows its traceback."""

DEBUG_HELP = "show the full traceback of an error (default: off, one line on stderr)"


def _add_debug(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument("--debug", action="store_true", default=default, help=DEBUG_HELP)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mvkernels`` command."""
    from . import __version__
    from .reproduce import EXPERIMENTS, TITLES

    parser = argparse.ArgumentParser(
        prog="mvkernels",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mvkernels {__version__}")
    _add_debug(parser, False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="MVML against the baselines on embedded data",
        description="Fit MVML and the baselines on scikit-learn's digits cut into three "
        "views; print a results table as it goes and write it, with a figure of "
        "the learned metric, into the output folder.",
    )
    _add_debug(demo, argparse.SUPPRESS)  # before or after the command: either sets it
    demo.add_argument(
        "--output",
        default="results/demo",
        metavar="DIR",
        help="folder for the table and the figure (default: %(default)s)",
    )
    demo.add_argument(
        "--quick", action="store_true", help="smaller grid, for a smoke test (default: off)"
    )
    demo.add_argument(
        "--random-state",
        type=int,
        default=0,
        metavar="N",
        help="seed of every random choice (default: %(default)s)",
    )

    names = sorted(EXPERIMENTS)
    experiments = "\n".join(f"  {n:<16}{TITLES.get(n, '')}" for n in names)
    rep = sub.add_parser(
        "reproduce",
        help="reproduce a paper's table or figure",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run one experiment (or 'all') and write results.md (the paper's numbers "
        "beside ours),\nPNG figures and run.json into the output folder. Nothing is "
        "written outside it:\n'all' writes the index README.md inside --output; a single "
        "experiment rewrites an\nindex only with --index.\n\nexperiments:\n"
        + experiments
        + "\n  all             every experiment, plus the index page",
        epilog=EPILOG,
    )
    _add_debug(rep, argparse.SUPPRESS)
    rep.add_argument(
        "name",
        choices=names + ["all"],
        metavar="NAME",
        help="the experiment, or 'all' (choices: %(choices)s)",
    )
    rep.add_argument(
        "--quick",
        action="store_true",
        help="a reduced run of a few minutes (default: off, the full run)",
    )
    rep.add_argument(
        "--output",
        default=None,
        metavar="DIR",
        help="results folder (default: results/NAME; for 'all' the root folder, results)",
    )
    rep.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="data home (default: $MVKERNELS_DATA, else ~/mvkernels_data; downloaded if missing)",
    )
    rep.add_argument(
        "--random-state",
        type=int,
        default=0,
        metavar="N",
        help="seed of every random choice (default: %(default)s)",
    )
    rep.add_argument(
        "--index",
        default=None,
        metavar="ROOT",
        help="also rewrite the results index ROOT/README.md (single experiment only; 'all' "
        "writes it inside --output) (default: none, nothing is written outside --output)",
    )
    return parser


def _one_line(exc: BaseException) -> str:
    """``TYPE: MESSAGE`` of an error, on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mvkernels`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success; 1 after an error, reported as one line on stderr (the traceback with
        ``--debug``); 130 after Ctrl-C. A usage error exits with status 2 (argparse).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(parser, args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("mvkernels: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"mvkernels: error: {_one_line(exc)} (run with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "demo":
        from .demo import run_demo

        run_demo(output=args.output, quick=args.quick, random_state=args.random_state)
        return 0
    from .reproduce import run_all, run_experiment

    if args.name == "all":
        if args.index is not None:
            parser.error(
                "--index applies to a single experiment; 'all' writes the index inside --output"
            )
        results = run_all(
            quick=args.quick,
            output=args.output or "results",
            data_dir=args.data,
            random_state=args.random_state,
            tracebacks=args.debug,
        )
        failed = [n for n, r in results.items() if isinstance(r, Exception)]
        if failed:
            print(f"[reproduce all] failed: {', '.join(failed)}", file=sys.stderr)
            return 1
        return 0
    run_experiment(
        args.name,
        quick=args.quick,
        output=args.output,
        data_dir=args.data,
        random_state=args.random_state,
        index=args.index,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
