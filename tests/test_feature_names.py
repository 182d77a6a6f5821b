"""Feature names: column-label views through NumPy input and Pipelines, and the
``get_feature_names_out`` / ``set_output`` of every transformer."""

import inspect
import warnings

import numpy as np
import pytest

import mvkernels
from mvkernels import BlockNystrom, MultiViewKPCA, MVMLClassifier, MVMLRegressorCV

pd = pytest.importorskip("pandas")

VIEWS = [["a", "b"], ["c", "d", "e"]]


@pytest.fixture
def frame(rng):
    X = rng.standard_normal((60, 5))
    df = pd.DataFrame(X, columns=list("abcde"))
    y = (X[:, 0] + X[:, 3] > 0).astype(int)
    return df, y


def test_numpy_after_dataframe_fit_resolves_labels(frame):
    df, y = frame
    est = MVMLClassifier(views=VIEWS, n_landmarks=10, random_state=0).fit(df, y)
    np.testing.assert_array_equal(est.feature_names_in_, list("abcde"))
    # scikit-learn's warning stays (the columns are taken in the fitted order)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        got = est.decision_function(df.to_numpy())
    np.testing.assert_allclose(got, est.decision_function(df), rtol=1e-12)
    cv = MVMLRegressorCV(views=VIEWS, alphas=[1e-2], bandwidth_factors=[1.0], cv=3).fit(
        df, y.astype(float)
    )
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_allclose(cv.predict(df.to_numpy()), cv.predict(df), rtol=1e-12)
    # a NumPy fit has no names to resolve labels with
    with pytest.raises(TypeError, match="labels need a pandas DataFrame"):
        MVMLClassifier(views=VIEWS).fit(df.to_numpy(), y)


def test_pipeline_with_a_scaler(frame):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    df, y = frame
    est = MVMLClassifier(views=VIEWS, n_landmarks=10, random_state=0)
    with pytest.raises(TypeError, match=r'set_output\(transform="pandas"\)'):
        make_pipeline(StandardScaler(), est).fit(df, y)
    pipe = make_pipeline(StandardScaler(), est).set_output(transform="pandas").fit(df, y)
    scaled = StandardScaler().set_output(transform="pandas").fit_transform(df)
    ref = MVMLClassifier(views=VIEWS, n_landmarks=10, random_state=0).fit(scaled, y)
    np.testing.assert_allclose(pipe.decision_function(df), ref.decision_function(scaled))
    # the views really are the labelled columns: the same model on positions
    pos = MVMLClassifier(views=[[0, 1], [2, 3, 4]], n_landmarks=10, random_state=0)
    pos.fit(scaled.to_numpy(), y)
    np.testing.assert_allclose(
        ref.decision_function(scaled), pos.decision_function(scaled.to_numpy())
    )


def transformers():
    for name in mvkernels.__all__:
        obj = getattr(mvkernels, name)
        if inspect.isclass(obj) and hasattr(obj, "transform") and hasattr(obj, "fit"):
            yield obj


def test_every_transformer_has_feature_names_and_pandas_output(frame):
    df, _ = frame
    found = list(transformers())
    assert {BlockNystrom, MultiViewKPCA} <= set(found)
    for cls in found:
        est = cls(views=VIEWS, random_state=0)
        assert hasattr(est, "set_output"), cls
        est.set_output(transform="pandas")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = est.fit(df).transform(df)
        names = est.get_feature_names_out()
        assert isinstance(out, pd.DataFrame), cls
        assert list(out.columns) == list(names)
        assert len(set(names)) == len(names) == out.shape[1]
