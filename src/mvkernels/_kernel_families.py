"""The named scalar kernels, one small class each: a registry every layer reads.

A :class:`KernelFamily` says everything the package needs to know about one named kernel
(``kernel="rbf"``, ``"laplacian"``, ...): its name and aliases, the parameters it takes,
whether it is evaluated on sparse views without densifying them, which mean pairwise
distance sets its default bandwidth (if any) and which parameter holds it, the value
checks of its parameters, how its parameters are resolved on the training rows, and how
its Gram matrix and diagonal are computed. Input validation
(:data:`KERNEL_NAMES`), the sparse-input tags (:func:`kernel_takes_sparse`), the view
kernels (:class:`mvkernels.kernels.ViewKernel`), the bandwidth grid of the CV estimators
and the Dask back end all read :data:`KERNEL_FAMILIES`, so a new named kernel is one
class registered there.

How a kernel is added
---------------------
Subclass :class:`KernelFamily` and register one instance, ``KERNEL_FAMILIES[f.name] = f``
(the built-in ones are listed at the end of this module). The class declares:

* ``name``/``aliases`` and ``takes_sparse``;
* ``params``: each parameter's value check (:data:`ParamCheck`, e.g.
  :func:`positive_real_or_none`, :func:`finite_real`, :func:`positive_int`), run when a
  :class:`~mvkernels.kernels.ViewKernel` is built and again at its fit;
* for a data-driven bandwidth: ``bandwidth_distance`` (its mean pairwise distance sets
  the default in :meth:`KernelFamily.resolve`), ``bandwidth_param`` (the parameter that
  holds the resolved bandwidth), ``bandwidth_inputs`` (the parameters that give it;
  default ``(bandwidth_param,)``) and, unless the parameter scales like ``gamma``,
  :meth:`KernelFamily.scale_bandwidth` (the bandwidth factor ``f`` multiplies ``gamma``;
  a length scale ``s`` becomes ``s / sqrt(f)``);
* :meth:`KernelFamily.gram` and :meth:`KernelFamily.diag` (and :meth:`KernelFamily.resolve`
  for data-driven defaults).

Nothing else changes: the accepted names (:data:`KERNEL_NAMES`, the estimators'
``kernel`` constraint), the sparse tags, the default bandwidths
(:func:`mvkernels.mvml._bandwidth.resolve_bandwidths`), the CV estimators' bandwidth grid
(``bandwidth_factors``) and the Dask back end read the registry at each use
(``tests/test_kernel_families.py`` registers a test-only family and checks it). E.g. a
cosine-similarity kernel without parameters:

>>> class Cosine(KernelFamily):
...     name = "cossim"
...     def gram(self, X, Z, p):
...         Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
...         return Xn @ (Z / np.linalg.norm(Z, axis=1, keepdims=True)).T
...     def diag(self, X, p):
...         return np.ones(X.shape[0])
>>> KERNEL_FAMILIES["cossim"] = Cosine()
>>> from mvkernels.kernels import ViewKernel
>>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
>>> ViewKernel("CosSim").fit(X)(X, X).round(4), "cossim" in KERNEL_NAMES
(array([[1.    , 0.7071],
       [0.7071, 1.    ]]), True)
>>> del KERNEL_FAMILIES["cossim"]

This module stands on the bottom floor (it imports nothing of the package but
:mod:`mvkernels._sparse`): the default bandwidths' mean distances are computed above it
(:func:`mvkernels.kernels.mean_pairwise_distance`) and handed to :meth:`KernelFamily.resolve`
as a function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.metrics.pairwise import (
    laplacian_kernel,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
)

from ._sparse import row_sq_norms

__all__ = [
    "KernelFamily",
    "ParamCheck",
    "positive_real_or_none",
    "finite_real",
    "positive_int",
    "KERNEL_FAMILIES",
    "KERNEL_NAMES",
    "RegistryNames",
    "SPARSE_KERNELS",
    "BANDWIDTH_KERNELS",
    "kernel_family",
    "kernel_takes_sparse",
    "names_precomputed",
    "check_kernel_takes_sparse",
    "gaussian_gram",
]

#: ``mean_distance(metric)``: the mean pairwise distance of the view's training rows
MeanDistance = Callable[[str], float]
#: ``check(name, value, view)``: raises ``TypeError``/``ValueError`` (naming the parameter
#: and the view) if ``value`` is not allowed for the kernel parameter ``name``
ParamCheck = Callable[[str, Any, int], None]


def _is_real(v: Any) -> bool:
    return isinstance(v, (Real, np.floating, np.integer)) and not isinstance(v, (bool, np.bool_))


def positive_real_or_none(name: str, v: Any, view: int) -> None:
    """:data:`ParamCheck`: None (resolved on the data) or a finite real ``> 0``.

    Examples
    --------
    >>> positive_real_or_none("gamma", 0.5, 0), positive_real_or_none("gamma", None, 0)
    (None, None)
    >>> positive_real_or_none("gamma", -1.0, 2)
    Traceback (most recent call last):
    ...
    ValueError: view 2: kernel parameter gamma must be > 0 and finite, got -1.0
    """
    if v is None:
        return
    if not _is_real(v):
        raise TypeError(
            f"view {view}: kernel parameter {name} must be a real number > 0 "
            f"or None, got {type(v).__name__} {v!r}"
        )
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"view {view}: kernel parameter {name} must be > 0 and finite, got {v!r}")


def finite_real(name: str, v: Any, view: int) -> None:
    """:data:`ParamCheck`: a finite real number."""
    if not _is_real(v):
        raise TypeError(
            f"view {view}: kernel parameter {name} must be a real number, "
            f"got {type(v).__name__} {v!r}"
        )
    if not np.isfinite(v):
        raise ValueError(f"view {view}: kernel parameter {name} must be finite, got {v!r}")


def positive_int(name: str, v: Any, view: int) -> None:
    """:data:`ParamCheck`: an int ``>= 1`` (a float such as 2.5 is refused: a polynomial
    kernel's fractional power of a possibly negative base is NaN)."""
    if not isinstance(v, (Integral, np.integer)) or isinstance(v, (bool, np.bool_)):
        raise TypeError(
            f"view {view}: kernel parameter {name} must be an int >= 1, "
            f"got {type(v).__name__} {v!r}"
        )
    if v < 1:
        raise ValueError(f"view {view}: kernel parameter {name} must be >= 1, got {v!r}")


def gaussian_gram(X: np.ndarray, Z: np.ndarray, gamma: float) -> np.ndarray:
    """``exp(-gamma ||x_i - z_j||^2)`` for dense NumPy rows already validated.

    ``-gamma ||x - z||^2 = 2 gamma x^T z - gamma ||x||^2 - gamma ||z||^2`` (one BLAS
    product, then in-place passes; clipped at 0 against rounding, and exactly 0 on the
    diagonal when ``Z is X``), as :func:`sklearn.metrics.pairwise.rbf_kernel` computes
    it but without its input checks, which the estimators ran once at their boundary.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> bool(np.allclose(gaussian_gram(X, X[:2], 0.3), rbf_kernel(X, X[:2], gamma=0.3)))
    True
    """
    same = Z is X  # before asarray: an unpickled array's asarray is a new view of it
    X = np.asarray(X, dtype=np.float64)
    Z = X if same else np.asarray(Z, dtype=np.float64)
    K = X @ Z.T
    K *= 2.0 * gamma
    K -= gamma * row_sq_norms(X)[:, None]
    K -= gamma * row_sq_norms(Z)[None, :]
    if same:
        K.flat[:: K.shape[0] + 1] = 0.0
    np.minimum(K, 0.0, out=K)
    return np.exp(K, out=K)


class KernelFamily:
    """One named scalar kernel (see the module docstring).

    A subclass sets the class attributes below and implements :meth:`gram` and
    :meth:`diag` (and :meth:`resolve` when a parameter has a data-driven default); the
    parameter checks, the open-bandwidth test and the bandwidth factors' scaling
    (:meth:`scale_bandwidth`) are generic, read from the attributes.

    Attributes
    ----------
    name : str
        The canonical name (``ViewKernel.name``).
    aliases : tuple of str
        Other names accepted for it (matched case-insensitively, as the name).
    params : mapping of str to ParamCheck
        The parameters it takes (``kernel_params`` keys), each with the check of its
        values (:data:`ParamCheck`, e.g. :func:`positive_real_or_none`), run in this order
        when a :class:`~mvkernels.kernels.ViewKernel` is built and fitted.
    takes_sparse : bool
        Evaluated on scipy.sparse views without densifying them.
    bandwidth_distance : str or None
        The distance (:func:`scipy.spatial.distance.pdist` name) whose mean over the
        training rows sets the default bandwidth, which the CV estimators' bandwidth
        factors scale; None: no data-driven bandwidth.
    bandwidth_param : str or None
        The parameter holding the bandwidth once resolved (:meth:`resolve` returns it;
        ``"gamma"`` for the built-in kernels); required with ``bandwidth_distance``.
    bandwidth_inputs : tuple of str
        The parameters that give the bandwidth explicitly (the bandwidth is open when
        all are missing or None); default: ``(bandwidth_param,)``.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    params: ClassVar[Mapping[str, ParamCheck]] = {}
    takes_sparse: ClassVar[bool] = True
    bandwidth_distance: ClassVar[str | None] = None
    bandwidth_param: ClassVar[str | None] = None
    bandwidth_inputs: ClassVar[tuple[str, ...]] = ()

    def check_params(self, params: dict, view: int) -> None:
        """Refuse parameters this kernel does not take, then run each given parameter's
        value check (:attr:`params`), naming the view."""
        unknown = set(params) - set(self.params)
        if unknown:
            raise ValueError(
                f"view {view}: kernel {self.name!r} does not take parameter(s) "
                f"{sorted(unknown)}; allowed: {sorted(self.params)}"
            )
        for key, check in self.params.items():
            if key in params:
                check(key, params[key], view)

    def _bandwidth_inputs(self) -> tuple[str, ...]:
        if self.bandwidth_inputs:
            return self.bandwidth_inputs
        return () if self.bandwidth_param is None else (self.bandwidth_param,)

    def open_bandwidth(self, params: dict) -> bool:
        """Whether ``params`` leave the data-driven bandwidth to be resolved on the data
        (a ``bandwidth_distance`` and none of :attr:`bandwidth_inputs` given)."""
        return self.bandwidth_distance is not None and all(
            params.get(key) is None for key in self._bandwidth_inputs()
        )

    def scale_bandwidth(self, value: float, factor: float) -> float:
        """The bandwidth parameter's value ``value`` under a bandwidth factor ``factor``
        (``gamma_l = f * gamma_l^0``, :mod:`mvkernels.mvml._bandwidth`): ``value * factor``
        for an inverse squared length scale such as ``gamma``. A family whose bandwidth
        parameter is a length scale ``s`` (``gamma ~ 1 / s^2``) overrides it with
        ``value / sqrt(factor)``."""
        return float(value) * float(factor)

    def with_bandwidth(self, given: dict, resolved: dict, factor: float) -> dict:
        """``given`` parameters with the bandwidth inputs replaced by the bandwidth
        parameter, its resolved value (``resolved``, from :meth:`resolve`) scaled by
        ``factor``."""
        key = self.bandwidth_param
        if key is None:
            raise TypeError(f"kernel family {self.name!r} names no bandwidth_param")
        inputs = self._bandwidth_inputs()
        return {
            **{k: v for k, v in given.items() if k not in inputs},
            key: self.scale_bandwidth(resolved[key], factor),
        }

    def resolve(self, params: dict, X: Any, view: int, mean_distance: MeanDistance) -> dict:
        """The parameters used to evaluate the kernel, defaults resolved on the training
        rows ``X`` (``mean_distance`` gives their mean pairwise distance)."""
        return dict(params)

    def gram(self, X: Any, Z: Any, p: dict) -> np.ndarray:
        """Kernel matrix ``(k(x_i, z_j))_{ij}`` with the resolved parameters ``p``."""
        raise NotImplementedError

    def diag(self, X: Any, p: dict) -> np.ndarray:
        """``k(x_i, x_i)`` for every row, without building the full matrix."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"KernelFamily({self.name!r})"


class Gaussian(KernelFamily):
    """``exp(-gamma ||x - z||^2)``, ``gamma = 1 / (2 sigma^2)``; default ``sigma``: the mean
    pairwise Euclidean distance of the training rows (the MVML paper, Sec. 4.2)."""

    name, aliases = "rbf", ("gaussian",)
    params = {"gamma": positive_real_or_none, "sigma": positive_real_or_none}
    bandwidth_distance, bandwidth_param = "euclidean", "gamma"
    bandwidth_inputs = ("gamma", "sigma")

    def check_params(self, params: dict, view: int) -> None:
        super().check_params(params, view)
        if {"gamma", "sigma"} <= set(params):
            raise ValueError(
                f"view {view}: give either gamma or sigma for the rbf kernel, not both"
            )

    def resolve(self, params: dict, X: Any, view: int, mean_distance: MeanDistance) -> dict:
        if params.get("sigma") is not None:
            return {"gamma": 1.0 / (2.0 * float(params["sigma"]) ** 2)}
        if params.get("gamma") is not None:
            return {"gamma": float(params["gamma"])}
        sigma = mean_distance("euclidean")
        if sigma <= 0:
            raise ValueError(
                f"view {view}: all training points are identical; the default "
                "Gaussian bandwidth (mean pairwise distance) is 0. Set gamma."
            )
        return {"gamma": 1.0 / (2.0 * sigma**2)}

    def gram(self, X: Any, Z: Any, p: dict) -> np.ndarray:
        if type(X) is np.ndarray and type(Z) is np.ndarray:
            return gaussian_gram(X, Z, p["gamma"])
        return rbf_kernel(X, Z, gamma=p["gamma"])

    def diag(self, X: Any, p: dict) -> np.ndarray:
        return np.ones(X.shape[0])


class Laplacian(KernelFamily):
    """``exp(-gamma ||x - z||_1)``; default ``gamma``: 1 / the mean pairwise L1 distance."""

    name = "laplacian"
    params = {"gamma": positive_real_or_none}
    bandwidth_distance, bandwidth_param = "cityblock", "gamma"

    def resolve(self, params: dict, X: Any, view: int, mean_distance: MeanDistance) -> dict:
        if params.get("gamma") is not None:
            return dict(params)
        dist = mean_distance("cityblock")
        if dist <= 0:
            raise ValueError(f"view {view}: all training points are identical; set gamma.")
        return {"gamma": 1.0 / dist}

    def gram(self, X: Any, Z: Any, p: dict) -> np.ndarray:
        return laplacian_kernel(X, Z, gamma=p["gamma"])

    def diag(self, X: Any, p: dict) -> np.ndarray:
        return np.ones(X.shape[0])


class Linear(KernelFamily):
    """``<x, z>``."""

    name = "linear"

    def gram(self, X: Any, Z: Any, p: dict) -> np.ndarray:
        return linear_kernel(X, Z)

    def diag(self, X: Any, p: dict) -> np.ndarray:
        return row_sq_norms(X)


class Polynomial(KernelFamily):
    """``(gamma <x, z> + coef0)^degree``; defaults ``gamma = 1 / n_features``, ``coef0 = 1``,
    ``degree = 3``."""

    name, aliases = "poly", ("polynomial",)
    params = {"gamma": positive_real_or_none, "coef0": finite_real, "degree": positive_int}

    def resolve(self, params: dict, X: Any, view: int, mean_distance: MeanDistance) -> dict:
        return {
            "gamma": float(params.get("gamma") or 1.0 / X.shape[1]),
            "coef0": float(params.get("coef0", 1.0)),
            "degree": int(params.get("degree", 3)),
        }

    def gram(self, X: Any, Z: Any, p: dict) -> np.ndarray:
        return polynomial_kernel(X, Z, degree=p["degree"], gamma=p["gamma"], coef0=p["coef0"])

    def diag(self, X: Any, p: dict) -> np.ndarray:
        return (p["gamma"] * row_sq_norms(X) + p["coef0"]) ** p["degree"]


class Precomputed(KernelFamily):
    """The view *is* the kernel matrix (n x n at fit, n_test x n_train at predict)."""

    name = "precomputed"

    def gram(self, X: Any, Z: Any, p: dict) -> np.ndarray:
        raise RuntimeError("a precomputed kernel cannot be evaluated on raw data")

    def diag(self, X: Any, p: dict) -> np.ndarray:
        raise RuntimeError("the diagonal of a precomputed kernel comes with the matrix")


#: the named kernels, in the order error messages list them
KERNEL_FAMILIES: dict[str, KernelFamily] = {
    family.name: family
    for family in (Gaussian(), Laplacian(), Linear(), Polynomial(), Precomputed())
}


class RegistryNames(Sequence[str]):
    """A tuple-like list of kernel names read from :data:`KERNEL_FAMILIES` at every use,
    so that a family registered there (``KERNEL_FAMILIES[f.name] = f``) is seen by every
    module that imported the names, with no other code.

    Examples
    --------
    >>> BANDWIDTH_KERNELS == ("rbf", "laplacian"), "rbf" in BANDWIDTH_KERNELS
    (True, True)
    """

    def __init__(self, select: Callable[[KernelFamily], tuple[str, ...]]):
        self._select = select

    def _names(self) -> tuple[str, ...]:
        return tuple(n for f in KERNEL_FAMILIES.values() for n in self._select(f))

    def __getitem__(self, i: Any) -> Any:
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, list, RegistryNames)):
            return self._names() == tuple(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._names())


#: every accepted name (canonical names and aliases)
KERNEL_NAMES = RegistryNames(lambda f: (f.name, *f.aliases))
#: kernels evaluated on sparse views without densifying them
SPARSE_KERNELS = RegistryNames(lambda f: (f.name,) if f.takes_sparse else ())
#: kernels with a data-driven bandwidth (which the CV estimators' factors scale)
BANDWIDTH_KERNELS = RegistryNames(lambda f: (f.name,) if f.bandwidth_distance is not None else ())


def kernel_family(name: Any) -> KernelFamily | None:
    """The family of a kernel name (case-insensitive, aliases too); None otherwise."""
    if not isinstance(name, str):
        return None
    name = name.lower()
    for family in KERNEL_FAMILIES.values():
        if name == family.name or name in family.aliases:
            return family
    return None


def kernel_takes_sparse(kernel: Any) -> bool:
    """Whether a ``kernel`` parameter (a name, a callable or a list of them) takes sparse
    views: the value of the scikit-learn tag ``input_tags.sparse`` of the estimators."""
    names = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel]
    families = [kernel_family(k) for k in names]
    return all(f is not None and f.takes_sparse for f in families)


def names_precomputed(kernel: Any) -> bool:
    """Whether a ``kernel`` parameter (a name, a callable or a list of them) names
    precomputed Gram matrices for some view (no columns to scale or subsample).

    Examples
    --------
    >>> names_precomputed(["rbf", "precomputed"]), names_precomputed("rbf")
    (True, False)
    """
    names = kernel if isinstance(kernel, (list, tuple)) else [kernel]
    return any(isinstance(k, str) and k == "precomputed" for k in names)


def check_kernel_takes_sparse(kernel_name: str, view: int) -> None:
    """``TypeError`` if a view's kernel cannot be evaluated on a sparse view."""
    family = kernel_family(kernel_name)
    if family is None or not family.takes_sparse:
        raise TypeError(
            f"view {view} is a sparse matrix, but its kernel ({kernel_name}) is not one "
            f"that takes sparse views ({', '.join(SPARSE_KERNELS)}); call .toarray() first "
            "or use one of those kernels"
        )
