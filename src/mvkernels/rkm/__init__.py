"""Multi-view restricted kernel machines: primal/dual kernel PCA (Achten et al. 2023).

Equation numbers below are the paper's; the formulas are also stated in ``docs/rkm.md``.
Column convention: ``Phi_v`` (n x d_v) centred training features of view v,
``Phi = [Phi_1, ..., Phi_V]``, ``C = Phi^T Phi`` (NOT divided by n), ``K_v = Phi_v Phi_v^T``
(centred Gram matrices ``M K_v M``), ``K = sum_v K_v``; ``W_v`` (d_v x s), hidden units
``H`` (n x s), ``Sigma`` (s x s).

Training (Algorithms 1-4)
-------------------------
* ``"primal-eig"`` (Alg. 1, eq. 11): ``C U = U Lambda`` (top s), ``W = U Lambda^{1/2}``
  (the rescaling, Alg. 1 step 6), ``Sigma = Lambda``, ``H = Phi W Sigma^{-1}`` (eq. 6).
* ``"dual-eig"`` (Alg. 2, eq. 14): ``K H = H Lambda`` (top s), ``Sigma = Lambda``; with
  explicit features also ``W_v = Phi_v^T H`` (eq. 5).
* ``"primal-stiefel"`` / ``"dual-stiefel"`` (Alg. 3/4, eq. 8/12): optimisation on the
  Stiefel manifold (:mod:`mvkernels.stiefel`: block Riemannian CG ``optimizer="lobpcg"``,
  default, or the paper's Cayley Adam), ``Sigma = U^T C U`` (eq. 9) or ``H^T K H`` (eq. 13),
  ``W = U Sigma^{1/2}``; with ``rotate=True`` ``Sigma = O Lambda O^T`` is diagonalised and
  ``U <- U O``, ``H <- H O``, ``Sigma <- Lambda``.
* ``"auto"`` (the paper's flowchart, Fig. 1): any view with an implicit kernel -> dual;
  all views explicit -> primal if ``d < n`` else dual; eigendecomposition. Mini-batch
  primal Stiefel training on a stream of chunks: :meth:`MultiViewKPCA.fit_stream`.

Inference (eq. 15/16)
---------------------
Hidden units of a point with missing views ``m`` and observed views ``O``::

    primal: h* = (Sigma - sum_m W_m^T W_m)^{-1} sum_{v in O} W_v^T (phi_v(x*) - mean_v)
    dual:   h* = (Sigma - H^T (sum_m K_m) H)^{-1} H^T sum_{v in O} k_v^c(x*)

with the test kernel vector centred with the UNCENTRED training Gram matrix:
``k^c = k - mean(k) - K_unc 1/n + 1^T K_unc 1 / n^2`` (the authors' released
code centres with the already-centred K, which we do not reproduce). With no view missing
this is eq. (6), ``Sigma h* = sum_v W_v^T phi_v^c(x*)`` (:meth:`MultiViewKPCA.transform`).
A missing view's centred features are ``W_m h*`` (primal, eq. 7) or ``Phi_m^T H h*`` (dual);
identity features (linear kernel) give the view itself after adding the training mean.

Choices the paper leaves open (also in ``docs/rkm.md``)
-------------------------------------------------------
* Pre-image of a missing view whose features are not the identity (RFF, Nystrom, implicit
  kernel): a kernel smoother over the ``n_neighbors`` training points with the largest
  centred feature-space similarity ``s = K_m H h*`` (weights ``max(s, 0)``).
* Signs: every column of ``H`` is flipped so that its largest-magnitude entry is positive
  (``U``, ``W`` and ``Sigma`` follow), so primal and dual solutions come out with equal signs.
* Components beyond the numerical rank (eigenvalue ``<= 1e-10 * largest``) are rejected with
  a ValueError: ``Lambda^{-1/2}`` would amplify rounding noise.
* Random Fourier features: scikit-learn's ``RBFSampler`` with the view kernel's
  ``gamma = 1/(2 sigma^2)``; Nystrom: a :class:`~mvkernels.nystrom.BlockNystrom` per view
  with ``n_features`` uniform landmarks (not shared between views). All random choices
  draw from one ``RandomState(random_state)`` in view order (kernel bandwidths, then
  feature maps, then the Stiefel start), so one RFF view with an int seed gets exactly
  ``RBFSampler(random_state=seed)``.
* Primal fit on NumPy input centres ``Phi`` explicitly before ``Phi^T Phi``; on Dask input
  ``C`` is ``gram - n mean mean^T`` from one Dask reduction
  (:func:`mvkernels.nystrom.feature_moments`). Dual solvers need the n x n kernel in memory
  and refuse Dask input.
"""

from ._forecast import RKMForecaster
from ._kpca import FEATURE_KINDS, SOLVERS, MultiViewKPCA

__all__ = ["SOLVERS", "FEATURE_KINDS", "MultiViewKPCA", "RKMForecaster"]
