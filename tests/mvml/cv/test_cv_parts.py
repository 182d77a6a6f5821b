"""The split of a search along the part axes (``mvkernels.mvml.cv._parts``): the parts are
the product of the searched axes' values in the order of ``PART_AXES``, and an estimator
that reports no axis searches itself, as one part holding each axis's single value."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from mvkernels import MVMLClassifierCV
from mvkernels.mvml.cv._grid import LOSS_SEARCHES, PART_AXES
from mvkernels.mvml.cv._parts import PartSplit, part_estimator


def _clf(**params) -> SimpleNamespace:
    """What the loss and decomposition axes read of a classifier's search."""
    base = dict(
        _base_classes={"squared": object, "hinge": object},
        _native_loss="squared",
        loss="squared",
        multi_class="ovr",
        classes_=np.arange(3),
    )
    return SimpleNamespace(**(base | params))


def test_parts_are_the_product_of_the_searched_axes_in_order():
    split = PartSplit.of(_clf(loss="auto", multi_class="auto"))
    assert split.names == ("loss", "multi_class")
    assert [a.name for a in split.axes] == ["loss", "multi_class"]
    assert split.values == tuple(
        {"loss": loss, "multi_class": mc} for loss in ("squared", "hinge") for mc in ("ovr", "ovo")
    )
    assert split.abandon  # every declared axis abandons


@pytest.mark.parametrize(
    "params, names",
    [
        ({}, ()),  # the class's own loss and decomposition
        ({"multi_class": "ovo"}, ()),  # the searched estimator's own parameter
        ({"multi_class": "auto", "classes_": np.arange(2)}, ("multi_class",)),  # reported
        ({"loss": "hinge"}, ("loss",)),  # not the class's own loss: a search apart
    ],
)
def test_one_value_per_axis_is_one_part(params, names):
    """One value of each axis: one part, whether or not the axis is reported."""
    est = _clf(**params)
    split = PartSplit.of(est)
    assert split.names == names
    assert split.values == ({a.name: a.searched(est)[0] for a in PART_AXES if a.searched(est)},)


def test_a_part_is_the_estimator_at_its_values():
    """A part is a copy of the CV estimator with each axis's parameter set, the parameters
    its ``configure`` gives (the hinge loss: its path length), and the labels kept."""
    est = MVMLClassifierCV(loss="auto", multi_class="auto", max_iter=10)
    est.classes_ = np.arange(3)
    part = part_estimator(est, {"loss": "hinge", "multi_class": "ovo"})
    assert part is not est and (est.loss, est.multi_class) == ("auto", "auto")
    assert (part.loss, part.multi_class) == ("hinge", "ovo")
    assert part._part_values == {"loss": "hinge", "multi_class": "ovo"}
    assert part.classes_ is est.classes_
    # the hinge loss's LossSearch.beside: its path length, no joint view under "auto"
    assert (part.max_iter, part.joint_view) == (LOSS_SEARCHES["hinge"].max_iter, False)
    assert (est.max_iter, est.joint_view) == (10, "auto")
