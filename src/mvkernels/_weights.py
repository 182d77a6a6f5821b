"""Sample and class weights: their validation and their meaning, for every estimator that
takes them.

``sample_weight`` is a vector of *frequency* weights: an integer weight ``k`` stands for
``k`` copies of the row and a weight 0 for a removed row. The estimators drop the rows of
zero weight before anything else (so a zero weight and a removed row give the same fit,
draws of landmarks and bandwidth subsamples included) and weigh the loss of every other
row by its weight. ``class_weight`` multiplies the weight of the loss of every row of a
class (not the data-dependent choices such as default bandwidths, which take
``sample_weight`` only), as in
:class:`sklearn.svm.SVC`: ``None`` (1 for every class), a dict ``{label: weight}``
(missing classes 1) or ``"balanced"``, ``n / (n_classes * n_c)`` with ``n`` and ``n_c`` the
total weight and the weight of class ``c`` (the rows and row counts of
:func:`sklearn.utils.class_weight.compute_class_weight` without ``sample_weight``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["check_sample_weight", "class_weight_of_rows", "positive_rows"]


def check_sample_weight(
    sample_weight: Any, n_samples: int, allow_all_zero: bool = False
) -> np.ndarray | None:
    """Validated ``sample_weight``: None, or a float64 vector of ``n_samples`` finite
    weights ``>= 0``, not all 0 (unless ``allow_all_zero``: a batch of a stream).

    A number is the same weight for every row. Raises ``ValueError`` naming what is wrong
    (shape, length, NaN or infinity, a negative weight, all weights 0).

    Examples
    --------
    >>> check_sample_weight([1, 0, 2], 3)
    array([1., 0., 2.])
    >>> check_sample_weight(None, 3) is None
    True
    """
    if sample_weight is None:
        return None
    if np.isscalar(sample_weight) and not isinstance(sample_weight, (str, bytes)):
        sample_weight = np.full(n_samples, sample_weight)
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"sample_weight must be an array of real numbers, got {type(sample_weight).__name__}"
        ) from exc
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D (one weight per sample), got shape {w.shape}")
    if w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has {w.shape[0]} entries but there are {n_samples} samples"
        )
    if not np.isfinite(w).all():
        bad = "NaN" if np.isnan(w).any() else "infinity"
        raise ValueError(
            f"sample_weight contains {bad} (row {int(np.flatnonzero(~np.isfinite(w))[0])})"
        )
    if (w < 0).any():
        i = int(np.flatnonzero(w < 0)[0])
        raise ValueError(f"sample_weight must be >= 0, got {float(w[i])!r} at row {i}")
    if not allow_all_zero and not (w > 0).any():
        raise ValueError("every sample weight is zero: at least one sample needs a positive weight")
    return w


def positive_rows(sample_weight: np.ndarray | None, n_samples: int) -> np.ndarray | None:
    """Indices of the rows of positive weight, or None when every row is kept."""
    if sample_weight is None or (sample_weight > 0).all():
        return None
    return np.flatnonzero(sample_weight > 0)


def class_weight_of_rows(
    class_weight: Any,
    classes: np.ndarray,
    y_index: np.ndarray,
    sample_weight: np.ndarray | None,
    labels_seen: np.ndarray | None = None,
) -> np.ndarray | None:
    """The weight of each row's class (None when ``class_weight`` is None).

    Parameters
    ----------
    class_weight : None, "balanced" or dict
        As in :class:`sklearn.svm.SVC`.
    classes : ndarray of shape (n_classes,)
        The classes (of the rows of positive weight).
    y_index : ndarray of int, shape (n,)
        Each row's index into ``classes``.
    sample_weight : ndarray of shape (n,) or None
        The rows' weights ("balanced" counts weighted rows).
    labels_seen : ndarray, optional
        Every label of ``y`` (also those of rows of zero weight), the labels a dict may
        name; default ``classes``.

    Examples
    --------
    >>> import numpy as np
    >>> class_weight_of_rows("balanced", np.array([0, 1]), np.array([0, 0, 0, 1]), None)
    array([0.66666667, 0.66666667, 0.66666667, 2.        ])
    """
    if class_weight is None:
        return None
    n_classes = len(classes)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(
                f'class_weight must be None, "balanced" or a dict, got {class_weight!r}'
            )
        w = np.ones(len(y_index)) if sample_weight is None else sample_weight
        counts = np.bincount(y_index, weights=w, minlength=n_classes)
        per_class = w.sum() / (n_classes * counts)
    elif isinstance(class_weight, Mapping):
        seen = classes if labels_seen is None else labels_seen
        known = set(np.asarray(seen).tolist())
        unknown = [k for k in class_weight if k not in known]
        if unknown:
            raise ValueError(
                f"class_weight names label(s) {unknown} that are not in y "
                f"(classes: {classes.tolist()})"
            )
        per_class = np.ones(n_classes)
        for label, value in class_weight.items():
            value = float(value)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(
                    f"class_weight[{label!r}] must be a finite number >= 0, got {value!r}"
                )
            hit = np.flatnonzero(classes == label)
            if hit.size:
                per_class[hit[0]] = value
    else:
        raise ValueError(
            f'class_weight must be None, "balanced" or a dict, got {type(class_weight).__name__}'
        )
    return per_class[y_index]
