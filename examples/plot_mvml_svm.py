"""
MVML-SVM: multi-view metric learning with the hinge loss
========================================================

:class:`~mvkernels.MVMLSVC` replaces MVML's square loss by the hinge loss (Huusari et al.,
JdS 2018, eq. 6-8): the predictor step becomes an SVM dual solved by coordinate descent,
the metric step is unchanged. Two views of the MVML paper's toy problem (half moons, and
the same points sheared and rotated) from :func:`~mvkernels.datasets.make_two_view_toy`.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

from mvkernels import MVMLSVC, MVMLClassifier
from mvkernels.datasets import make_two_view_toy

Xs, y = make_two_view_toy(n_samples=300, noise=0.15, random_state=0)
idx_train, idx_test = train_test_split(np.arange(len(y)), test_size=0.5, random_state=0)
train = [X[idx_train] for X in Xs]
test = [X[idx_test] for X in Xs]

svc = MVMLSVC(alpha=1e-3, eta=1e-2, n_landmarks=60, random_state=0).fit(train, y[idx_train])
ls = MVMLClassifier(alpha=1e-3, eta=1e-2, n_landmarks=60, random_state=0).fit(train, y[idx_train])
print(f"MVMLSVC (hinge) test accuracy:        {svc.score(test, y[idx_test]):.3f}")
print(f"MVMLClassifier (square) test accuracy: {ls.score(test, y[idx_test]):.3f}")

# %%
# Decision function on the first view
# -----------------------------------
# The decision values of the test points, coloured by their true class: the hinge loss
# separates the two moons with a margin.
scores = svc.decision_function(test)
fig, ax = plt.subplots(figsize=(5, 4))
sc = ax.scatter(
    test[0][:, 0],
    test[0][:, 1],
    c=scores,
    cmap="coolwarm",
    s=20,
    edgecolors=np.where(y[idx_test] == 1, "k", "none"),
)
fig.colorbar(sc, label="decision value")
ax.set_title("MVMLSVC decision values (black edge: class 1)")
fig.tight_layout()
