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


def test_linear_models_match_sklearn_decision_function():
    from sklearn.svm import LinearSVC

    x, y = synthetic(300, 2, seed=4)
    w = algorithms.train("svm", x, y, 2)
    xi = sparse.csr_matrix(x)
    xi.indices = xi.indices.astype(np.int32)
    ref = LinearSVC(C=1.0, max_iter=20000).fit(xi, y).decision_function(xi)
    np.testing.assert_allclose(algorithms.scores(w, x)[:, 0], ref, rtol=1e-6, atol=1e-9)


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
