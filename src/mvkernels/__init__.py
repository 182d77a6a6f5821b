"""mvkernels: multi-view and operator-valued kernel learning with a scikit-learn API.

Estimators
----------
MVMLRegressor, MVMLClassifier
    Multi-view metric learning (Huusari et al. 2018), full kernels or block Nystrom.
MVMLSVC
    MVML with the hinge loss (Huusari et al., JdS 2018).
MVMLClassifierCV, MVMLRegressorCV, MVMLSVCCV
    The same with built-in cross-validation of the regularisation, bandwidth and
    number of iterations.
OLOKRegressor, VVRLSRegressor
    Online learning with operator-valued kernels (Audiffren & Kadri 2015) and its batch
    counterpart, vector-valued regularised least squares.
MultiViewKPCA, RKMForecaster
    Multi-view restricted kernel machines / kernel PCA (Achten et al. 2023).
BlockNystrom
    The block-wise Nystrom feature map shared by all views.
"""

from ._validation import check_views
from .kernels import IndexedKernel, ViewKernel
from .mvml import (
    MVMLSVC,
    MVMLSVCCV,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
)
from .nystrom import BlockNystrom
from .olok import OLOKRegressor, VVRLSRegressor
from .rkm import MultiViewKPCA, RKMForecaster

__version__ = "0.1.0"

__all__ = [
    "check_views",
    "IndexedKernel",
    "ViewKernel",
    "BlockNystrom",
    "MVMLClassifier",
    "MVMLRegressor",
    "MVMLSVC",
    "MVMLClassifierCV",
    "MVMLRegressorCV",
    "MVMLSVCCV",
    "OLOKRegressor",
    "VVRLSRegressor",
    "MultiViewKPCA",
    "RKMForecaster",
]
