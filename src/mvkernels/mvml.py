"""Placeholder: written under issue 2."""


class MVMLRegressor:
    """Not implemented yet (issue 2)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("MVMLRegressor is being written (issue 2)")


class MVMLClassifier:
    """Not implemented yet (issue 2)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("MVMLClassifier is being written (issue 2)")

