"""Placeholder: written under issue 4."""


class OLOKRegressor:
    """Not implemented yet (issue 4)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("OLOKRegressor is being written (issue 4)")


class VVRLSRegressor:
    """Not implemented yet (issue 4)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("VVRLSRegressor is being written (issue 4)")

