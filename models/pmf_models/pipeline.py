"""Train -> fold threshold -> quantize -> package; and evaluation, float and
quantized side by side."""

import numpy as np
from scipy import sparse
from sklearn.datasets import load_svmlight_file
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_score, recall_score

from . import algorithms
from .quantize import default_b_in, model_t, quantize

PUBLIC_ALGORITHM = "mnb"


def load_libsvm(path, n):
    """LIBSVM file written by the TypeScript extractor (rows 1..N) -> (CSR, labels)."""
    x, y = load_svmlight_file(path, n_features=n + 1, zero_based=True, dtype=np.float64)
    x = x.tocsr()
    # liblinear accepts only 32-bit sparse indices.
    x.indices, x.indptr = x.indices.astype(np.int32), x.indptr.astype(np.int32)
    return x, y.astype(np.int64)


def count_cap(spec):
    return 1 if spec["boolean"] else (1 << spec["fIn"]) - 1


def select_rows(x, y, k):
    """Chi-square selection of k feature rows; returns a boolean mask over 0..N."""
    k = min(k, x.shape[1] - 1)
    sel = SelectKBest(chi2, k=k).fit(x[:, 1:], y)
    return np.concatenate([[False], sel.get_support()])


def fit(task, algorithm, labels, spec, x, y, b_in=None, select=None, threshold=0.0, c=1.0, alpha=0.1):
    """Returns (header, int weights, float weights) for one model."""
    allowed = algorithms.SPAM if task == "spam" else algorithms.TOPICS
    if algorithm not in allowed:
        raise ValueError(f"{task} models use one of {', '.join(allowed)}, not {algorithm!r}")
    if algorithm in algorithms.BOOLEAN and not spec["boolean"]:
        raise ValueError(f"{algorithm} needs a boolean feature spec")
    if task == "spam" and len(labels) != 2:
        raise ValueError(f"spam models need exactly two labels, got {labels}")
    mask = None
    if select and select < spec["N"]:
        mask = select_rows(x, y, select)
        x = x @ sparse.diags(mask.astype(np.float64))
    w = algorithms.train(algorithm, x, y, len(labels), c=c, alpha=alpha)
    if mask is not None:
        w[1:][~mask[1:]] = 0.0
    if task == "spam":
        w[0] -= threshold
    cap = count_cap(spec)
    b_in = b_in or default_b_in(cap, spec["lMax"])
    w_int, scale = quantize(w, b_in)
    t = model_t(w_int, cap, spec["lMax"], b_in)
    if t > 32:
        raise ValueError(f"T = {t} exceeds 32: lower b_in, fIn or lMax")
    header = {
        "task": task,
        "algorithm": algorithm,
        "labels": list(labels),
        "N": spec["N"],
        "B": w.shape[1],
        "b_in": b_in,
        "f_in": spec["fIn"],
        "L_max": spec["lMax"],
        "T": t,
        "featureSpec": spec,
        "scale": scale,
        "threshold": threshold,
        "selected": int(mask.sum()) if mask is not None else spec["N"],
        "hyper": {"C": c}
        if algorithm in ("lr", "svm", "mlr", "ovr-svm")
        else {"alpha": alpha}
        if algorithm == "mnb"
        else {},
    }
    return header, w_int, w


def fit_public(labels, spec, x, y, fraction, b_in=None, seed=0):
    """The public candidate model: multinomial NB on a small stratified-at-random
    share of the training data (the provider reveals only what that share teaches)."""
    rng = np.random.default_rng(seed)
    idx = np.concatenate(
        [
            rng.permutation(np.flatnonzero(y == j))[: max(1, round(fraction * np.sum(y == j)))]
            for j in range(len(labels))
            if np.any(y == j)
        ]
    )
    present = np.unique(y[idx])
    if len(present) < len(labels):
        raise ValueError("public fraction too small: some topics have no example")
    header, w_int, w = fit("topics", PUBLIC_ALGORITHM, labels, spec, x[idx], y[idx], b_in=b_in)
    header["role"] = "public"
    header["publicFraction"] = fraction
    return header, w_int, w


def metrics(y, pred, n_classes):
    binary = n_classes == 2
    avg = "binary" if binary else "macro"
    extra = {}
    if binary:
        # Legitimate mail sent to Junk: what a spam filter is tuned to (threshold.py).
        ham = y == 0
        extra["fpr"] = float(np.mean(pred[ham] == 1)) if np.any(ham) else 0.0
    return extra | {
        "n": len(y),
        "accuracy": float(accuracy_score(y, pred)),
        "precision": float(precision_score(y, pred, average=avg, zero_division=0)),
        "recall": float(recall_score(y, pred, average=avg, zero_division=0)),
        "f1": float(f1_score(y, pred, average=avg, zero_division=0)),
        "confusion": confusion_matrix(y, pred, labels=list(range(n_classes))).tolist(),
    }


def evaluate(header, w_int, w_float, x, y):
    """Metrics of the quantized model (and of the float one if present), plus
    how often their verdicts differ."""
    n = len(header["labels"])
    q_scores = algorithms.int_scores(w_int, x)
    q_pred = algorithms.predict(q_scores)
    out = {"quantized": metrics(y, q_pred, n), "scores": q_scores, "predictions": q_pred}
    if w_float is not None:
        f_pred = algorithms.predict(algorithms.scores(np.asarray(w_float, dtype=np.float64), x))
        out["float"] = metrics(y, f_pred, n)
        out["disagreements"] = int(np.sum(f_pred != q_pred))
    return out


def candidate_recall(w_int, x, y, b_prime):
    """Share of documents whose class y is among the b_prime best-scoring
    columns of a (public) model; ties broken towards lower indices."""
    s = algorithms.int_scores(w_int, x)
    order = np.argsort(-s, axis=1, kind="stable")[:, :b_prime]
    return float(np.mean(np.any(order == y[:, None], axis=1)))
