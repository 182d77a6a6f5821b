"""Built-in model selection for the MVML family: :class:`MVMLClassifierCV`,
:class:`MVMLRegressorCV` and :class:`MVMLSVCCV`.

Like scikit-learn's ``RidgeCV`` / ``LogisticRegressionCV``, these estimators choose their
hyperparameters by cross-validation on the training data and refit the best model. They
search

* ``alpha`` (the paper's lambda) and, for learned metrics, ``eta``: log-spaced grids over
  the papers' ranges (lambda in [1e-8, 10], eta in [1e-3, 100]);
* a bandwidth factor ``f`` on the per-view default (Gaussian: ``gamma_l = f / (2 sigma_l^2)``
  with ``sigma_l`` the mean pairwise distance of view ``l``; Laplacian likewise); kernels
  without a bandwidth (linear, polynomial, precomputed, callables) are not rescaled;
* the number of outer iterations ``max_iter`` (1 .. ``max_iter``) along Algorithm 1's path
  (``tol=None``): every outer iteration's g-step is the final model of a fit with that many
  iterations, so this axis costs nothing.

How the work is shared (block Nystrom mode, square loss). For each bandwidth factor one
Nystrom map is fitted on all training rows (the same landmarks for every factor and
fold: only unlabelled rows enter it). Each held-out part is read once: its features give
its decision values and its sufficient statistics ``C_k = sum u u^T``, ``c_k = sum u y^T``;
a fold's training statistics are the total minus the held-out part
(:func:`complement_moments`), so a whole cross-validation is one pass over the data per
bandwidth. Per fold, ``D_w C D_w`` is factored once (:class:`~._lowrank.SharedSpectrum`) and
shared by every class, ``alpha``, ``eta`` and iteration: the dense-metric problems of a fold
run as one batch (:func:`~mvkernels.mvml._square_paths.dense_metric_path`). Variants that break that
structure (sparse metric, learned weights) run the reference solver on the same fold
statistics; the hinge loss runs on the fold's features, computed once per fold
(:class:`MVMLSVCCV`: the learned dense paths of all ``eta`` of an ``alpha`` in one batch).
One-vs-one (``multi_class="ovo"``): the pairs of a fold with fewer rows than features run
as one batch, each in its own eigenbasis from its block of one row Gram matrix
(:meth:`~mvkernels.mvml._losses.SquareLoss.subset_fold_outputs`); a one-vs-rest
classifier's fold with fewer training rows than features runs the same way (one subset:
every training row, a target column per class), without the fold statistics.
Full-kernel mode (``n_landmarks=None``) re-fits an estimator per candidate and fold.
With ``joint_view="auto"`` the map is fitted once with the joint view (last block) and the
candidate without it uses the leading blocks of the same features and statistics
(:mod:`._joint`). The third candidate of ``"auto"``, the joint view alone with the identity
metric (kernel ridge on the concatenation, ``joint_view="only"``), has a capacity of its
own (:func:`~._joint.joint_only_landmarks`: every row a landmark up to 3000 rows) and is
cross-validated apart (:mod:`._folds_joint_only`).
By default (``search="screen"``) the search runs in two named steps: every
(joint view, bandwidth factor) pair is screened by the exact leave-one-out score of
MVML_I on all the rows (:mod:`._screen`), and the steps above run only for the best
pairs (:mod:`._folds_screen`; :class:`MVMLSVCCV`: the best pair, at every
``alpha``).

Where each part lives (one concern a module; the estimator base keeps the ``fit``-level
methods and delegates the rest to functions and small objects, as scikit-learn's thin
estimators over private functions):

* :mod:`._estimators`: the public estimators (their parameters and documentation).
* :mod:`._search`: ``_MVMLCVBase``: ``fit``, the looped axes (one run per value,
  ``_search_and_store``), ``predict``/``score`` through the refitted model.
* :mod:`._parts`: the part axes (``PartSplit``: the axes a search reports and the values
  of every part; ``search_parts``: one search per part on the same folds, a copy of the
  CV estimator each, joined by ``union_results`` into a ``PartsResult`` that ``fit``
  adopts).
* :mod:`._data`: the search's data (``_SearchData``: the validated views, the encoded
  targets, the folds, the scorer, the rows' weights, the learned column scales, the
  subsample of large data).
* :mod:`._prepare`: one run's declaration (``prepare_search``: the grids, the joint-view
  candidates and searched views, the base bandwidths, the landmark counts).
* :mod:`._grid`: the axes (``Axis``, ``PartAxis``, ``PART_AXES``), the per-loss search
  settings (``LossSearch``), the scores by axis name (``ScoreGrid``), the screen's result
  (``ScreenResult``) and the union of the parts' results (``union_results``).
* :mod:`._folds`: ``FoldScorer``, what the scoring steps read (the CV estimator's
  parameters, the searched estimator's class and parameters, a run's state; built by
  ``_MVMLCVBase._fold_scorer`` for each run, it holds no estimator), and the abandoning
  rule beside earlier parts (``hopeless``).
* :mod:`._steps`: which steps a run takes (``score_candidates``): the screen and its
  finalists (:mod:`._folds_screen`), or every bandwidth in full: the block Nystrom folds
  (:mod:`._folds_nystrom`: the map, the held-out parts, the total statistics, the paths,
  the folds run and abandoned, the held-out values, each a named step), the joint-only
  candidate (:mod:`._folds_joint_only`) and the full-kernel folds (:mod:`._folds_full`).
* :mod:`._scoring`: the held-out scores of one candidate and of every candidate of a
  fold's paths; the fold statistics as the total minus the held-out part.
* :mod:`._results`: ``cv_results_`` and the best candidate (``search_results``).
* :mod:`._refit`: the refit of the best candidate (``refit_best``).

The seam to the estimators. The search reaches the estimator it searches only through
``estimator._cv_engine()`` (:class:`~mvkernels.mvml._cv_engine.CVEngine`: the loss and
its flags, the fold paths of the loss, the full-kernel fold fits, the decision values of
a refitted model), so an estimator with a new loss (its ``_make_loss``) is searched by a
CV class that names it in ``_base_classes``, with no branch here; precomputed Gram
matrices are recognised by one rule, ``names_precomputed`` (the folds' training columns,
:func:`~._folds.fold_views`).

How a search axis is added. The search is a grid of named axes, declared once; the
scores are a :class:`~._grid.ScoreGrid` that the scoring steps read and write by axis
name, and ``cv_results_`` (its ``param_<name>`` columns, in grid order), ``best_params_``
and the tie order (the first candidate in grid order) follow from the declarations.

* A product axis the search runs once per value: an ``Axis(name, values, as_param=...,
  batched=False)`` returned by ``_MVMLCVBase._looped_axes`` (outermost in the grid). The
  search sets the CV estimator's parameter ``name`` to each value for its run (the
  screen, the folds) and for the refit of a best candidate there; nothing else changes
  (``tests/mvml/cv/test_cv_grid.py`` declares ``learn_weights`` so).
* A product axis the scoring steps batch over (the joint view, the bandwidth factor,
  ``alpha``, ``eta``, the outer iterations): one more :class:`~._grid.Axis` in
  ``_CVSearch.grid``, and the fold paths that score all its values at once (they write
  their block by name, ``scores.put(block, bandwidth_factor=fi, alpha=sel)``, a block in
  another order naming its axes, ``put(block, axes=(...), folds=k)``; no step depends on
  the order of the axes, ``tests/mvml/cv/test_cv_seam.py`` permutes them).
* An axis whose values are whole searches, each with its own grid, on the same folds
  (the feature relevance, the loss, the multi-class decomposition, the intercept): one
  :class:`~._grid.PartAxis` declaration in ``PART_AXES``, and nothing else: the CV
  parameter it names, the values ``"auto"`` searches, the other parameters a value sets
  on its part (``configure``: the loss's :class:`~._grid.LossSearch` path length and
  joint-view candidates), whether the value is the searched estimator's parameter too
  (``to_estimator``: the decomposition, the intercept), the data of a part (``data``:
  the relevance's views), the values whose searches are the same (``alias``) and whether
  later parts are abandoned once they cannot beat the earlier parts' best (``abandon``:
  the same choice; their folds run worst first), and whether a part's leave-one-out
  screen depends on the value (``changes_screen``: the loss, the relevance and the
  intercept; the parts on the same views share one screen per combination of those
  values, the decomposition's parts read the same screen). The parts are split and run
  by :mod:`._parts` (``PartSplit``, ``search_parts``); a part's values are one dict
  keyed by axis name, read by ``_MVMLCVBase._current(name)``; the parts' results are joined by
  :func:`~._grid.union_results` into ``cv_results_`` (a ``param_<name>`` column) and
  ``best_params_`` (``tests/mvml/cv/test_cv_grid.py`` declares a toy axis so).
"""

from ._estimators import MVMLSVCCV, MVMLClassifierCV, MVMLRegressorCV
from ._grid import (
    DEFAULT_ALPHAS,
    DEFAULT_BANDWIDTH_FACTORS,
    DEFAULT_ETAS,
    SVC_DEFAULT_ALPHAS,
    SVC_DEFAULT_BANDWIDTH_FACTORS,
    SVC_DEFAULT_ETAS,
)
from ._scoring import complement_moments

__all__ = [
    "MVMLClassifierCV",
    "MVMLRegressorCV",
    "MVMLSVCCV",
    "complement_moments",
    "DEFAULT_ALPHAS",
    "DEFAULT_ETAS",
    "DEFAULT_BANDWIDTH_FACTORS",
    "SVC_DEFAULT_ALPHAS",
    "SVC_DEFAULT_ETAS",
    "SVC_DEFAULT_BANDWIDTH_FACTORS",
]
