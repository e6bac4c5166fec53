"""The linear classifiers, each returned as one float matrix W of shape
(N+1) x B: row 0 is the bias, row f the weights of feature row f, so the score
of column j is W[0, j] + sum_f x_f W[f, j].

Binary (spam) models have B = 1: score >= 0 means the positive class
(labels[1], "spam"). Topic models pick argmax_j, lowest j on ties.

Column 0 of every feature matrix is unused (features are rows 1..N).
"""

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import MultinomialNB
from sklearn.svm import LinearSVC

SPAM = ("grnb", "lr", "svm")
TOPICS = ("mnb", "mlr", "ovr-svm")
BOOLEAN = ("grnb",)  # algorithms defined on presence, not counts


def graham_robinson(x, y, strength=1.0, assumed=0.5):
    """Graham-Robinson naive Bayes as a linear model on boolean features.

    For feature f seen in n_s of the S spam and n_h of the H ham training
    messages: Graham's p(f) = (n_s/S) / (n_s/S + n_h/H); Robinson's smoothed
    f(f) = (s*a + n*p(f)) / (s + n) with n = n_s + n_h, strength s = 1 and
    assumed probability a = 0.5 (unseen features get exactly 0.5). The weight
    is log(f / (1 - f)) and the bias log(S / H), so the score is the log
    posterior odds under naive independence over the features present.
    """
    xb = (x > 0).astype(np.float64)
    spam, ham = y == 1, y == 0
    n_spam, n_ham = int(spam.sum()), int(ham.sum())
    if n_spam == 0 or n_ham == 0:
        raise ValueError("Graham-Robinson NB needs both classes in the training data")
    ns = np.asarray(xb[spam].sum(axis=0)).ravel()
    nh = np.asarray(xb[ham].sum(axis=0)).ravel()
    b, g = ns / n_spam, nh / n_ham
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(b + g > 0, b / (b + g), assumed)
    n = ns + nh
    f = (strength * assumed + n * p) / (strength + n)
    w = np.log(f) - np.log1p(-f)
    w[0] = np.log(n_spam / n_ham)
    return w[:, None]


def idf(x):
    """Smoothed inverse document frequency per feature row (as in scikit-learn's
    TfidfTransformer). Scaling feature f by idf_f is linear per feature, so a
    model fitted on scaled data folds back exactly into weights on raw counts:
    w_f = idf_f * w'_f, and the client keeps sending plain capped counts."""
    df = np.asarray((x > 0).sum(axis=0)).ravel()
    return np.log((1 + x.shape[0]) / (1 + df)) + 1


def _fit_scaled(model, x, y):
    """Fits a linear model on idf-scaled features; returns (coef on raw counts, intercept)."""
    scale = idf(x)
    xs = sparse.csr_matrix(x @ sparse.diags(scale))
    xs.indices, xs.indptr = xs.indices.astype(np.int32), xs.indptr.astype(np.int32)
    m = model.fit(xs, y)
    return m.coef_ * scale, m.intercept_


def _with_bias(coef, intercept):
    """sklearn coef (B x (N+1)) and intercept (B) -> W ((N+1) x B)."""
    w = np.array(coef, dtype=np.float64).T.copy()
    w[0] = intercept
    return w


def _binary_to_columns(w, n_classes):
    """A one-column score s for classes (0, 1) as two argmax columns (-s/2, s/2)."""
    return np.hstack([-w / 2, w / 2]) if n_classes == 2 and w.shape[1] == 1 else w


def train(algorithm, x, y, n_classes, c=1.0, alpha=0.1):
    """Fits one algorithm; x is CSR (docs x (N+1)), y class indices."""
    x = sparse.csr_matrix(x, dtype=np.float64)
    x.indices, x.indptr = x.indices.astype(np.int32), x.indptr.astype(np.int32)
    missing = sorted(set(range(n_classes)) - set(np.unique(y).tolist()))
    if missing:
        raise ValueError(f"classes {missing} have no training examples")
    if algorithm in SPAM and n_classes != 2:
        raise ValueError(f"{algorithm} is a two-class algorithm, data has {n_classes} labels")
    if algorithm == "grnb":
        return graham_robinson(x, y)
    if algorithm == "lr":
        return _with_bias(
            *_fit_scaled(LogisticRegression(solver="liblinear", C=c, max_iter=1000, random_state=0), x, y)
        )
    if algorithm == "svm":
        return _with_bias(*_fit_scaled(LinearSVC(C=c, max_iter=20000, random_state=0), x, y))
    if algorithm == "mnb":
        m = MultinomialNB(alpha=alpha).fit(x, y)
        w = _with_bias(m.feature_log_prob_, m.class_log_prior_)
        # Adding a constant to a feature row changes every class score by
        # the same amount, so centering rows keeps argmax and shrinks the
        # range quantization has to cover (log-probabilities are ~ -10).
        w[1:] -= w[1:].mean(axis=1, keepdims=True)
        return w
    if algorithm == "mlr":
        # liblinear has no multinomial loss; lbfgs minimizes the same L2-regularized objective.
        fitted = _fit_scaled(LogisticRegression(solver="lbfgs", C=c, max_iter=300), x, y)
        return _binary_to_columns(_with_bias(*fitted), n_classes)
    if algorithm == "ovr-svm":
        return _binary_to_columns(
            _with_bias(*_fit_scaled(LinearSVC(C=c, max_iter=20000, random_state=0), x, y)), n_classes
        )
    raise ValueError(f"unknown algorithm {algorithm!r} (spam: {', '.join(SPAM)}; topics: {', '.join(TOPICS)})")


def scores(w, x):
    """Float scores (docs x B)."""
    return np.asarray(sparse.csr_matrix(x)[:, 1:] @ w[1:]) + w[0]


def int_scores(w_int, x):
    """Exact integer scores (docs x B) as int64, x holding integer counts."""
    xi = sparse.csr_matrix(x, dtype=np.int64)
    return np.asarray(xi[:, 1:] @ w_int[1:].astype(np.int64)) + w_int[0].astype(np.int64)


def predict(s):
    """Scores -> class indices: B = 1 thresholds at 0, otherwise argmax."""
    s = np.asarray(s)
    return (s[:, 0] >= 0).astype(np.int64) if s.shape[1] == 1 else np.argmax(s, axis=1)
