"""Data sets: loaders for the shared real data, and generators for the papers' synthetic sets.

The implementation lives in private modules; the public names are re-exported here.
"""

from ._fetch import (
    DataDownloadError,
    fetch_nutrimouse,
    fetch_parkinsons,
    fetch_santafe,
    fetch_sarcos,
    fetch_uwave,
    fetch_winequality,
)
from ._generators import (
    load_digits_views,
    make_click_stream,
    make_multitask_regression,
    make_sum_of_sines,
    make_two_view_toy,
)
from ._loaders import (
    DataFileError,
    DataNotFoundError,
    data_home,
    load_nutrimouse,
    load_parkinsons,
    load_santafe,
    load_sarcos,
    load_uwave,
    load_winequality,
)

__all__ = [
    "DataNotFoundError",
    "DataFileError",
    "DataDownloadError",
    "data_home",
    "fetch_uwave",
    "fetch_sarcos",
    "fetch_winequality",
    "fetch_parkinsons",
    "fetch_santafe",
    "fetch_nutrimouse",
    "load_uwave",
    "load_sarcos",
    "load_winequality",
    "load_parkinsons",
    "load_santafe",
    "load_nutrimouse",
    "make_two_view_toy",
    "make_sum_of_sines",
    "make_multitask_regression",
    "load_digits_views",
    "make_click_stream",
]
