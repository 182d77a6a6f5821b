"""OLOK: online learning with operator-valued kernels, and its batch counterpart vv-RLS.

Audiffren & Kadri (ESANN 2015), "Online Learning with Operator-valued Kernels".

OLOK (Algorithm 1) is NORMA with a matrix-valued kernel ``K(x, x') in R^{d x d}``. With
``f_0 = 0``, at time ``t`` with ``(x_t, y_t)``:

1. ``alpha_{t,t} = -eta_t grad_z l(z, y_t) at z = f_{t-1}(x_t)``;
2. ``alpha_{i,t} = (1 - eta_t lambda) alpha_{i,t-1}`` for ``i < t``;
3. (optional truncation) ``alpha_{i,t} = 0`` for ``i <= t - s_t`` (keep the last ``s_t``);
4. ``f_t(x) = sum_i K(x, x_i) alpha_{i,t}``,

the expansion of the stochastic gradient step of Eq. (1),
``f_t = (1 - eta_t lambda) f_{t-1} - eta_t K(x_t, .) grad_z l(f_{t-1}(x_t), y_t)``.

Implementation (exactly the algorithm above, only reorganised):

* **Lazy decay.** Step 2 is never applied to the stored coefficients. We keep one running
  scale ``c_t = prod_{u <= t} (1 - eta_u lambda)`` and store ``beta_i = alpha_{i,i} / c_i``,
  so ``alpha_{i,t} = c_t beta_i``. When ``c_t`` falls below ``1e-100`` the stored ``beta``
  are multiplied by ``c_t`` and ``c_t`` reset to 1 (renormalisation, no underflow).
* **Support storage** (:class:`._support.SupportBuffer`) is preallocated and grows
  geometrically (doubling); truncation only moves the start of the live window, and the
  window is compacted to the front of the buffer instead of growing when more than half of
  the buffer is dead.
* **Block updates** (:mod:`._steps`). A batch is processed in blocks of ``b`` rows (256).
  The contribution of the support stored before the block to all ``b`` predictions is one
  vectorised kernel evaluation and product (masked by each row's truncation window). Within
  the block, row ``j``'s prediction depends on the coefficients of rows ``< j``, so the
  rows are resolved by a forward recursion over the strictly lower-triangular in-block
  kernel matrix: ``u_j = old_j + sum_{l<j} k(x_j, x_l) beta_l``,
  ``f_{t+j-1}(x_j) = c_{t+j-1} u_j B``, ``beta_j = alpha_{j,j} / c_{t+j}``. This is
  algebraically the per-sample algorithm (tests: to 1e-10 against a literal per-sample
  implementation, with and without truncation). For the squared loss and a decomposable
  kernel the recursion is linear in ``beta`` and is done as unit lower-triangular solves in
  the eigenbasis of ``B``, one per distinct eigenvalue (no Python loop over rows); other
  losses and general operator kernels run the row loop. Batches run with single-threaded
  BLAS (the block products are thin; threaded BLAS was 2-3x slower on shared cores).
* **Feature space** (``features="rff" | "nystrom" | "identity"``, :mod:`._features`): with
  ``k(x, x') ~ phi(x)^T phi(x')`` the model is ``f_t(x) = c_t phi(x)^T V_t B`` with one
  ``D x d`` matrix ``V_t = sum_i phi(x_i) beta_i^T``; a block needs ``old = Phi_b V`` and the
  in-block kernel ``Phi_b Phi_b^T``, runs the same recursion, then ``V += Phi_b^T beta_b``:
  ``O(D (p + b + d))`` per row, memory ``O(D (p + d))`` whatever the stream length.
  ``"nystrom"`` learns the first ``D`` rows exactly, then builds the Nystrom map on them and
  carries the model over unchanged (``V = phi(L)^T beta``), as Nystrom online gradient
  descent (Lu et al. 2016) does with its budget.

Truncation schedules (``truncation``): ``None`` (keep everything), an integer ``s`` (fixed
window of the last ``s`` samples), or ``"theorem"``: Theorem 1's
``s_t = max(ceil(c t^{1/2 + eps}), t_0)`` with ``eps = truncation_eps``, ``c =
truncation_scale`` (default 1, the theorem's form; a constant factor keeps the theorem's
``t^{1/2 + eps}`` growth and only moves the work budget) and ``t_0`` from the theorem,
``t_0 = min{t : eta lambda < sqrt(t), exp(-eta lambda t^eps) <= eta lambda / sqrt(t),
t^{1/2 + eps} <= 0.75 t}`` (:func:`theorem_t0`), unless ``truncation_t0`` is
given. The theorem's ``t_0`` is large (about 3e5 for ``eta lambda = 0.3`` and ``eps =
0.25``, far more for small ``eta lambda``), so on shorter streams "theorem" keeps every
sample.

Default bandwidth of an online learner: for an rbf (or laplacian) kernel without
``gamma``/``sigma`` the bandwidth is set once, from the *first batch* given to
:meth:`OLOKRegressor.partial_fit` (for :meth:`~OLOKRegressor.fit`, from the whole ``X``),
with MVML's rule (mean pairwise distance, subsampled to 2000 rows with ``random_state``),
and frozen afterwards (changing it later would change the function already learnt). A first
batch of one row (or :meth:`~OLOKRegressor.learn_one`) cannot set it: give ``gamma``.

Layout: :mod:`._problem` (losses, kernel, schedules, :func:`theorem_t0`), :mod:`._support`
(support storage), :mod:`._features` (explicit feature maps), :mod:`._steps` (block
solvers, kernel-expansion and feature-space models), :mod:`._estimators` (the estimators).
"""

from ._estimators import OLOKRegressor, VVRLSRegressor
from ._problem import theorem_t0

__all__ = ["OLOKRegressor", "VVRLSRegressor", "theorem_t0"]
