"""Golden outputs: every MVML estimator gives what it gave before the engine refactoring.

``golden/make_golden.py`` fitted each case at commit 9946e0c and stored its outputs in
``golden/golden_9946e0c.npz``. Here the same cases are fitted on the current code: decision
values (and regression predictions, probabilities) must agree to 1e-8 relative to their
largest magnitude, predicted labels exactly; the CV estimators must make the same choice
(``best_params_``, the candidate list and the ranks) with the same scores to 1e-8.
Both sides run BLAS on one thread, so the comparison does not depend on the thread count
(the fits' own independence of it is tested in ``test_mvml.py``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from mvkernels._threads import serial_blas

_spec = importlib.util.spec_from_file_location(
    "mvml_golden", Path(__file__).parent / "golden" / "make_golden.py"
)
assert _spec is not None and _spec.loader is not None
_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_golden)
GOLDEN, cases, run_case = _golden.GOLDEN, _golden.cases, _golden.run_case

RTOL = 1e-8
CV_ATOL = 1e-8

_STORED = np.load(GOLDEN)
_CASES = cases()
_CV = [name for name in _CASES if name.startswith("cv_")]


def _stored(name: str) -> dict[str, np.ndarray]:
    prefix = f"{name}/"
    return {k[len(prefix) :]: _STORED[k] for k in _STORED.files if k.startswith(prefix)}


def test_every_stored_case_is_checked():
    stored = {k.split("/")[0] for k in _STORED.files}
    assert stored == set(_CASES)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in _CV else n for n in _CASES],
)
def test_outputs_equal_golden(name):
    expected = _stored(name)
    with serial_blas(0):
        got = run_case(_CASES[name])
    assert set(got) == set(expected), name
    for key, want in expected.items():
        have = got[key]
        if key in ("best_params", "params"):
            assert json.loads(str(have)) == json.loads(str(want)), f"{name}: {key}"
        elif key in ("predict", "rank_test_score") and want.dtype.kind in "iub":
            np.testing.assert_array_equal(have, want, err_msg=f"{name}: {key}")
        elif key in ("mean_test_score", "split_test_scores"):
            np.testing.assert_allclose(
                have, want, rtol=0, atol=CV_ATOL, equal_nan=True, err_msg=f"{name}: {key}"
            )
        else:
            scale = max(float(np.max(np.abs(want))), 1e-300)
            err = float(np.max(np.abs(np.asarray(have, dtype=np.float64) - want))) / scale
            assert err <= RTOL, f"{name}: {key} differs by {err:.2e} relative"
