"""Placeholder: written under issue 5."""


class MultiViewKPCA:
    """Not implemented yet (issue 5)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("MultiViewKPCA is being written (issue 5)")


class RKMForecaster:
    """Not implemented yet (issue 5)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("RKMForecaster is being written (issue 5)")

