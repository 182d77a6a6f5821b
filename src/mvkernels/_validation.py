"""Input validation for multi-view data, shared by every estimator.

Multi-view input comes in two forms:

* a list (or tuple) of 2-D arrays, one per view, all with the same number of rows;
* one 2-D array plus a ``views`` specification that cuts its columns into views.
  This second form is what makes ``GridSearchCV``, ``cross_val_score`` and
  ``Pipeline`` work unchanged, since they index rows of a single array.

``views`` may be a list of integer sizes (consecutive column blocks), a list of
slices, or a list of integer index arrays. ``views=None`` with a single array means
one view holding every column.

Errors name the view and the problem, e.g. ``"view 2 has 50 samples, view 0 has 60"``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import (
    Interval,
    InvalidParameterError,
    Options,
    RealNotInt,
    StrOptions,
)

from ._arrays import (
    check_whole_rows,
    dask_observed_mask,
    is_dask_collection,
    observed_rows,
    refuse_all_missing,
    views_kind,
)
from ._kernel_families import KERNEL_NAMES
from ._sparse import check_sparse_view, is_sparse, refuse_sparse

__all__ = [
    "KERNEL_NAMES",
    "KernelSpec",
    "common_constraints",
    "positive_real",
    "nonnegative_real",
    "positive_int",
    "InvalidParameterError",
    "as_real_array",
    "check_not_complex",
    "check_real_targets",
    "check_views",
    "ValidatedViews",
    "views_kind",
    "take_rows",
    "observed_mask",
    "split_views",
    "check_targets_finite",
    "is_dask_collection",
    "validate_array_input",
    "check_precomputed_kernel",
    "check_psd_gram",
]


# ----------------------------------------------------------------------------- parameters
#: kernel names accepted by :class:`mvkernels.kernels.ViewKernel` (case-insensitive)


class KernelSpec(Options):
    """Constraint for a ``kernel`` parameter: a kernel name, a callable, or a list of them.

    Names are matched case-insensitively against :data:`KERNEL_NAMES`; a list/tuple gives
    one kernel per view (its length is checked against the data in ``fit``).
    ``allow_list=False`` for estimators with a single kernel (early fusion, OLOK).
    (A subclass of scikit-learn's ``Options`` so that ``_parameter_constraints`` takes it.)
    """

    def __init__(self, allow_list: bool = True, allow_precomputed: bool = True):
        super().__init__(object, set(KERNEL_NAMES))
        self.allow_list = allow_list
        self.allow_precomputed = allow_precomputed

    def _one(self, val: Any) -> bool:
        if callable(val):
            return True
        if isinstance(val, str):
            name = val.lower()
            return name in KERNEL_NAMES and (self.allow_precomputed or name != "precomputed")
        return False

    def is_satisfied_by(self, val: Any) -> bool:
        if self._one(val):
            return True
        return (
            self.allow_list
            and isinstance(val, (list, tuple))
            and len(val) > 0
            and all(self._one(v) for v in val)
        )

    def __str__(self) -> str:
        names = [n for n in KERNEL_NAMES if self.allow_precomputed or n != "precomputed"]
        out = f"a str among {names} or a callable"
        return out + (" or a non-empty list of those (one per view)" if self.allow_list else "")


def positive_real() -> Interval:
    """Constraint: a finite real number ``> 0``."""
    return Interval(Real, 0, np.inf, closed="neither")


def nonnegative_real() -> Interval:
    """Constraint: a finite real number ``>= 0``."""
    return Interval(Real, 0, np.inf, closed="left")


def positive_int(low: int = 1) -> Interval:
    """Constraint: an int ``>= low``."""
    return Interval(Integral, low, None, closed="left")


def common_constraints(*, landmarks_optional: bool = True) -> dict[str, list]:
    """``_parameter_constraints`` entries shared by the kernel estimators.

    ``kernel``, ``kernel_params``, ``n_landmarks`` (int >= 1 or a fraction in (0, 1];
    also None, full kernels, when ``landmarks_optional``), ``landmarks``, ``views`` and
    ``random_state``. Merge into an estimator's own dict; scikit-learn's
    ``BaseEstimator._validate_params`` (run by ``sklearn.base._fit_context``) then checks
    every parameter once, at ``fit``, whatever the mode (e.g. ``landmarks`` even with
    full kernels). The contents of ``kernel_params`` are checked when the kernels are
    built (:class:`mvkernels.kernels.ViewKernel`).
    """
    n_landmarks: list = [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0, 1, closed="right"),
    ]
    if landmarks_optional:
        n_landmarks.append(None)
    return {
        "kernel": [KernelSpec()],
        "kernel_params": [dict, list, tuple, None],
        "n_landmarks": n_landmarks,
        "landmarks": [StrOptions({"uniform", "kmeans++", "leverage"}), "array-like"],
        "views": ["array-like", None],
        "random_state": ["random_state"],
    }


def _complex_error(what: str) -> ValueError:
    return ValueError(
        f"Complex data not supported: {what} is complex; mvkernels needs real "
        "data (pass the real and imaginary parts as separate columns if both "
        "matter)"
    )


def check_not_complex(x: Any, what: str) -> None:
    """Raise the library's complex-data ``ValueError`` if ``x`` holds complex numbers.

    Checks dtypes only for arrays and DataFrames; other containers are converted once.
    """
    if is_dask_collection(x) or is_sparse(x):
        if np.dtype(x.dtype).kind == "c":
            raise _complex_error(what)
        return
    if hasattr(x, "dtypes") and hasattr(x, "to_numpy"):  # pandas DataFrame / Series
        dts = x.dtypes if hasattr(x.dtypes, "__iter__") else [x.dtypes]
        if any(isinstance(t, np.dtype) and t.kind == "c" for t in dts):
            raise _complex_error(what)
        return
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "c":
            raise _complex_error(what)
        if x.dtype.kind != "O":
            return
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        return  # not array-like: reported by the caller's conversion
    if arr.dtype.kind == "c" or (
        arr.dtype.kind == "O"
        and any(isinstance(v, (complex, np.complexfloating)) for v in arr.ravel()[:10000])
    ):
        raise _complex_error(what)


def as_real_array(x: Any, what: str, dtype: Any = np.float64) -> np.ndarray:
    """``np.asarray(x, dtype)`` that refuses complex input instead of dropping the imaginary part.

    Every container goes through here (a view, the single array, a DataFrame, targets), so
    complex data gets the same clear ``ValueError`` everywhere, never a ``ComplexWarning``.
    ``dtype=None`` keeps the inferred dtype (labels), converting object arrays if numeric.
    """
    check_not_complex(x, what)
    if hasattr(x, "dtypes") and hasattr(x, "to_numpy"):
        x = x.to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            arr = np.asarray(x) if dtype is None else np.asarray(x, dtype=dtype)
        except np.exceptions.ComplexWarning:
            raise _complex_error(what) from None
        except ValueError:
            ragged = _ragged_rows(x)
            if ragged is None:
                raise
            j, len_j, len_0 = ragged
            raise ValueError(
                f"{what} is ragged: row {j} has {len_j} entries but row 0 has {len_0}; "
                "every row must have the same number of features"
            ) from None
    if arr.dtype.kind == "c":
        raise _complex_error(what)
    return arr


def _ragged_rows(x: Any) -> tuple[int, int, int] | None:
    """``(row, its length, length of row 0)`` for the first row of a nested list whose
    length differs from row 0's; None if ``x`` is not a ragged list of rows."""
    if not isinstance(x, (list, tuple)) or not x:
        return None
    lengths = [len(r) if isinstance(r, (list, tuple, np.ndarray)) else -1 for r in x]
    for j, n_j in enumerate(lengths):
        if n_j != lengths[0]:
            return j, max(n_j, 1), max(lengths[0], 1)
    return None


def _is_label_list(v: Any) -> bool:
    """True if a view entry lists column labels (anything but integer positions/masks)."""
    if isinstance(v, (str, bytes)):
        return True
    if isinstance(v, slice) or not isinstance(v, (list, tuple, np.ndarray)):
        return False
    items = list(v)
    return bool(items) and not all(isinstance(c, (int, np.integer, bool, np.bool_)) for c in items)


def _label_positions(v: Any, feature_names: Any, i: int) -> np.ndarray | None:
    """Column positions of a view given by column labels (None if ``v`` is not labels)."""
    if not _is_label_list(v):
        return None
    items = [v] if isinstance(v, (str, bytes)) else list(v)
    if feature_names is None:
        raise TypeError(
            f"view {i} lists column labels {items[:3]!r}...; labels need a pandas DataFrame "
            "(or fitted feature names); with a NumPy array give column positions. In a "
            "Pipeline, the step before the estimator passes it a NumPy array: ask for "
            "pandas output, e.g. make_pipeline(StandardScaler(), est)"
            '.set_output(transform="pandas") (or StandardScaler().set_output('
            'transform="pandas")), so that the column labels reach the estimator'
        )
    names = list(np.asarray(feature_names, dtype=object))
    out = []
    for c in items:
        if c not in names:
            raise ValueError(f"view {i}: column label {c!r} is not a column of X")
        out.append(names.index(c))
    return np.asarray(out, dtype=np.intp)


def _normalise_view_spec(
    views: Any, n_columns: int, feature_names: Any = None
) -> list[np.ndarray | slice]:
    """Turn a ``views`` specification into a list of column selectors."""
    if views is None:
        return [slice(0, n_columns)]
    if isinstance(views, (int, np.integer)):
        raise TypeError(
            "views must be a list of view sizes, slices or column-index arrays, "
            f"got the integer {views!r}"
        )
    views = list(views)
    if len(views) == 0:
        raise ValueError("views is empty: give at least one view")
    if all(isinstance(v, (int, np.integer)) for v in views):
        sizes = [int(v) for v in views]
        if any(s <= 0 for s in sizes):
            raise ValueError(f"views sizes must be positive, got {sizes}")
        if sum(sizes) != n_columns:
            raise ValueError(
                f"views sizes {sizes} add up to {sum(sizes)} columns but X has {n_columns} columns"
            )
        bounds = np.cumsum([0] + sizes)
        return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    selectors: list[np.ndarray | slice] = []
    for i, v in enumerate(views):
        labels = _label_positions(v, feature_names, i)
        if labels is not None:
            v = labels
        if isinstance(v, slice):
            idx = np.arange(n_columns)[v]
        else:
            idx = np.asarray(v)
            if idx.dtype == bool:
                if idx.shape != (n_columns,):
                    raise ValueError(
                        f"view {i}: boolean column mask has shape {idx.shape}, "
                        f"expected ({n_columns},)"
                    )
                idx = np.flatnonzero(idx)
            elif idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
                raise TypeError(
                    f"view {i}: a view must be a size, a slice or a 1-D array of "
                    f"column indices, got {v!r}"
                )
        if idx.size == 0:
            raise ValueError(f"view {i} selects no column")
        if idx.min() < -n_columns or idx.max() >= n_columns:
            raise ValueError(f"view {i} selects columns outside the {n_columns} columns of X")
        selectors.append(v if isinstance(v, slice) else idx)
    return selectors


def split_views(X: Any, views: Any, feature_names: Any = None) -> list[Any]:
    """Cut the columns of one 2-D array into views (no copy for slices).

    A view may be given by column labels (a list of labels per view) when ``X`` is a
    pandas DataFrame or ``feature_names`` (e.g. a fitted ``feature_names_in_``) is given.
    """
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        if feature_names is None:
            feature_names = np.asarray(X.columns, dtype=object)
        X = as_real_array(X, "X")
    selectors = _normalise_view_spec(views, X.shape[1], feature_names)
    return [X[:, s] for s in selectors]


def _check_one_view(
    Xv: Any,
    i: int,
    *,
    dtype: Any,
    ensure_finite: bool,
    ensure_min_samples: int,
    allow_missing: bool = False,
) -> Any:
    if is_dask_collection(Xv):
        if Xv.ndim != 2:
            raise ValueError(f"view {i} must be 2-D, got a {Xv.ndim}-D Dask array")
        if is_sparse(getattr(Xv, "_meta", None)):
            raise TypeError(
                f"view {i} is a Dask array of sparse blocks, which the Dask path does not "
                "take; pass the scipy.sparse matrix itself (in memory, O(nnz)) or dense blocks"
            )
        return Xv
    if is_sparse(Xv):  # kept sparse: see mvkernels._sparse
        return check_sparse_view(
            Xv, i, dtype=dtype, ensure_finite=ensure_finite, ensure_min_samples=ensure_min_samples
        )
    try:
        arr = as_real_array(Xv, f"view {i}", dtype=dtype)
    except ValueError as exc:
        if "complex" in str(exc) or "ragged" in str(exc):
            raise
        raise ValueError(f"view {i} could not be read as a numeric array: {exc}") from exc
    except TypeError as exc:
        raise ValueError(f"view {i} could not be read as a numeric array: {exc}") from exc
    if arr.ndim == 1:
        raise ValueError(
            f"view {i} is 1-D (shape {arr.shape}); expected a 2-D array of shape "
            "(n_samples, n_features). Reshape a single feature with x.reshape(-1, 1)."
        )
    if arr.ndim != 2:
        raise ValueError(f"view {i} must be 2-D, got shape {arr.shape}")
    if arr.shape[0] < ensure_min_samples:
        raise ValueError(
            f"view {i} has {arr.shape[0]} sample(s); at least {ensure_min_samples} required"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"view {i} has 0 features (shape {arr.shape})")
    if ensure_finite and not np.isfinite(arr).all():
        if np.isinf(arr).any():
            raise ValueError(f"view {i} contains infinity; remove or impute it first")
        if not allow_missing:
            raise ValueError(f"view {i} contains NaN; remove or impute it first")
        check_whole_rows(np.isnan(arr), i)
    # one memory layout whatever the container (a list of arrays, column slices, index
    # arrays, a DataFrame): BLAS rounding depends on the layout, and iterative solvers
    # stopped by max_iter amplify it (MLKR predictions differed by 0.08 across containers)
    return np.ascontiguousarray(arr)


def observed_mask(Xs: Sequence[Any], *, min_observed: int | None = None) -> np.ndarray | None:
    """Which (sample, view) pairs are observed, from views checked with ``allow_missing``.

    Returns None when every view is complete (the usual case: callers then run their
    complete-data code unchanged), else a boolean array of shape (n_samples, n_views),
    ``True`` where the view is observed (its row is not NaN). NumPy and scipy.sparse views
    (a sparse view is complete: missing views are NaN rows of dense views); Dask views in
    one pass over their blocks (:func:`mvkernels._arrays.dask_observed_mask`, which
    also refuses partly missing rows and infinity, naming the view and the rows).

    Raises a ValueError for a sample with every view missing and, with ``min_observed``
    (fit time), for a view observed on fewer than ``min_observed`` rows.
    """
    if isinstance(Xs, ValidatedViews):
        mask = Xs.observed
    elif views_kind(Xs) == "dask":
        mask = dask_observed_mask(Xs)
    else:
        mask = np.column_stack([observed_rows(Xv) for Xv in Xs])
    if mask.all():
        return None
    refuse_all_missing(mask)
    if min_observed is not None:
        for i, k in enumerate(mask.sum(axis=0)):
            if k < min_observed:
                raise ValueError(
                    f"view {i} is observed on {int(k)} training row(s) only; a view with "
                    f"missing rows must be observed on at least {min_observed} rows to be "
                    "learned from (drop the view or add samples where it is observed)"
                )
    return mask


class ValidatedViews(list):
    """Views validated once, at an estimator's boundary, carrying what was checked.

    A list of 2-D views (NumPy, scipy.sparse or Dask arrays, one per view, the same
    samples in the same order) as returned by :func:`check_views`, with its ``kind``
    (``"numpy"``, ``"sparse"`` or ``"dask"``, :func:`views_kind`), ``dtype`` and the
    options it was validated under. :func:`check_views` returns such an object unchanged
    (after the cheap expected-shape checks), so the layers below an estimator
    (:class:`~mvkernels.nystrom.BlockNystrom`, the CV search) do not validate it again.
    Being a list, it goes wherever a list of views goes.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import check_views
    >>> Xs = check_views([np.zeros((4, 2)), np.ones((4, 3))])
    >>> Xs.kind, Xs.n_samples, Xs.n_features
    ('numpy', 4, (2, 3))
    >>> check_views(Xs) is Xs  # not validated again
    True
    >>> Xs.take([0, 2]).n_samples
    2
    """

    def __init__(
        self,
        views: Sequence[Any] = (),
        *,
        kind: str | None = None,
        dtype: Any = np.float64,
        allow_missing: bool = False,
        ensure_finite: bool = True,
    ):
        super().__init__(views)
        self.kind = kind if kind is not None or not self else views_kind(self)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.allow_missing = allow_missing
        self.ensure_finite = ensure_finite
        self._observed: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """Rows of each view (NaN for a Dask view of unknown length)."""
        n = self[0].shape[0]
        return n if np.isnan(n) else int(n)

    @property
    def n_features(self) -> tuple[int, ...]:
        """Columns of each view."""
        return tuple(int(Xv.shape[1]) for Xv in self)

    @property
    def observed(self) -> np.ndarray:
        """(n_samples, n_views) boolean: where each view is observed (not a NaN row);
        computed once (Dask views: one pass over their blocks)."""
        if self._observed is None:
            if self.kind == "dask":
                self._observed = dask_observed_mask(list(self))
            else:
                self._observed = np.column_stack([observed_rows(Xv) for Xv in self])
        return self._observed

    def _like(
        self, views: Sequence[Any], kind: str | None = None, observed: np.ndarray | None = None
    ) -> ValidatedViews:
        out = ValidatedViews(
            views,
            kind=kind or self.kind,
            dtype=self.dtype,
            allow_missing=self.allow_missing,
            ensure_finite=self.ensure_finite,
        )
        out._observed = observed
        return out

    def __getitem__(self, key: Any) -> Any:
        out = super().__getitem__(key)
        if not isinstance(key, slice):
            return out
        observed = None if self._observed is None else self._observed[:, key]
        return self._like(out, observed=observed)

    def take(self, rows: Any) -> ValidatedViews:
        """The same views restricted to ``rows`` (indices, a slice or a boolean mask),
        still validated; an observed mask already computed is restricted with them."""
        observed = None if self._observed is None else self._observed[rows]
        return self._like([Xv[rows] for Xv in self], observed=observed)

    def with_views(self, views: Sequence[Any]) -> ValidatedViews:
        """Other views of the same rows and missing rows (e.g. the columns scaled), still
        validated, with the observed mask already computed."""
        return self._like(views, observed=self._observed)

    def with_view(self, Xv: Any) -> ValidatedViews:
        """These views and one more (derived from them, e.g. the joint view)."""
        return self._like([*self, Xv])

    def derived(self, views: Sequence[Any]) -> ValidatedViews:
        """Views computed from these rows (e.g. their concatenation, early fusion), still
        validated under the same options; their kind is read from them, and no observed
        mask is carried (the views are other ones)."""
        return ValidatedViews(
            views,
            dtype=self.dtype,
            allow_missing=self.allow_missing,
            ensure_finite=self.ensure_finite,
        )

    def _satisfies(self, dtype: Any, ensure_finite: bool, allow_missing: bool) -> bool:
        """Validated under options at least as strict as these: views checked with
        ``allow_missing`` whose observed mask is known and full also satisfy a check
        without it (no row is missing)."""
        same_dtype = dtype is None or self.dtype == np.dtype(dtype)
        complete = self._observed is not None and bool(self._observed.all())
        return (
            same_dtype
            and (self.ensure_finite or not ensure_finite)
            and (allow_missing or not self.allow_missing or complete)
        )


def take_rows(Xs: Sequence[Any], rows: Any) -> list[Any]:
    """Rows of every view; validated views (:class:`ValidatedViews`) stay validated."""
    if isinstance(Xs, ValidatedViews):
        return Xs.take(rows)
    return [Xv[rows] for Xv in Xs]


def check_views(
    X: Any,
    *,
    views: Any = None,
    n_views: int | None = None,
    n_features: Sequence[int] | None = None,
    dtype: Any = np.float64,
    ensure_finite: bool = True,
    ensure_min_samples: int = 1,
    feature_names: Any = None,
    allow_missing: bool = False,
) -> list[Any]:
    """Validate multi-view input and return a list of 2-D arrays.

    Parameters
    ----------
    X : list of array-like or array-like of shape (n_samples, n_columns)
        The views, or a single array cut by ``views``.
    views : None, list of int, list of slice, list of array or list of label lists
        How to cut a single array into views (ignored for list input). With a pandas
        DataFrame (or ``feature_names``) a view may be a list of column labels, e.g.
        ``views=[["x1", "x2"], ["z"]]``.
    n_views : int, optional
        Expected number of views (at predict time: the number seen in ``fit``).
    n_features : sequence of int, optional
        Expected number of columns of each view (at predict time).
    dtype : dtype, default float64
    ensure_finite : bool, default True
        Reject NaN and infinity.
    ensure_min_samples : int, default 1
    feature_names : array of str, optional
        Column labels of a single-array ``X`` already converted to NumPy (an estimator's
        ``feature_names_in_``), for label views.
    allow_missing : bool, default False
        For callers that support missing views: accept a view's row that is NaN in every
        column of that view (the view is missing for that sample); NaN in only some
        columns of a row is still refused, naming the view and the rows. The observed
        pattern is then read with :func:`observed_mask`.

    Returns
    -------
    Xs : ValidatedViews
        A list of ndarray (or Dask arrays, passed through unchanged) that carries its
        kind; given back to :func:`check_views` it is not validated again.

    Raises
    ------
    ValueError
        Mismatched sample counts, wrong number of views, wrong view width, NaN/inf,
        empty views. The message names the view.
    TypeError
        Input that is not array-like, sparse matrices, bad ``views`` specification.
    """
    if isinstance(X, ValidatedViews) and X._satisfies(dtype, ensure_finite, allow_missing):
        Xs = X  # validated at the estimator's boundary: only the expected sizes below
        if Xs.kind != "dask" and Xs.n_samples < ensure_min_samples:
            raise ValueError(
                f"view 0 has {Xs.n_samples} sample(s); at least {ensure_min_samples} required"
            )
    else:
        options = (dtype, ensure_finite, ensure_min_samples, allow_missing)
        Xs = _validate_views(X, views, feature_names, *options)
    if n_views is not None and len(Xs) != n_views:
        raise ValueError(f"expected {n_views} view(s) (as seen in fit), got {len(Xs)}")
    if n_features is not None:
        for i, (Xv, d) in enumerate(zip(Xs, n_features)):
            if Xv.shape[1] != d:
                raise ValueError(f"view {i} has {Xv.shape[1]} features, but {d} were seen in fit")
    return Xs


def _validate_views(
    X: Any,
    views: Any,
    feature_names: Any,
    dtype: Any,
    ensure_finite: bool,
    ensure_min_samples: int,
    allow_missing: bool,
) -> ValidatedViews:
    """The full validation of :func:`check_views` (containers, every view's values)."""
    if X is None:
        raise TypeError("X is None; expected a list of views or a 2-D array")
    if isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError("X is an empty list: give at least one view")
        first = X[0]
        is_list_of_views = (hasattr(first, "shape") and len(first.shape) >= 1) or (
            isinstance(first, (list, tuple))
            and len(first) > 0
            and isinstance(first[0], (list, tuple, np.ndarray))
        )
        if is_list_of_views:
            raw = list(X)
        else:
            raw = split_views(as_real_array(X, "X", dtype=dtype), views, feature_names)
    elif isinstance(X, dict):
        raise TypeError("X must be a list of views or a 2-D array, not a dict")
    else:
        if not hasattr(X, "shape"):
            X = as_real_array(X, "X", dtype=None)
        if len(X.shape) == 1:
            raise ValueError(
                f"X is 1-D (shape {X.shape}); expected a list of 2-D views or a 2-D "
                "array of shape (n_samples, n_columns)"
            )
        if len(X.shape) != 2:
            raise ValueError(
                f"X has shape {X.shape}; expected a list of 2-D views or one 2-D array"
            )
        if not is_dask_collection(X) and X.shape[1] == 0:
            raise ValueError(f"X has 0 columns (shape {X.shape})")
        check_not_complex(X, "X")
        raw = split_views(X, views, feature_names)
    Xs = [
        _check_one_view(
            Xv,
            i,
            dtype=dtype,
            ensure_finite=ensure_finite,
            ensure_min_samples=ensure_min_samples,
            allow_missing=allow_missing,
        )
        for i, Xv in enumerate(raw)
    ]
    kind = views_kind(Xs)
    if kind == "dask":
        refuse_sparse(Xs, "cannot be mixed with Dask views")
    n0 = Xs[0].shape[0]
    for i, Xv in enumerate(Xs[1:], start=1):
        if Xv.shape[0] != n0 and not (is_dask_collection(Xv) and np.isnan(Xv.shape[0])):
            raise ValueError(
                f"view {i} has {Xv.shape[0]} samples, view 0 has {n0}: every view "
                "must hold the same samples in the same order"
            )
    return ValidatedViews(
        Xs, kind=kind, dtype=dtype, allow_missing=allow_missing, ensure_finite=ensure_finite
    )


def check_real_targets(y: Any, name: str = "y") -> np.ndarray:
    """Targets as a float64 array; complex targets are refused (not cast with a warning)."""
    return as_real_array(y, name)


def check_targets_finite(y: np.ndarray, name: str = "y") -> None:
    """Raise a ValueError if the targets hold NaN or infinity."""
    if np.issubdtype(np.asarray(y).dtype, np.number) and not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or infinity")


def check_psd_gram(
    K: np.ndarray, view: int | str, *, what: str = "precomputed kernel", psd_tol: float = 1e-8
) -> None:
    """Raise a ValueError naming the view if a training Gram matrix is not a valid kernel.

    Symmetric to ``1e-8`` relative and positive semi-definite: smallest eigenvalue at least
    ``-psd_tol * max|eig|``. Used for precomputed kernels and for the Gram matrices that
    callable kernels produce on the training data.
    """
    from ._linalg import robust_eigvalsh

    label = view if isinstance(view, str) else f"view {view}"
    scale = max(float(np.abs(K).max()) if K.size else 0.0, 1e-300)
    if not np.allclose(K, K.T, rtol=0, atol=1e-8 * scale):
        raise ValueError(f"{label}: {what} is not symmetric")
    eig = robust_eigvalsh(K, what=f"{label}: {what}")
    if eig[0] < -psd_tol * max(abs(eig[-1]), abs(eig[0])):
        raise ValueError(
            f"{label}: {what} is not positive semi-definite "
            f"(smallest eigenvalue {eig[0]:.3g}, largest {eig[-1]:.3g})"
        )


def check_precomputed_kernel(
    K: Any,
    view: int,
    *,
    n_train: int | None = None,
    square: bool = True,
    psd_tol: float = 1e-8,
) -> np.ndarray:
    """Validate a precomputed kernel matrix of one view.

    With ``square=True`` (fit time) the matrix must be square, symmetric (to
    ``1e-8`` relative) and positive semi-definite: its smallest eigenvalue must be
    at least ``-psd_tol * max|eig|`` (:func:`check_psd_gram`). With ``square=False``
    (predict time) it must have ``n_train`` columns.
    """
    if is_sparse(K):  # a kernel matrix is dense: nothing to save
        K = K.toarray()
    K = as_real_array(K, f"view {view}: precomputed kernel")
    if K.ndim != 2:
        raise ValueError(f"view {view}: precomputed kernel must be 2-D, got shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError(f"view {view}: precomputed kernel contains NaN or infinity")
    if square:
        if K.shape[0] != K.shape[1]:
            raise ValueError(
                f"view {view}: precomputed training kernel must be square, got shape {K.shape}"
            )
        check_psd_gram(K, view, psd_tol=psd_tol)
    elif n_train is not None and K.shape[1] != n_train:
        raise ValueError(
            f"view {view}: precomputed test kernel must have one column per training "
            f"sample ({n_train}), got shape {K.shape}"
        )
    return K


try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:  # pragma: no cover - older scikit-learn
    _sk_validate_data = None


def validate_array_input(est: Any, X: Any, reset: bool) -> Any:
    """sklearn-style validation of a single 2-D array input (feature names, widths, dtype).

    Lists of views and Dask arrays are left to :func:`check_views`. A pandas DataFrame
    whose views are given by column labels (``est.views``) is validated here (feature
    names, width, dtype) but returned as the DataFrame, so that :func:`check_views` can
    resolve the labels. A NumPy array given after a fit on a DataFrame (``reset=False``,
    ``est.feature_names_in_`` set) with label views is returned as a DataFrame with the
    fitted column names (its columns are taken to be in the fitted order, as
    scikit-learn does, which warns that X has no feature names), so that the labels
    resolve through ``feature_names_in_``.
    """
    if isinstance(X, (list, tuple)) or is_dask_collection(X):
        return X
    check_not_complex(X, "X")
    kw = dict(
        reset=reset,
        dtype=np.float64,
        ensure_all_finite=False,
        ensure_min_samples=1,
        accept_sparse=("csr", "csc"),
    )
    if _sk_validate_data is not None:
        out = _sk_validate_data(est, X, **kw)
    else:  # pragma: no cover
        kw["force_all_finite"] = kw.pop("ensure_all_finite")
        out = est._validate_data(X, **kw)
    if not _has_label_views(getattr(est, "views", None)):
        return out
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        return X
    names = getattr(est, "feature_names_in_", None)
    if not reset and names is not None and isinstance(out, np.ndarray):
        import pandas as pd  # the fit saw a DataFrame

        return pd.DataFrame(out, columns=list(names), copy=False)
    return out


def _has_label_views(views: Any) -> bool:
    if views is None or isinstance(views, (str, bytes)):
        return False
    try:
        return any(_is_label_list(v) for v in views)
    except TypeError:
        return False
