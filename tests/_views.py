"""Small multi-view inputs shared by the validation and Nystrom tests."""


def two_views(rng, n=60):
    """Two Gaussian views of ``n`` rows (3 and 5 columns)."""
    return [rng.standard_normal((n, 3)), rng.standard_normal((n, 5))]
