import math

import numpy as np
import pytest
from scipy import sparse

from conftest import synthetic
from pmf_models import algorithms


def test_graham_robinson_weights_by_hand():
    # 2 spam, 3 ham; feature 1 in both spam and 1 ham; feature 2 in 1 ham only.
    x = sparse.csr_matrix(np.array([[0, 1, 0, 0], [0, 2, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 0]], dtype=float))
    y = np.array([1, 1, 0, 0, 0])
    w = algorithms.graham_robinson(x, y)[:, 0]

    def robinson(ns, nh):
        b, g = ns / 2, nh / 3
        p = b / (b + g)
        n = ns + nh
        f = (0.5 + n * p) / (1 + n)
        return math.log(f / (1 - f))

    assert w[0] == pytest.approx(math.log(2 / 3))
    assert w[1] == pytest.approx(robinson(2, 1))
    assert w[2] == pytest.approx(robinson(0, 1))
    assert w[3] == 0.0  # never seen: f = 0.5


@pytest.mark.parametrize("algorithm", algorithms.SPAM)
def test_spam_algorithms_separate_synthetic_data(algorithm):
    x, y = synthetic(400, 2, boolean=algorithm == "grnb")
    w = algorithms.train(algorithm, x, y, 2)
    assert w.shape == (x.shape[1], 1)
    assert np.mean(algorithms.predict(algorithms.scores(w, x)) == y) > 0.95


@pytest.mark.parametrize("algorithm", algorithms.TOPICS)
@pytest.mark.parametrize("n_classes", [2, 5])
def test_topic_algorithms_separate_synthetic_data(algorithm, n_classes):
    x, y = synthetic(500, n_classes)
    w = algorithms.train(algorithm, x, y, n_classes)
    assert w.shape == (x.shape[1], n_classes)
    assert np.mean(algorithms.predict(algorithms.scores(w, x)) == y) > 0.9


def test_mnb_row_centering_keeps_sklearn_predictions():
    from sklearn.naive_bayes import MultinomialNB

    x, y = synthetic(300, 4, seed=3)
    w = algorithms.train("mnb", x, y, 4)
    ref = MultinomialNB(alpha=0.1).fit(x, y).predict(x)
    np.testing.assert_array_equal(algorithms.predict(algorithms.scores(w, x)), ref)


def test_idf_scaling_folds_exactly_into_weights_on_raw_counts():
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.svm import LinearSVC

    x, y = synthetic(300, 2, seed=4)
    w = algorithms.train("svm", x, y, 2)
    tfidf = TfidfTransformer(norm=None, smooth_idf=True).fit(x)
    np.testing.assert_allclose(algorithms.idf(x), tfidf.idf_)
    xs = sparse.csr_matrix(tfidf.transform(x))
    xs.indices, xs.indptr = xs.indices.astype(np.int32), xs.indptr.astype(np.int32)
    m = LinearSVC(C=1.0, max_iter=20000, random_state=0).fit(xs, y)
    # Folding is exact: weights idf_f * w'_f on raw counts give the scaled model's scores.
    folded = (m.coef_ * tfidf.idf_).T
    folded[0] = m.intercept_  # column 0 is never set, row 0 is the bias
    np.testing.assert_allclose(algorithms.scores(folded, x)[:, 0], m.decision_function(xs), rtol=1e-9, atol=1e-9)
    # And train() fits that model (liblinear stops at a tolerance, so compare verdicts).
    assert np.mean(algorithms.predict(algorithms.scores(w, x)) == m.predict(xs)) >= 0.99


def test_int_scores_are_exact():
    rng = np.random.default_rng(5)
    w = rng.integers(-(2**13), 2**13, size=(50, 3)).astype(np.int32)
    x = sparse.random(20, 50, density=0.3, random_state=6, data_rvs=lambda n: rng.integers(1, 16, n)).tolil()
    x[:, 0] = 0
    x = x.tocsr()
    dense = x.toarray().astype(object)
    ref = dense[:, 1:] @ w[1:].astype(object) + w[0].astype(object)
    np.testing.assert_array_equal(algorithms.int_scores(w, x), ref.astype(np.int64))


def test_errors():
    x, y = synthetic(100, 3)
    with pytest.raises(ValueError, match="two-class"):
        algorithms.train("lr", x, y, 3)
    with pytest.raises(ValueError, match="unknown algorithm"):
        algorithms.train("knn", x, y, 3)
    with pytest.raises(ValueError, match="no training examples"):
        algorithms.train("mnb", x, y, 4)
