"""Placeholder: written under issue 3."""


class MVMLSVC:
    """Not implemented yet (issue 3)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("MVMLSVC is being written (issue 3)")

