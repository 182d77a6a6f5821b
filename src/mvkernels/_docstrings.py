"""Docstrings assembled from shared parts (one text, filled into each real ``__doc__``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

_Documented = TypeVar("_Documented", bound=Callable[..., Any])


def fill_placeholders(
    doc: str, parts: Mapping[str, str], owner: str, *, required: bool = True
) -> str:
    """Replace each placeholder line ``    {name}`` of ``doc`` by ``parts[name]`` (its
    leading and trailing newlines stripped; the part carries its own indentation).

    With ``required``, a part whose placeholder is not in ``doc`` is an error naming
    ``owner`` (the class or function being documented).

    Examples
    --------
    >>> doc = "Summary.\\n\\n    {params}\\n"
    >>> print(fill_placeholders(doc, {"params": "\\n    x : int\\n        A number.\\n"}, "f"))
    Summary.
    <BLANKLINE>
        x : int
            A number.
    <BLANKLINE>
    """
    for name, text in parts.items():
        line = "    {" + name + "}"
        if required and line not in doc:
            raise ValueError(f"{owner}: no placeholder {line.strip()} in docstring")
        doc = doc.replace(line, text.strip("\n"))
    return doc


def filled_doc(**parts: str) -> Callable[[_Documented], _Documented]:
    """Decorator that fills ``parts`` into the decorated function's (or class's) own
    docstring with :func:`fill_placeholders` (every placeholder required): a real
    ``__doc__``, for ``help()``, the API pages and the doctests."""

    def decorate(obj: _Documented) -> _Documented:
        obj.__doc__ = fill_placeholders(obj.__doc__ or "", parts, obj.__name__)
        return obj

    return decorate
