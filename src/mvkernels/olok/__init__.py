"""OLOK: online learning with operator-valued kernels, and its batch counterpart vv-RLS.

Audiffren & Kadri (ESANN 2015), "Online Learning with Operator-valued Kernels". The public
names are re-exported here; the implementation and its documentation are in
:mod:`._estimators`.
"""

from ._estimators import OLOKRegressor, VVRLSRegressor, olok_reference, theorem_t0

__all__ = ["OLOKRegressor", "VVRLSRegressor", "olok_reference", "theorem_t0"]
