"""The restated ``__init__`` signatures of the MVML estimators stay in step with their base.

scikit-learn reads an estimator's parameters from its ``__init__`` signature (``get_params``,
``clone``, the repr, the docs), so every estimator states its parameters explicitly, as
scikit-learn's own estimators do, instead of a generated signature. The price is that a
subclass that changes a default (``MVMLRegressor``: ``alpha``, ``bandwidth_factor``,
``joint_view``, ``fit_intercept``; ``MVMLSVC``: ``alpha``, ``max_iter``; ``MVMLSVCCV``:
``cv``, ``max_iter``, ``joint_view``; ``MVMLRegressorCV``: ``fit_intercept``) restates the
others. This test makes the restatement a
checked contract: a
parameter added to a base is a failure here until every subclass has it, with the base's
default unless the difference is declared below.
"""

from __future__ import annotations

import inspect

import pytest

from mvkernels import (
    MVMLSVC,
    MVMLSVCCV,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
)
from mvkernels.mvml._base import _BaseMVML
from mvkernels.mvml.cv._search import _MVMLCVBase

#: (subclass, base) -> the defaults the subclass changes on purpose
INTENDED = {
    (MVMLClassifier, _BaseMVML): {"alpha": 0.1, "joint_view": "auto"},
    (MVMLRegressor, _BaseMVML): {
        "alpha": 0.1,
        "bandwidth_factor": 1.5,
        "joint_view": "auto",
        "fit_intercept": True,
    },
    (MVMLSVC, MVMLClassifier): {
        "alpha": 1e-5,
        "max_iter": 2,
        "multi_class": "auto",
    },
    (MVMLClassifierCV, _MVMLCVBase): {},
    (MVMLRegressorCV, _MVMLCVBase): {"fit_intercept": True},
    (MVMLSVCCV, _MVMLCVBase): {
        "cv": 3,
        "max_iter": 2,
        "joint_view": False,
        "loss": "hinge",
        "feature_relevance": "none",
    },
}


def _params(cls: type) -> dict[str, inspect.Parameter]:
    sig = inspect.signature(cls.__init__)
    return {k: p for k, p in sig.parameters.items() if k != "self"}


@pytest.mark.parametrize(("sub", "base"), list(INTENDED), ids=lambda c: c.__name__)
def test_subclass_restates_every_base_parameter_with_its_default(sub, base):
    mine, theirs = _params(sub), _params(base)
    missing = sorted(set(theirs) - set(mine))
    assert not missing, f"{sub.__name__}.__init__ lacks {missing} of {base.__name__}"
    changed = {k: mine[k].default for k in theirs if mine[k].default != theirs[k].default}
    assert changed == INTENDED[(sub, base)], (
        f"{sub.__name__} changes the defaults {changed}; declare intended ones in INTENDED"
    )


@pytest.mark.parametrize(("sub", "base"), list(INTENDED), ids=lambda c: c.__name__)
def test_restated_parameters_reach_the_estimator(sub, base):
    """Every parameter given to the subclass is stored unchanged (none dropped on the way
    to the base's ``__init__``)."""
    sentinel = {k: object() for k in _params(sub)}
    est = sub(**sentinel)
    assert all(getattr(est, k) is v for k, v in sentinel.items())
