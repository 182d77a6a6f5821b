"""The MVML estimators: Algorithm 1 of the paper (:class:`_BaseMVML`),
:class:`MVMLRegressor` and :class:`MVMLClassifier`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._threads import serial_blas
from .._validation import (
    check_precomputed_kernel,
    check_real_targets,
    check_targets_finite,
    check_views,
    is_dask_collection,
    validate_array_input,
)
from ..kernels import make_view_kernels
from ..nystrom import (
    BlockNystrom,
    default_chunk_size,
    map_views,
    resolve_n_landmarks,
)
from ..nystrom._map import _check_known_lengths
from ._bandwidth import resolve_bandwidths
from ._joint import joint_kernel_spec, joint_views
from ._lowrank import SharedSpectrum, dense_metric_path, fixed_metric_solve
from ._metric import (
    LEARNED_METRICS,
    METRICS,
    PSDFactor,
    _sym,
    cov_metric_full,
    cov_metric_nystrom,
    least_squares_weights,
    metric_penalty,
    metric_step,
    min_eigenvalue,
)
from ._problem import MVMLProblem

#: ``n_landmarks="auto"``: landmarks per view ``p = min(n, ceil(AUTO_FEATURE_BUDGET / v))``,
#: i.e. about 600 Nystrom features in all (``v p``) whatever the number of views
AUTO_FEATURE_BUDGET = 600


def auto_n_landmarks(n_samples: int, n_views: int) -> int:
    """Landmarks per view chosen by ``n_landmarks="auto"``.

    ``p = min(n, ceil(600 / v))``: every sample is a landmark while ``n <= 600 / v`` (the
    Nystrom map is then exact, ``U_l U_l^T = K_l`` up to the eigenvalue floor), else a
    budget of about 600 features in all, so that a fit costs one ``O(n (vp)^2)`` pass over
    the data and one ``(vp) x (vp)`` eigendecomposition whatever ``n`` is.
    """
    return int(min(n_samples, -(-AUTO_FEATURE_BUDGET // max(1, n_views))))


def _mvml_constraints() -> dict:
    return {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, None, closed="left")],
        "metric": [StrOptions(set(METRICS))],
        "learn_weights": ["boolean"],
        "n_landmarks": [
            StrOptions({"auto"}),
            None,
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="right"),
        ],
        "landmarks": [StrOptions({"uniform", "kmeans++"})],
        "kernel": [str, callable, list, tuple],
        "kernel_params": [dict, list, tuple, None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "step_size": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "n_a_steps": [Interval(Integral, 1, None, closed="left")],
        "sparse_threshold": [StrOptions({"mu_eta", "eta"})],
        "eig_floor": [Interval(Real, 0, 1, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "views": "no_validation",
        "random_state": ["random_state"],
        "solver": [StrOptions({"auto", "dense"})],
        "bandwidth_factor": [Interval(Real, 0, None, closed="neither")],
        "joint_view": ["boolean"],
    }


# ============================================================================ estimators
def _dask_column(y: Any) -> Any:
    """A Dask target as 1-D (an (n, 1) column is raveled with sklearn's warning)."""
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        return y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got a Dask array of shape {y.shape}")
    return y


class _BaseMVML(BaseEstimator):
    """Shared MVML machinery (Algorithm 1 of the paper, both versions a and b).

    Subclasses choose the targets (regression: y; classification: one-vs-all +-1
    columns) and may replace the loss through the hooks:

    ``_g_step(problem, t, factor, w, state) -> g``
        Minimise the data loss plus ``alpha <g, A^+ g>`` over ``g`` for target column
        ``t``, metric ``A = factor.F @ factor.F.T`` (:class:`PSDFactor`) and weights ``w``.
        Square loss here (eq. 8 by push-through / eq. 15 by sufficient statistics).
        ``state`` is a per-target dict kept across outer iterations (warm starts).
    ``_data_loss(problem, t, g, w) -> float``
        The data term of the objective (square loss here), used for ``objective_``
        and the stopping rule.
    ``_w_step(problem, t, g, w) -> w``
        View weights for fixed ``g`` and ``A`` (least squares, eq. 10 / 17, here).

    The A-step (:func:`metric_step`), the metric variants and the stopping rule do
    not depend on the loss and are reused unchanged.
    """

    def __init__(
        self,
        alpha: float = 1.0,
        eta: float = 1.0,
        metric: str = "dense",
        learn_weights: bool = False,
        n_landmarks: int | float | str | None = "auto",
        landmarks: str = "uniform",
        kernel: Any = "rbf",
        kernel_params: Any = None,
        max_iter: int = 10,
        tol: float | None = None,
        step_size: float | str = "auto",
        n_a_steps: int = 1,
        sparse_threshold: str = "mu_eta",
        eig_floor: float = 1e-10,
        chunk_size: int | None = None,
        views: Any = None,
        random_state: Any = None,
        solver: str = "auto",
        bandwidth_factor: float = 4.0,
        joint_view: bool = False,
    ):
        self.alpha = alpha
        self.eta = eta
        self.metric = metric
        self.learn_weights = learn_weights
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.max_iter = max_iter
        self.tol = tol
        self.step_size = step_size
        self.n_a_steps = n_a_steps
        self.sparse_threshold = sparse_threshold
        self.eig_floor = eig_floor
        self.chunk_size = chunk_size
        self.views = views
        self.random_state = random_state
        self.solver = solver
        self.bandwidth_factor = bandwidth_factor
        self.joint_view = joint_view

    _parameter_constraints: dict = _mvml_constraints()

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags

    # ------------------------------------------------------------------ params
    def _check_params(self) -> None:
        """Checks that the declarative constraints cannot express (run once, at fit,
        after :meth:`_validate_params`)."""
        if self.metric in LEARNED_METRICS and not self.eta > 0:
            raise ValueError(
                f"eta must be > 0 for a learned metric (metric={self.metric!r}), got {self.eta!r}"
            )
        for name in ("alpha", "eta", "tol", "eig_floor", "step_size"):
            val = getattr(self, name)
            if isinstance(val, Real) and not isinstance(val, bool) and not np.isfinite(float(val)):
                raise ValueError(f"{name} must be finite, got {val!r}")

    # ------------------------------------------------------------------ fitting
    def _build_problem(self, X: Any, Y: np.ndarray) -> MVMLProblem:
        """Validate the views, fit kernels / Nystrom map, build the problem data.

        Dask views and/or targets (Nystrom mode only): the Nystrom map is fitted from
        sampled rows and ``C``, ``c``, ``y^T y`` come from one Dask reduction
        (:meth:`BlockNystrom.moments`); ``Y`` stays lazy.
        """
        _check_known_lengths(X)
        Xs = check_views(X, views=self.views, ensure_min_samples=2)
        n = Xs[0].shape[0]
        dask_input = any(is_dask_collection(Xv) for Xv in Xs) or is_dask_collection(Y)
        if is_dask_collection(Y) and np.isnan(Y.shape[0]):
            raise ValueError(
                "y is a Dask array with unknown chunk sizes; call y.compute_chunk_sizes() first"
            )
        if Y.shape[0] != n:
            raise ValueError(f"y has {Y.shape[0]} samples but the views have {n}")
        n_input_views = len(Xs)
        kernel, kernel_params = self.kernel, self.kernel_params
        if self.joint_view:  # one more view: all views together (see _joint.py)
            Xs = joint_views(Xs, kernel)
            kernel, kernel_params = joint_kernel_spec(kernel, kernel_params, n_input_views)
        v = len(Xs)
        kernel_params = resolve_bandwidths(
            kernel, kernel_params, Xs, self.bandwidth_factor, self.random_state
        )
        self.kernel_params_ = kernel_params
        if self.n_landmarks is None:
            kernels = make_view_kernels(kernel, kernel_params, v)
            if dask_input:
                raise ValueError(
                    f"{type(self).__name__}: Dask input needs the Nystrom mode; "
                    "n_landmarks=None is the full-kernel mode, which builds the n x n "
                    "kernel matrices in memory. Set n_landmarks (e.g. 200 or 0.1)."
                )
            if kernels[0].precomputed:
                Xs = [check_precomputed_kernel(K, i) for i, K in enumerate(Xs)]
            rng = check_random_state(self.random_state)
            for Xv, kern in zip(Xs, kernels):
                kern.fit(Xv, random_state=rng)
            Ks = [Xv if kern.precomputed else kern(Xv, Xv) for Xv, kern in zip(Xs, kernels)]
            Ks = [_sym(K) for K in Ks]
            self.kernels_ = kernels
            self.X_fit_ = None if kernels[0].precomputed else Xs
            self.nystrom_ = None
            self.n_features_view_ = [Xv.shape[1] for Xv in Xs]
            self.n_landmarks_ = None
            return MVMLProblem("full", n, v, n, Y, Ks=Ks)
        n_landmarks = self.n_landmarks
        if isinstance(n_landmarks, str):  # "auto" (validated by _parameter_constraints)
            n_landmarks = auto_n_landmarks(n, n_input_views)
        nys = BlockNystrom(
            kernel=kernel,
            kernel_params=kernel_params,
            n_landmarks=n_landmarks,
            landmarks=self.landmarks,
            eig_floor=self.eig_floor,
            chunk_size=self.chunk_size,
            views=None,
            random_state=self.random_state,
        )
        with serial_blas(resolve_n_landmarks(n_landmarks, n)):  # p x p eighs
            nys.fit(Xs)
        mom = nys.moments(Xs, Y)
        self.nystrom_ = nys
        self.n_landmarks_ = int(nys.n_landmarks_)
        self.kernels_ = nys.kernels_
        self.X_fit_ = None
        self.n_features_view_ = list(nys.n_features_view_)
        return MVMLProblem.from_moments(mom, nys, Y, Xs=Xs)

    def _initial_metric(self, problem: MVMLProblem) -> np.ndarray:
        """``A0``: identity for learned and identity metrics, the Cov metric for "cov"."""
        if self.metric == "cov":
            if problem.mode == "full":
                return cov_metric_full(problem.Ks)
            return cov_metric_nystrom(
                problem.gram,
                problem.feature_sum,
                problem.n_samples,
                problem.n_views,
                scatter=problem.feature_scatter,
            )
        return np.eye(problem.dim)

    # -- hooks (square loss) ---------------------------------------------------
    def _g_step(
        self, problem: MVMLProblem, t: int, factor: PSDFactor, w: np.ndarray, state: dict
    ) -> np.ndarray:
        """Square-loss g-step for target column ``t`` (override for another loss).

        Full mode, eq. (8) by the push-through identity (an n x n solve):
        ``g = A P^T (P A P^T + alpha I_n)^{-1} y`` with ``P = W H``; with ``A = F F^T``
        this is ``g = F (P F)^T beta``, ``(P F)(P F)^T + alpha I`` factored by Cholesky.

        Nystrom mode, eq. (15) from the sufficient statistics:
        ``g~ = F (F^T M F + alpha I)^{-1} F^T b``, ``M = D_w C D_w``, ``b = D_w c``
        (valid for any factor ``A~ = F F^T``, also of a singular metric; ``O((vp)^3)``).
        Both forms are valid for a singular PSD ``A`` (``g`` then lies in its range).
        """
        F = factor.F
        if problem.mode == "full":
            PF = problem.design(w) @ F
            G = PF @ PF.T
            G[np.diag_indices_from(G)] += self.alpha
            beta = linalg.cho_solve(
                linalg.cho_factor(G, lower=True, check_finite=False),
                problem.Y[:, t],
                check_finite=False,
            )
            return F @ (PF.T @ beta)
        M, B = problem.weighted_statistics(w)
        b = B[t]
        S = _sym(F.T @ M @ F)
        S[np.diag_indices_from(S)] += self.alpha
        x = linalg.cho_solve(
            linalg.cho_factor(S, lower=True, check_finite=False), F.T @ b, check_finite=False
        )
        return F @ x

    def _data_loss(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> float:
        """Square loss ``||y - W H g||^2`` (Nystrom: ``y^T y - 2 b^T g + g^T M g``)."""
        if problem.mode == "full":
            r = problem.Y[:, t] - problem.design(w) @ g
            return float(r @ r)
        if problem.target_sq is not None:
            yy = float(problem.target_sq[t])
        else:
            y = np.asarray(problem.Y[:, t])
            yy = float(y @ y)
        d = problem.weight_vector(w)
        dg = d * g
        val = yy - 2.0 * float(problem.cross[:, t] @ dg) + float(dg @ problem.gram @ dg)
        return max(val, 0.0)

    def _w_step(self, problem: MVMLProblem, t: int, g: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Least-squares view weights with ``sum w = 1``, eq. (10) / (17) (see
        :func:`least_squares_weights` for why the scale is fixed)."""
        ZtZ, Zty = problem.view_moments(g, t)
        return least_squares_weights(ZtZ, Zty)

    # -- algorithm 1 -------------------------------------------------------------
    def _objective(
        self,
        problem: MVMLProblem,
        t: int,
        A: np.ndarray,
        factor: PSDFactor,
        g: np.ndarray,
        w: np.ndarray,
    ) -> float:
        val = self._data_loss(problem, t, g, w) + self.alpha * factor.quad(g)
        if self.metric in LEARNED_METRICS:
            val += self.eta * metric_penalty(A, self.metric, problem.n_views)
        return val

    def _initial_step(self, A: np.ndarray, factor: PSDFactor, g: np.ndarray) -> float:
        """``step_size="auto"``: the first A-step moves A by at most ``||A||_F``.

        ``mu0 = ||A||_F / ||grad||_F`` with ``grad`` the gradient of the smooth part
        (capped by ``0.499 / eta`` in the dense case, inside :func:`metric_step`).
        """
        if not (isinstance(self.step_size, str) and self.step_size == "auto"):
            return float(self.step_size)
        q = factor.solve(g)
        grad = -self.alpha * np.outer(q, q)
        if self.metric == "dense":
            grad = grad + 2.0 * self.eta * A
        gn = float(np.linalg.norm(grad))
        return float(np.linalg.norm(A)) / gn if gn > 0 else 1.0 / self.eta

    def _fit_target(
        self, problem: MVMLProblem, t: int, A0: np.ndarray, record_path: bool = False
    ) -> dict:
        """Alternate g-, w- and A-steps for target column ``t`` (Algorithm 1).

        The dense reference path. With ``record_path``, ``path[k]`` is the g-step
        solution for the metric after ``k + 1`` outer iterations (the final ``g`` of a
        fit with ``max_iter = k + 1``, ``tol=None``), with its weights ``path_w[k]``.
        """
        path: list[np.ndarray] = []
        path_w: list[np.ndarray] = []
        v = problem.n_views
        learned = self.metric in LEARNED_METRICS
        A = A0.copy()
        factor = PSDFactor(A, eig_floor=self.eig_floor)
        w = np.full(v, 1.0 / v)
        state: dict = {}
        history: list[float] = []
        mu_next: float | None = None
        n_iter = 0
        converged = not learned and not self.learn_weights
        for it in range(self.max_iter):
            n_iter = it + 1
            g = self._g_step(problem, t, factor, w, state)
            if it > 0:
                path.append(g)
                path_w.append(w)
            if self.learn_weights:
                w = self._w_step(problem, t, g, w)
            if learned:
                for _ in range(self.n_a_steps):
                    mu0 = self._initial_step(A, factor, g) if mu_next is None else mu_next
                    A, factor, mu = metric_step(
                        A,
                        factor,
                        g,
                        self.alpha,
                        self.eta,
                        self.metric,
                        v,
                        mu0,
                        threshold=self.sparse_threshold,
                        eig_floor=self.eig_floor,
                    )
                    if mu > 0:  # next step starts from twice the accepted one
                        mu_next = 2.0 * mu
                    else:
                        mu_next = None if mu_next is None else 0.5 * mu_next
            history.append(self._objective(problem, t, A, factor, g, w))
            if not learned and not self.learn_weights:
                break
            if (
                self.tol is not None
                and len(history) > 1
                and abs(history[-2] - history[-1])
                <= self.tol * max(abs(history[-2]), np.finfo(float).tiny)
            ):
                converged = True
                break
        # final g-step: coef_ is the exact minimiser for the returned metric and weights
        if learned or self.learn_weights:
            g = self._g_step(problem, t, factor, w, state)
            history.append(self._objective(problem, t, A, factor, g, w))
        path.append(g)
        path_w.append(w)
        out = dict(
            A=A,
            g=g,
            w=w,
            history=np.asarray(history),
            n_iter=n_iter,
            converged=converged,
            state=state,
        )
        if record_path:
            out["path"] = np.asarray(path)
            out["path_w"] = np.asarray(path_w)
        return out

    def _structured_applies(self, problem: MVMLProblem) -> bool:
        """Whether the structured solver (:mod:`mvkernels.mvml._lowrank`) runs this fit.

        It needs the square loss (no overridden ``_g_step``), Nystrom mode, fixed view
        weights, and a dense learned metric started at ``A~ = I`` or a fixed metric.
        Other fits (sparse metric, learned weights, full kernels, hinge loss) take the
        dense reference path, which is also what ``solver="dense"`` forces.
        """
        return (
            self.solver == "auto"
            and problem.mode == "nystrom"
            and not self.learn_weights
            and self.metric in ("dense", "identity", "cov")
            and type(self)._g_step is _BaseMVML._g_step
            and type(self)._data_loss is _BaseMVML._data_loss
        )

    def _fit_structured(
        self, problem: MVMLProblem, A0: np.ndarray, record_path: bool = False
    ) -> list[dict]:
        """All target columns at once with the shared factorisation (same results as
        :meth:`_fit_target`, see :mod:`mvkernels.mvml._lowrank`)."""
        v, T = problem.n_views, problem.n_targets
        w = np.full(v, 1.0 / v)
        M, B = problem.weighted_statistics(w)
        yy = np.asarray(problem.target_sq, dtype=np.float64)
        if self.metric in ("identity", "cov"):
            factor = PSDFactor(A0, eig_floor=self.eig_floor)
            G = fixed_metric_solve(M, factor.F, B, np.array([self.alpha]))[0]
            out = []
            for t in range(T):
                g = G[t]
                obj = self._data_loss(problem, t, g, w) + self.alpha * factor.quad(g)
                out.append(
                    dict(
                        A=A0,
                        g=g,
                        w=w,
                        history=np.array([obj]),
                        n_iter=1,
                        converged=True,
                        state={},
                        path=g[None],
                        path_w=w[None],
                    )
                )
            return out
        spec = SharedSpectrum.from_matrix(M)
        path = dense_metric_path(
            spec.lam,
            spec.rotate(B),
            yy,
            np.full(T, float(self.alpha)),
            np.full(T, float(self.eta)),
            max_iter=self.max_iter,
            n_a_steps=self.n_a_steps,
            tol=self.tol,
            step_size=self.step_size,
            record_path=record_path,
        )
        G = spec.unrotate(path.G)
        out = [
            dict(
                A=path.metric(spec.Q, t),
                g=G[t],
                w=w,
                history=path.history[t],
                n_iter=int(path.n_iter[t]),
                converged=bool(path.converged[t]),
                state={},
                min_eig=path.min_eigenvalue(t),
            )
            for t in range(T)
        ]
        if record_path:
            P = spec.unrotate(path.path)
            for t in range(T):
                out[t]["path"] = P[t, : out[t]["n_iter"]]
                out[t]["path_w"] = np.tile(w, (out[t]["n_iter"], 1))
        return out

    def _solve(self, problem: MVMLProblem, record_path: bool = False) -> list[dict]:
        """Run Algorithm 1 on ``problem`` for every target column; sets ``solver_``."""
        with serial_blas(problem.dim):
            A0 = self._initial_metric(problem)
            if self._structured_applies(problem):
                self.solver_ = "structured"
                return self._fit_structured(problem, A0, record_path)
            self.solver_ = "dense"
            return [self._fit_target(problem, t, A0, record_path) for t in range(problem.n_targets)]

    def _fit_targets(self, X: Any, Y: np.ndarray) -> _BaseMVML:
        """Fit one independent MVML problem per column of ``Y`` (shared kernels / C)."""
        self._check_params()
        problem = self._build_problem(X, Y)
        results = self._solve(problem)
        with serial_blas(problem.dim):
            min_eigs = np.array(
                [r["min_eig"] if "min_eig" in r else min_eigenvalue(r["A"]) for r in results]
            )
        learned = self.metric in LEARNED_METRICS or self.learn_weights
        if learned and self.tol is not None and not all(r["converged"] for r in results):
            warnings.warn(
                f"{type(self).__name__} stopped after max_iter={self.max_iter} outer "
                f"iterations before the relative objective decrease fell below tol={self.tol}",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._metrics = np.stack([r["A"] for r in results])
        self._coefs = np.stack([r["g"] for r in results])
        self._weights = np.stack([r["w"] for r in results])
        self._histories = [r["history"] for r in results]
        self._n_iters = np.array([r["n_iter"] for r in results])
        self._min_eigs = min_eigs
        self.n_views_ = problem.n_views
        self.mode_ = problem.mode
        self.n_samples_fit_ = problem.n_samples
        self._fit_states = [r["state"] for r in results]
        if np.any(self._min_eigs < -1e-8 * np.abs(self._metrics).max()):
            warnings.warn(
                f"the learned metric is indefinite (smallest eigenvalue "
                f"{self._min_eigs.min():.3g}); see metric_min_eigenvalue_",
                RuntimeWarning,
                stacklevel=2,
            )
        self._set_public_attributes()
        return self

    def _set_public_attributes(self) -> None:
        single = self._coefs.shape[0] == 1
        self.metric_ = self._metrics[0] if single else self._metrics
        self.coef_ = self._coefs[0] if single else self._coefs
        self.weights_ = self._weights[0] if single else self._weights
        self.objective_ = self._histories[0] if single else list(self._histories)
        self.n_iter_ = int(self._n_iters[0]) if single else self._n_iters
        self.metric_min_eigenvalue_ = float(self._min_eigs[0]) if single else self._min_eigs

    # ------------------------------------------------------------------ prediction
    def _decision_block(self, classes: np.ndarray | None = None) -> _MVMLOutputs:
        """The fitted model's row-wise output function (picklable, small)."""
        T = self._coefs.shape[0]
        if self.mode_ == "nystrom":
            p = self.nystrom_.n_landmarks_
            Gw = self._coefs * np.repeat(self._weights, p, axis=1)  # (T, vp)
            return _MVMLOutputs(Gw=Gw, nystrom=self.nystrom_, classes=classes)
        n = self.n_samples_fit_
        G = self._coefs.reshape(T, self.n_views_, n) * self._weights[:, :, None]
        return _MVMLOutputs(Gw=G, kernels=self.kernels_, X_fit=self.X_fit_, classes=classes)

    def _check_test_views(self, X: Any) -> list:
        check_is_fitted(self, "_coefs")
        _check_known_lengths(X)
        X = validate_array_input(self, X, reset=False)
        joint = bool(self.joint_view)
        if self.mode_ == "nystrom":  # the same container rules as at fit
            if not joint:
                return self.nystrom_.check_views(check_views(X, views=self.views))
            Xs = check_views(
                X, views=self.views, n_views=self.n_views_ - 1, n_features=self._input_widths()
            )
            return self.nystrom_.check_views(joint_views(Xs, self.kernel))
        n_in = self.n_views_ - joint
        Xs = check_views(
            X,
            views=self.views,
            n_views=n_in,
            n_features=None if self.X_fit_ is None else self.n_features_view_[:n_in],
        )
        if self.X_fit_ is None:  # precomputed (Dask cross-kernels: shape checked only)
            n = self.n_samples_fit_
            out = []
            for i, K in enumerate(Xs):
                if is_dask_collection(K):
                    if K.shape[1] != n:
                        raise ValueError(
                            f"view {i}: precomputed test kernel must have one column per "
                            f"training sample ({n}), got shape {K.shape}"
                        )
                    out.append(K)
                else:
                    out.append(check_precomputed_kernel(K, i, n_train=n, square=False))
            Xs = out
        return joint_views(Xs, self.kernel) if joint else Xs

    def _input_widths(self) -> list | None:
        """Column counts of the input views (without the joint view), None if precomputed."""
        if self.kernels_[0].precomputed:
            return None
        return list(self.n_features_view_[: self.n_views_ - bool(self.joint_view)])

    def _decision(self, X: Any, classes: np.ndarray | None = None) -> Any:
        """Outputs ``sum_l w_l f^l(x)`` for every target, shape (n_test, T).

        With ``classes``: the predicted labels instead, shape (n_test,). On Dask views
        (chunked by rows) the result is a lazy Dask array with the views' row chunks,
        computed block by block on the workers (:func:`mvkernels.nystrom.map_views`).
        """
        Xs = self._check_test_views(X)
        fn = self._decision_block(classes)
        if any(is_dask_collection(Xv) for Xv in Xs):
            if classes is None:
                return map_views(fn, Xs, n_out=self._coefs.shape[0])
            return map_views(fn, Xs, n_out=None, dtype=classes.dtype)
        return fn(Xs)


@dataclass
class _MVMLOutputs:
    """Row-wise output function of a fitted MVML model: ``(rows of each view) -> outputs``.

    Holds only what prediction needs (weighted coefficients, feature map or training
    views) so that it can be shipped once to Dask workers. ``Gw``: ``(T, vp)``
    ``g~_t * w`` (Nystrom) or ``(T, v, n)`` ``g_t,l * w_t,l`` (full). With ``classes``
    it returns labels (binary: ``classes[1]`` where the output is > 0; else argmax).
    """

    Gw: np.ndarray
    nystrom: BlockNystrom | None = None
    kernels: list | None = None
    X_fit: list | None = None
    classes: np.ndarray | None = None

    def outputs(self, blocks: list) -> np.ndarray:
        m = blocks[0].shape[0]
        T = self.Gw.shape[0]
        out = np.empty((m, T))
        if self.nystrom is not None:
            for rows, U in self.nystrom.iter_features(blocks):
                out[rows] = U @ self.Gw.T
            return out
        n = self.Gw.shape[2]
        chunk = default_chunk_size(n)
        for start in range(0, m, chunk):
            rows = slice(start, min(m, start + chunk))
            acc = np.zeros((rows.stop - rows.start, T))
            for l, (Xv, kern) in enumerate(zip(blocks, self.kernels)):
                Kt = Xv[rows] if self.X_fit is None else kern(Xv[rows], self.X_fit[l])
                acc += Kt @ self.Gw[:, l, :].T
            out[rows] = acc
        return out

    def __call__(self, blocks: list) -> np.ndarray:
        D = self.outputs(blocks)
        if self.classes is None:
            return D
        if D.shape[1] == 1:
            return self.classes[(D[:, 0] > 0).astype(int)]
        return self.classes[np.argmax(D, axis=1)]


class MVMLRegressor(RegressorMixin, _BaseMVML):
    """Multi-view metric learning regressor (Huusari et al. 2018).

    Learns a vector-valued function ``f = (f^1, ..., f^v)`` with the multi-view kernel
    ``K = H A H`` and predicts ``sum_l w_l f^l(x)``; the metric ``A`` between and
    within views is learned (``metric="dense"`` / ``"sparse"``) or fixed
    (``"identity"`` = MVML_I, ``"cov"`` = MVML_Cov). See ``docs/mvml.md``.

    Parameters
    ----------
    alpha : float, default=1.0
        The paper's lambda: weight of ``<g, A^+ g>`` (ridge on g).
    eta : float, default=1.0
        Metric penalty: ``eta ||A||_F^2`` (dense) or ``eta * sum_groups ||A_gamma||_F``
        (sparse). Unused for fixed metrics.
    metric : {"dense", "sparse", "identity", "cov"}, default="dense"
        Learned dense A (eq. 9), learned block-sparse A (eq. 12), fixed ``A = I``
        (MVML_I) or fixed cross-covariance metric (MVML_Cov, :func:`cov_metric_full`).
        In Nystrom mode the metric is ``A~`` (vp x vp), e.g. ``A~ = I`` for "identity".
    learn_weights : bool, default=False
        Learn the view weights ``w`` (eq. 10 / 17); otherwise ``w = 1/v``.
    n_landmarks : "auto", None, int or float in (0, 1], default="auto"
        ``"auto"``: block Nystrom with ``p = min(n, ceil(600 / v))`` landmarks per view
        (:func:`~mvkernels.mvml.auto_n_landmarks`; every sample while ``n <= 600 / v``,
        where the map is exact). None: full kernels (``O((nv)^3)`` per iteration and
        class, for small n). Otherwise the block Nystrom approximation with this many
        landmarks (or fraction of n), fitted from sufficient statistics.
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark strategy (:func:`mvkernels.nystrom.select_landmarks`).
    kernel : str, callable or list, default="rbf"
        One kernel for all views or one per view (:mod:`mvkernels.kernels`).
    kernel_params : dict, list of dict or None
        E.g. ``{"gamma": g}``; default Gaussian bandwidth = mean pairwise distance.
    max_iter : int, default=10
        Outer iterations of Algorithm 1 (g-step, w-step, A-steps).
    tol : float or None, default=None
        None: run exactly ``max_iter`` outer iterations (the early-stopped iterate is the
        model; ``max_iter`` and ``eta`` act as regularisers, chosen by
        :class:`~mvkernels.MVMLRegressorCV`). A number: stop when the relative decrease of
        the objective is below ``tol``, with a ``ConvergenceWarning`` if ``max_iter``
        comes first.
    step_size : "auto" or float, default="auto"
        Initial A-step size ``mu`` (then backtracked, see :func:`metric_step`).
    n_a_steps : int, default=1
        A-steps per outer iteration.
    sparse_threshold : {"mu_eta", "eta"}, default="mu_eta"
        Shrinkage threshold of the sparse proximal step (:func:`sparse_metric_update`).
    eig_floor : float, default=1e-10
        Relative eigenvalue floor for pseudo-inverses (Nystrom ``W^+`` and singular A).
    chunk_size : int or None
        Rows per chunk for Nystrom features and prediction.
    views : None or list
        How to cut a single 2-D array into views (:func:`mvkernels.check_views`).
    random_state : int, RandomState or None
        Landmarks and bandwidth subsampling.
    solver : {"auto", "dense"}, default="auto"
        ``"auto"``: the structured solver (:mod:`mvkernels.mvml._lowrank`: one
        eigendecomposition of ``D_w C D_w`` per fit, metric kept as ``s I + W W^T``) when
        the fit allows it (Nystrom mode, square loss, fixed weights, dense / identity / Cov
        metric), else the dense reference path; ``"dense"`` forces the reference path
        (``O((vp)^3)`` per outer iteration and class). Both give the same results to rounding.
    bandwidth_factor : float, default=4.0
        Multiplies the data-driven bandwidth parameter of Gaussian / Laplacian views whose
        ``gamma`` is not given: ``gamma_l = f / (2 sigma_l^2)``, ``sigma_l`` the mean
        pairwise distance of view ``l`` (1 is the papers' setting; 4, of the order of
        scikit-learn's ``gamma="scale"``, is what cross-validation picks most often).
        Ignored for given ``gamma`` / ``sigma`` and other kernels.
    joint_view : bool, default=False
        Append one view, all views together: the predictor ``sum_l w_l f^l(x_l)`` is
        additive over views (the metric couples the views' coefficients, not their
        inputs), the joint view's kernel on the concatenation (for Gaussian views a
        product of per-view kernels) models cross-view interactions. Its bandwidth comes
        from the same heuristic times ``bandwidth_factor``; it is the last view of the
        fitted model (``n_views_``, ``weights_``, ``kernel_params_``, the metric). A kernel
        list gives it ``"rbf"`` unless ``v + 1`` kernels are listed; precomputed kernels:
        the elementwise product of the view kernels (also at predict time). Needs at least
        2 views. Nystrom and full-kernel modes, NumPy and Dask views.

    Attributes
    ----------
    metric_ : ndarray (nv, nv) or (vp, vp)
        Learned / fixed metric ``A`` (full) or ``A~`` (Nystrom).
    metric_min_eigenvalue_ : float
        Smallest eigenvalue of ``metric_`` (>= 0 up to rounding: every accepted A-step
        is positive (semi-)definite; a RuntimeWarning is raised otherwise).
    coef_ : ndarray (nv,) or (vp,)
        ``g`` (full) or ``g~`` (Nystrom), the exact g-step solution for ``metric_``.
    weights_ : ndarray (v,)
    n_iter_ : int
        Outer iterations run.
    objective_ : ndarray
        Objective after each outer iteration (and after the final g-step).
    mode_ : {"full", "nystrom"}
    solver_ : {"structured", "dense"}
        The solver that ran (see ``solver``).
    n_landmarks_ : int or None
        Landmarks per view (None in full-kernel mode).
    kernel_params_ : list of dict or None
        The per-view kernel parameters used, with resolved bandwidths.
    nystrom_ : BlockNystrom or None
    kernels_ : list of ViewKernel
    n_views_ : int
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> MVMLRegressor:
        """Fit on views ``X`` (list of arrays, or one array cut by ``views``) and targets ``y``."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_array_input(self, X, reset=True)
        if is_dask_collection(y):  # stays lazy; NaN/inf are caught block by block
            y = _dask_column(y)
            if not np.issubdtype(y.dtype, np.number) or np.issubdtype(y.dtype, np.complexfloating):
                raise ValueError(f"y must hold real numbers, got dtype {y.dtype}")
            return self._fit_targets(X, y.astype(np.float64)[:, None])
        y = column_or_1d(check_real_targets(np.asarray(y)), warn=True)
        check_targets_finite(y)
        return self._fit_targets(X, y.reshape(-1, 1))

    def predict(self, X: Any) -> Any:
        """Predictions ``sum_l w_l f^l(x)`` (a lazy Dask array on Dask views)."""
        return self._decision(X)[:, 0]


class MVMLClassifier(ClassifierMixin, _BaseMVML):
    """Multi-view metric learning classifier: MVML on +-1 targets, one-vs-all.

    Binary problems are one MVML problem (``+1`` = ``classes_[1]``); with K > 2
    classes, K independent one-vs-all problems that share the kernels and, in Nystrom
    mode, the sufficient statistic ``C`` (only ``c`` changes). Prediction: the class
    with the largest output. Parameters as :class:`MVMLRegressor`.

    Attributes
    ----------
    classes_ : ndarray (K,)
    metric_, coef_, weights_, objective_, n_iter_, metric_min_eigenvalue_
        As :class:`MVMLRegressor` for a binary problem; with K > 2 classes, stacked
        per class: ``metric_`` (K, d, d), ``coef_`` (K, d), ``weights_`` (K, v),
        ``n_iter_`` and ``metric_min_eigenvalue_`` (K,), ``objective_`` a list of K arrays.
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> MVMLClassifier:
        """Fit on views ``X`` and class labels ``y``."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        X = validate_array_input(self, X, reset=True)
        if is_dask_collection(y):
            # classes by a Dask reduction; the +-1 targets stay lazy (one-hot per block)
            from ..nystrom._dask import require_dask

            da = require_dask()
            y = _dask_column(y)
            self.classes_ = np.asarray(da.unique(y).compute())
            check_classification_targets(self.classes_)
            self._check_n_classes()
            Y = self._encode_targets_lazy(y, self.classes_)
            return self._fit_targets(X, Y)
        y = column_or_1d(np.asarray(y), warn=True)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        self._check_n_classes()
        Y = self._encode_targets(yi, len(self.classes_))
        return self._fit_targets(X, Y)

    def _check_n_classes(self) -> None:
        if len(self.classes_) == 0:
            raise ValueError(f"{type(self).__name__}: y is empty (0 samples)")
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; y has only "
                f"one class: {self.classes_[0]}"
            )

    @staticmethod
    def _encode_targets_lazy(y: Any, classes: np.ndarray) -> Any:
        """:meth:`_encode_targets` for a 1-D Dask ``y``: a lazy (n, 1) or (n, K) Dask array."""
        from ..nystrom._dask import require_dask

        da = require_dask()
        if len(classes) == 2:
            return da.where(y == classes[1], 1.0, -1.0)[:, None]
        return da.where(y[:, None] == classes[None, :], 1.0, -1.0)

    @staticmethod
    def _encode_targets(yi: np.ndarray, n_classes: int) -> np.ndarray:
        """+-1 targets: one column (binary, +1 = classes_[1]) or one per class."""
        if n_classes == 2:
            return np.where(yi == 1, 1.0, -1.0)[:, None]
        Y = -np.ones((yi.shape[0], n_classes))
        Y[np.arange(yi.shape[0]), yi] = 1.0
        return Y

    def decision_function(self, X: Any) -> Any:
        """Outputs: shape (n,) for binary (positive = ``classes_[1]``), else (n, K).

        A lazy Dask array on Dask views.
        """
        D = self._decision(X)
        return D[:, 0] if D.shape[1] == 1 else D

    def predict(self, X: Any) -> Any:
        """Predicted class labels (a lazy Dask array on Dask views)."""
        check_is_fitted(self, "classes_")
        return self._decision(X, classes=self.classes_)
