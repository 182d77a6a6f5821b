"""The Examples sections of the public docstrings, run as doctests (CI runs this file
with the rest of the suite).

Every module of ``src/mvkernels`` is collected except the reproduction scripts, the command
line and the demo (heavy, real data, or matplotlib); each docstring with examples is one
test, named after the object it documents.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import numpy as np
import pytest

import mvkernels

EXCLUDED = ("mvkernels.reproduce", "mvkernels.cli", "mvkernels.demo")


def _modules() -> list[str]:
    names = ["mvkernels"]
    for info in pkgutil.walk_packages(mvkernels.__path__, "mvkernels."):
        if not info.name.startswith(EXCLUDED):
            names.append(info.name)
    return names


def _doctests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder()
    tests: dict[str, doctest.DocTest] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            if test.examples and test.name not in tests:
                tests[test.name] = test
    return sorted(tests.values(), key=lambda t: t.name)


DOCTESTS = _doctests()


def test_doctests_are_collected():
    """The public estimators' examples are among the collected doctests."""
    names = {t.name.rsplit(".", 1)[-1] for t in DOCTESTS}
    assert {"MVMLRegressor", "BlockNystrom", "SingleViewRegressor", "MultiViewKPCA"} <= names


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples(test: doctest.DocTest):
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    test.globs = dict(test.globs)  # each run from the module's globals, unchanged
    failures: list[str] = []
    with np.printoptions(legacy=False), warnings.catch_warnings():
        warnings.simplefilter("error")  # examples are warning-free
        runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)
