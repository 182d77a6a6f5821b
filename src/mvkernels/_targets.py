"""One-vs-all ``+-1`` target columns and the rule that turns outputs back into classes.

Every classifier of the library (MVML, MVML-SVM, the baselines) learns one output per
one-vs-all column: a single column for two classes (``+1`` = ``classes[1]``), else one
column per class. The predicted class is ``classes[1]`` where the single output is
positive (else ``classes[0]``), or the class of the largest output.
"""

from __future__ import annotations

import numpy as np

__all__ = ["one_vs_all_targets", "predicted_class_indices", "predicted_classes"]


def one_vs_all_targets(yi: np.ndarray, n_classes: int) -> np.ndarray:
    """``+-1`` target columns of class indices ``yi``.

    Parameters
    ----------
    yi : ndarray of int, shape (n,)
        Class index of each sample, in ``[0, n_classes)``.
    n_classes : int
        Number of classes (at least 2).

    Returns
    -------
    Y : ndarray of shape (n, 1) for two classes (``+1`` = class 1), else (n, n_classes)
        ``+1`` in the sample's class column, ``-1`` elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> one_vs_all_targets(np.array([0, 1, 1]), 2).ravel()
    array([-1.,  1.,  1.])
    >>> one_vs_all_targets(np.array([2, 0]), 3)
    array([[-1., -1.,  1.],
           [ 1., -1., -1.]])
    """
    if n_classes == 2:
        return np.where(yi == 1, 1.0, -1.0)[:, None]
    Y = -np.ones((yi.shape[0], n_classes))
    Y[np.arange(yi.shape[0]), yi] = 1.0
    return Y


def predicted_class_indices(D: np.ndarray) -> np.ndarray:
    """Class indices of outputs ``D`` whose last axis holds the one-vs-all columns.

    One column: index 1 where the output is positive, else 0. Several: the index of the
    largest output.

    Examples
    --------
    >>> import numpy as np
    >>> predicted_class_indices(np.array([[0.3], [-0.2]]))
    array([1, 0])
    >>> predicted_class_indices(np.array([[0.1, 0.5, -1.0]]))
    array([1])
    """
    if D.shape[-1] == 1:
        return (D[..., 0] > 0).astype(int)
    return np.argmax(D, axis=-1)


def predicted_classes(D: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Class labels of outputs ``D`` (n, T): ``classes[predicted_class_indices(D)]``.

    Examples
    --------
    >>> import numpy as np
    >>> predicted_classes(np.array([[0.3], [-0.2]]), np.array(["a", "b"]))
    array(['b', 'a'], dtype='<U1')
    """
    return classes[predicted_class_indices(D)]
