"""
Precomputed kernels and their cross-validation
==============================================

Any view can be given as a Gram matrix (``kernel="precomputed"``): ``fit`` takes the
``n x n`` training kernel of each view, ``predict`` the ``(n_test, n_train)``
cross-kernels. To cross-validate with scikit-learn, wrap each view's kernel over all
samples in :class:`~mvkernels.IndexedKernel` and pass sample indices as the data: every
split then picks the right rows and columns.
"""

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import cross_val_score

from mvkernels import IndexedKernel, MVMLClassifier
from mvkernels.datasets import load_digits_views

Xs, y = load_digits_views(return_X_y=True)
Xs, y = [X[:400] for X in Xs], y[:400]
Ks = [rbf_kernel(X, gamma=1.0 / X.shape[1]) for X in Xs]  # any PSD kernels, one per view

# %%
# Fit and predict with Gram matrices
# ----------------------------------
train, test = np.arange(300), np.arange(300, 400)
clf = MVMLClassifier(kernel="precomputed", alpha=1e-3, random_state=0)
clf.fit([K[np.ix_(train, train)] for K in Ks], y[train])
acc = clf.score([K[np.ix_(test, train)] for K in Ks], y[test])
print(f"test accuracy with precomputed kernels: {acc:.3f}")

# %%
# Cross-validation through IndexedKernel
# --------------------------------------
n = len(y)
X_idx = np.repeat(np.arange(n)[:, None], len(Ks), axis=1).astype(float)  # one index column per view
est = MVMLClassifier(
    kernel=[IndexedKernel(K) for K in Ks], views=[1] * len(Ks), alpha=1e-3, random_state=0
)
scores = cross_val_score(est, X_idx, y, cv=3)
print("3-fold accuracies:", np.round(scores, 3))
