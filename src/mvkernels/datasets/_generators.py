"""Generators and embedded data: the papers' synthetic sets, scikit-learn's digits as views.

No files are needed: everything is built in memory from a seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
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
    """
    from sklearn.datasets import make_moons

    rng = check_random_state(random_state)
    X1, y = make_moons(n_samples=n_samples, noise=noise, random_state=rng)
    S = np.array([[1.0, shear], [0.0, 1.0]])
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    X2 = X1 @ S.T @ R.T + noise * rng.standard_normal(X1.shape)
    return [X1, X2], y


def load_digits_views() -> tuple[list[np.ndarray], np.ndarray]:
    """Embedded multi-view data: scikit-learn's handwritten digits cut into 3 views.

    Views (built by this function from the 8 x 8 images shipped with scikit-learn):
    0 = top half of the image (32 pixels), 1 = bottom half (32 pixels),
    2 = row and column intensity profiles (16 values). Labels 0..9.
    """
    from sklearn.datasets import load_digits

    d = load_digits()
    images = d.images.astype(np.float64) / 16.0
    top = images[:, :4, :].reshape(len(images), -1)
    bottom = images[:, 4:, :].reshape(len(images), -1)
    profiles = np.hstack([images.mean(axis=2), images.mean(axis=1)])
    return [top, bottom, profiles], d.target.astype(np.int64)


def make_sum_of_sines(n_points: int = 500, step: float = 0.01) -> np.ndarray:
    """The RKM paper's series ``y(t) = sin(2 pi t) + 0.2 sin(40 pi t)``, t = 0, 0.01, ..."""
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
    """
    rng = check_random_state(random_state)
    X = rng.standard_normal((n_samples, n_features))
    P, _ = np.linalg.qr(rng.standard_normal((n_features, n_relevant)))
    B = rng.standard_normal((n_relevant, n_tasks))
    W = P @ B / np.sqrt(n_relevant)
    Y = X @ W + noise * rng.standard_normal((n_samples, n_tasks))
    return X, Y
