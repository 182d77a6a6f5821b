"""Data sets: loaders for the shared real data, and generators for the papers' synthetic sets.

The implementation lives in private modules; the public names (each module's ``__all__``)
are re-exported here.
"""

from . import _fetch, _generators, _loaders
from ._fetch import *  # noqa: F403
from ._generators import *  # noqa: F403
from ._loaders import *  # noqa: F403

__all__ = [*_loaders.__all__, *_fetch.__all__, *_generators.__all__]
