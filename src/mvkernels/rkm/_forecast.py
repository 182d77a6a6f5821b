"""Recursive time-series forecasting with a two-view RKM (the paper's Sec. 5)."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import (
    BaseEstimator,
    _fit_context,
)
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._kpca import (
    FEATURE_KINDS,
    SOLVERS,
    STIEFEL_TRAINING_CONSTRAINTS,
    MultiViewKPCA,
)
from ._maps import _real_array


# --------------------------------------------------------------------------- forecaster
class RKMForecaster(BaseEstimator):
    """Nonlinear autoregression with a two-view RKM (the paper's Sec. 5 experiments).

    View x: the window of the ``lag`` most recent (standardised) values, oldest first;
    view y: the next value (linear kernel, identity features). Forecasting infers view y
    from view x by eq. (15)/(16) and slides the window (recursive forecast).

    Parameters
    ----------
    lag : int
        Window length. The authors' code feeds p + 1 values for the paper's lag p: the
        paper's settings are ``lag=41`` (sum of sines) and ``lag=71`` (SantaFe).
    n_components : int
    kernel : str or callable, default="linear"
        Kernel of the window view.
    kernel_params : dict or None
        E.g. ``{"sigma": 2.1856}`` for the rbf kernel.
    features : None or {"kernel", "identity", "rff", "nystrom"}
        Feature map of the window view (``None``: identity for linear, implicit otherwise).
        ``"rff"`` uses scikit-learn's ``RBFSampler(gamma=1/(2 sigma^2), n_components=
        n_features, random_state=random_state)``.
    n_features : int, default=1000
    solver : str, default="auto"
        See :class:`MultiViewKPCA`.
    rotate : bool, default=True
    rescale : bool, default=True
        ``False``: the paper's ablation without the primal rescaling (study only).
    learning_rate, tol, max_iter, optimizer, verbose :
        Stiefel settings, see :class:`MultiViewKPCA`.
    random_state : int, RandomState or None

    Attributes
    ----------
    model_ : MultiViewKPCA
        The fitted two-view model.
    mean_, scale_ : float
        Training mean and unbiased standard deviation used to standardise.
    last_window_ : ndarray (lag,)
        The last ``lag`` training values (original scale).
    See Also
    --------
    MultiViewKPCA : The multi-view RKM fitted on the two views.

    Examples
    --------
    >>> import numpy as np
    >>> from mvkernels import RKMForecaster
    >>> series = np.sin(0.3 * np.arange(200))
    >>> model = RKMForecaster(lag=10, n_components=2).fit(series)
    >>> print(np.round(model.forecast(3), 2))
    [-0.3  -0.57 -0.79]
    >>> print(np.round(np.sin(0.3 * np.arange(200, 203)), 2))  # the true continuation
    [-0.3  -0.57 -0.79]
    """

    _parameter_constraints: ClassVar[dict] = {
        "lag": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "kernel": [str, callable],
        "kernel_params": [dict, None],
        "features": [StrOptions(set(FEATURE_KINDS)), None],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
        **STIEFEL_TRAINING_CONSTRAINTS,
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        lag: int = 10,
        n_components: int = 2,
        kernel: Any = "linear",
        kernel_params: dict | None = None,
        features: str | None = None,
        n_features: int = 1000,
        solver: str = "auto",
        rotate: bool = True,
        rescale: bool = True,
        learning_rate: float = 0.5,
        tol: float = 1e-12,
        max_iter: int | None = None,
        optimizer: str = "lobpcg",
        verbose: int = 0,
        random_state: Any = None,
    ):
        self.lag = lag
        self.n_components = n_components
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.features = features
        self.n_features = n_features
        self.solver = solver
        self.rotate = rotate
        self.rescale = rescale
        self.learning_rate = learning_rate
        self.tol = tol
        self.max_iter = max_iter
        self.optimizer = optimizer
        self.verbose = verbose
        self.random_state = random_state

    def _model(self) -> MultiViewKPCA:
        return MultiViewKPCA(
            n_components=self.n_components,
            solver=self.solver,
            kernel=[self.kernel, "linear"],
            kernel_params=[self.kernel_params, None],
            features=[self.features, "identity"],
            n_features=[self.n_features, None],
            rotate=self.rotate,
            rescale=self.rescale,
            learning_rate=self.learning_rate,
            tol=self.tol,
            max_iter=self.max_iter,
            optimizer=self.optimizer,
            verbose=self.verbose,
            inference_ridge=0.0,  # the paper's eq. (15)/(16), as reproduced
            random_state=self.random_state,
        )

    @staticmethod
    def windows(z: np.ndarray, lag: int) -> tuple[np.ndarray, np.ndarray]:
        """Pairs (window of ``lag`` values, next value) of a 1-D series."""
        n = len(z) - lag
        idx = np.arange(lag)[None, :] + np.arange(n)[:, None]
        return z[idx], z[lag:, None]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, series: Any, y: Any = None) -> RKMForecaster:
        """Fit on a 1-D training series (``y`` ignored)."""
        z = _real_array(series, "series")
        if z.ndim == 2 and z.shape[1] == 1:
            z = z[:, 0]
        if z.ndim != 1:
            raise ValueError(f"series must be 1-D, got shape {z.shape}")
        if not np.isfinite(z).all():
            raise ValueError("series contains NaN or infinity")
        lag = self.lag
        if len(z) < lag + 3:
            raise ValueError(f"series has {len(z)} values; lag={lag} needs at least {lag + 3}")
        # mean and standard deviation of z / max|z|, scaled back: no overflow in the sums
        top = float(np.abs(z).max())
        u = z / top if top > 0 else z
        mean, scale = float(u.mean()) * top, float(u.std(ddof=1)) * top
        if not (np.isfinite(mean) and np.isfinite(scale)):
            raise ValueError(
                f"series values (max |z| = {top:.3g}) are too large to standardise in "
                "float64; rescale the series first"
            )
        self.mean_ = mean
        self.scale_ = scale
        if not self.scale_ > 0 or float(u.std(ddof=1)) <= 1e-14 * max(abs(float(u.mean())), 1e-300):
            raise ValueError("series is constant: it cannot be standardised")
        zs = (z - self.mean_) / self.scale_
        Xw, yv = self.windows(zs, lag)
        self.model_ = self._model().fit([Xw, yv])
        self.last_window_ = z[-lag:].copy()
        return self

    def predict(self, X: Any) -> np.ndarray:
        """One-step predictions for windows ``X`` (n, lag) on the original scale."""
        check_is_fitted(self, "model_")
        X = _real_array(X, "X")
        if X.ndim != 2 or X.shape[1] != self.lag:
            raise ValueError(f"X must have shape (n, lag={self.lag}), got {X.shape}")
        (y,) = self.model_.infer_views([(X - self.mean_) / self.scale_, None], missing=[1])
        return y[:, 0] * self.scale_ + self.mean_

    def forecast(self, h: int) -> np.ndarray:
        """Recursive forecast of the ``h`` values after the training series."""
        check_is_fitted(self, "model_")
        if isinstance(h, bool) or not isinstance(h, Integral) or h < 1:
            raise ValueError(f"h must be a positive int, got {h!r}")
        window = list((self.last_window_ - self.mean_) / self.scale_)
        out = np.empty(int(h))
        for t in range(int(h)):
            (y,) = self.model_.infer_views([np.asarray(window)[None, :], None], missing=[1])
            out[t] = y[0, 0]
            window = window[1:] + [out[t]]
        return out * self.scale_ + self.mean_
