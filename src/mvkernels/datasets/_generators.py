"""Generators and embedded data: the papers' synthetic sets, scikit-learn's digits as views.

No files are needed: everything is built in memory from a seed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "make_click_stream",
    "make_two_view_toy",
    "make_sum_of_sines",
    "make_multitask_regression",
    "load_digits_views",
]


def make_two_view_toy(
    n_samples: int = 400,
    noise: float = 0.1,
    shear: float = 0.5,
    angle: float = np.pi / 4,
    random_state: Any = None,
) -> tuple[list[np.ndarray], np.ndarray]:
    """Two-view toy classification set in the spirit of the MVML paper's Figure 1.

    View 1: two interleaved half moons (2-D) with Gaussian noise. View 2: the same
    points sheared (``x' = x + shear * y``) then rotated by ``angle``, with independent
    noise. Labels in {0, 1}. The views carry related but differently shaped
    information, which is what a learned between-view metric exploits.

    Parameters
    ----------
    n_samples : int, default=400
        Number of samples.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise of each view.
    shear : float, default=0.5
        Shear of view 2.
    angle : float, default=pi / 4
        Rotation of view 2 (radians).
    random_state : int, RandomState or None, default=None
        Seed of the noise and of the moons.

    Returns
    -------
    Xs : list of two ndarrays of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
    """
    from sklearn.datasets import make_moons

    rng = check_random_state(random_state)
    X1, y = make_moons(n_samples=n_samples, noise=noise, random_state=rng)
    S = np.array([[1.0, shear], [0.0, 1.0]])
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    X2 = X1 @ S.T @ R.T + noise * rng.standard_normal(X1.shape)
    return [X1, X2], y


def load_digits_views(*, return_X_y: bool = False) -> Any:
    """Embedded multi-view data: scikit-learn's handwritten digits cut into 3 views.

    Views (built by this function from the 8 x 8 images shipped with scikit-learn, pixel
    values scaled to [0, 1]): 0 = top half of the image (32 pixels), 1 = bottom half
    (32 pixels), 2 = row and column intensity profiles (16 values). Labels 0..9.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(Xs, y)``, the list of the 3 views and the labels, instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (the list of the 3 views, 1797 rows each), ``target`` (int64, 0..9),
        ``view_names`` (``["top", "bottom", "profiles"]``), ``target_names`` (0..9).
    (Xs, y) : tuple
        With ``return_X_y=True``.

    Examples
    --------
    >>> from mvkernels.datasets import load_digits_views
    >>> Xs, y = load_digits_views(return_X_y=True)
    >>> [X.shape for X in Xs], y.shape
    ([(1797, 32), (1797, 32), (1797, 16)], (1797,))
    >>> load_digits_views().view_names
    ['top', 'bottom', 'profiles']
    """
    from sklearn.datasets import load_digits
    from sklearn.utils import Bunch

    d = load_digits()
    images = d.images.astype(np.float64) / 16.0
    top = images[:, :4, :].reshape(len(images), -1)
    bottom = images[:, 4:, :].reshape(len(images), -1)
    profiles = np.hstack([images.mean(axis=2), images.mean(axis=1)])
    Xs, y = [top, bottom, profiles], d.target.astype(np.int64)
    if return_X_y:
        return Xs, y
    return Bunch(
        data=Xs,
        target=y,
        view_names=["top", "bottom", "profiles"],
        target_names=np.arange(10),
    )


def make_sum_of_sines(n_points: int = 500, step: float = 0.01) -> np.ndarray:
    """The RKM paper's series ``y(t) = sin(2 pi t) + 0.2 sin(40 pi t)``, t = 0, 0.01, ...

    Parameters
    ----------
    n_points : int, default=500
        Length of the series.
    step : float, default=0.01
        Time step.

    Returns
    -------
    ndarray of shape (n_points,)
    """
    t = np.arange(n_points) * step
    return np.sin(2 * np.pi * t) + 0.2 * np.sin(40 * np.pi * t)


def make_multitask_regression(
    n_samples: int = 10000,
    n_features: int = 50,
    n_tasks: int = 20,
    n_relevant: int = 5,
    noise: float = 0.1,
    random_state: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-task regression in the style of Argyriou et al. (2008).

    Inputs ``x ~ N(0, I)`` are shared by all tasks; the task weight vectors live in a
    shared ``n_relevant``-dimensional subspace: ``W = P B`` with ``P`` (n_features x
    n_relevant) orthonormal and ``B`` Gaussian; ``Y = X W + noise * N(0, 1)``. Outputs
    are therefore strongly correlated, which is what an output kernel can exploit.

    Parameters
    ----------
    n_samples : int, default=10000
        Number of samples.
    n_features : int, default=50
        Input dimension.
    n_tasks : int, default=20
        Number of outputs.
    n_relevant : int, default=5
        Dimension of the subspace shared by the task weight vectors.
    noise : float, default=0.1
        Standard deviation of the output noise.
    random_state : int, RandomState or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_tasks)
    """
    rng = check_random_state(random_state)
    X = rng.standard_normal((n_samples, n_features))
    P, _ = np.linalg.qr(rng.standard_normal((n_features, n_relevant)))
    B = rng.standard_normal((n_relevant, n_tasks))
    W = P @ B / np.sqrt(n_relevant)
    Y = X @ W + noise * rng.standard_normal((n_samples, n_tasks))
    return X, Y


#: rows per independently seeded block of :func:`make_click_stream`
_CLICK_BLOCK = 10_000


def make_click_stream(
    n_samples: int = 1_000_000,
    n_features: int = 120,
    n_outputs: int = 16,
    chunk_size: int = 10_000,
    *,
    start: int = 0,
    impressions: int = 200,
    random_state: int = 0,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """A synthetic stream shaped like advertisement click-rate data, generated in chunks.

    A substitute for the click-rate data of the OLOK paper (1e6 rows, 120 attributes,
    16 outputs), which is not available. Each row is a display context: ``n_features // 6``
    continuous attributes ``N(0, 1)`` and the rest one-hot encoded categorical attributes
    (10 levels each, skewed level frequencies). The outputs are the observed click rates of
    ``n_outputs`` ads: ``clicks / impressions`` with ``clicks ~ Binomial(impressions,
    r_k(x))`` and ``r_k(x) = sigmoid(c_k + sum_j A_jk tanh(z_j) + u_k tanh(z_1) tanh(z_2))``,
    ``z = x W`` eight latent scores shared by all ads (so the outputs are correlated).

    The model (``W``, ``A``, ``c``, ``u``, level frequencies) is fixed by ``random_state``;
    rows come in independently seeded blocks of 10,000, so row ``i`` is the same whatever
    ``chunk_size`` and ``start``: ``make_click_stream(n, start=10**6)`` gives held-out
    rows of the same model after a million-row stream. Memory: one chunk at a time.

    Parameters
    ----------
    n_samples : int, default 1_000_000
    n_features : int, default 120
        At least 12.
    n_outputs : int, default 16
    chunk_size : int, default 10_000
        Rows per yielded chunk (the last one may be shorter).
    start : int, default 0
        Index of the first row.
    impressions : int, default 200
        Impressions per row and ad (the binomial noise: larger is less noisy).
    random_state : int, default 0

    Yields
    ------
    X : ndarray of shape (rows, n_features)
    Y : ndarray of shape (rows, n_outputs)

    Examples
    --------
    >>> from mvkernels.datasets import make_click_stream
    >>> X, Y = next(make_click_stream(1000, chunk_size=1000))
    >>> X.shape, Y.shape, bool(0 <= Y.min() and Y.max() <= 1)
    ((1000, 120), (1000, 16), True)
    """
    if n_features < 12:
        raise ValueError(f"n_features must be >= 12, got {n_features}")
    if min(n_samples, n_outputs, chunk_size, impressions) < 1 or start < 0:
        raise ValueError("n_samples, n_outputs, chunk_size and impressions must be >= 1")
    seed = int(random_state)
    model = np.random.default_rng([seed, 0])
    n_cont = n_features // 6
    sizes = [10] * ((n_features - n_cont) // 10)
    if (n_features - n_cont) % 10:
        sizes.append((n_features - n_cont) % 10)
    probs = [model.dirichlet(np.full(k, 0.7)) for k in sizes]
    W = model.standard_normal((n_features, 8))
    W[:n_cont] /= np.sqrt(n_cont)
    W[n_cont:] *= 1.5 / np.sqrt(len(sizes))
    A = model.standard_normal((8, n_outputs)) * 0.6
    c = -3.0 + 0.5 * model.standard_normal(n_outputs)
    u = 0.8 * model.standard_normal(n_outputs)

    def block(i: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng([seed, 1, i])
        m = _CLICK_BLOCK
        X = np.zeros((m, n_features))
        X[:, :n_cont] = rng.standard_normal((m, n_cont))
        col = n_cont
        for k, p in zip(sizes, probs):
            X[np.arange(m), col + rng.choice(k, size=m, p=p)] = 1.0
            col += k
        H = np.tanh(X @ W)
        logit = c + H @ A + np.outer(H[:, 0] * H[:, 1], u)
        rate = 1.0 / (1.0 + np.exp(-logit))
        return X, rng.binomial(impressions, rate) / impressions

    stop = start + n_samples
    row = start
    cache: tuple[int, tuple[np.ndarray, np.ndarray]] | None = None
    while row < stop:
        end = min(row + chunk_size, stop)
        parts_X, parts_Y = [], []
        r = row
        while r < end:
            i = r // _CLICK_BLOCK
            if cache is None or cache[0] != i:
                cache = (i, block(i))
            a, b = r - i * _CLICK_BLOCK, min(end - i * _CLICK_BLOCK, _CLICK_BLOCK)
            parts_X.append(cache[1][0][a:b])
            parts_Y.append(cache[1][1][a:b])
            r += b - a
        yield np.concatenate(parts_X), np.concatenate(parts_Y)
        row = end
