"""The spam decision threshold, chosen for a target false-positive rate.

A spam filter is judged by the legitimate mail it sends to Junk, not by its
accuracy: the threshold t (spam iff score >= t) is the lowest one that sends
at most `target_fpr` of held-out ham to Junk. The held-out ham is the
training data's own: every training message gets a score from a model
trained on the other folds (stratified K-fold, out-of-fold scores), so all
of the training ham is held out once and the test split stays untouched
for an honest report. t is then folded into the bias of the model trained on
all the training data (pipeline.fit), which keeps the verdict "integer
score >= 0" and private = plaintext exact.
"""

import numpy as np
from sklearn.model_selection import StratifiedKFold

from . import algorithms, pipeline

DEFAULT_TARGET_FPR = 0.001
FOLDS = 5


def out_of_fold_scores(algorithm, labels, spec, x, y, folds=FOLDS, **fit_kw):
    """Float score of every training example from a model that did not see it."""
    out = np.empty(x.shape[0])
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    for fit_idx, held_idx in split.split(np.zeros(len(y)), y):
        _, _, w = pipeline.fit("spam", algorithm, labels, spec, x[fit_idx], y[fit_idx], **fit_kw)
        out[held_idx] = algorithms.scores(np.asarray(w, dtype=np.float64), x[held_idx])[:, -1]
    return out


def threshold_for(ham_scores, other_scores, target_fpr):
    """Lowest t with at most floor(target_fpr * n_ham) ham scores >= t, halfway
    to the next score above so that rounding in quantization keeps it."""
    ham = np.sort(np.asarray(ham_scores, dtype=np.float64))[::-1]
    allowed = int(np.floor(target_fpr * len(ham)))  # < len(ham) as target_fpr < 1
    edge = ham[allowed]
    above = np.concatenate([ham, np.asarray(other_scores, dtype=np.float64)])
    above = above[above > edge]
    return float((edge + above.min()) / 2 if above.size else edge + 1.0)


def choose(algorithm, labels, spec, x, y, target_fpr=DEFAULT_TARGET_FPR, folds=FOLDS, **fit_kw):
    """(threshold, record for the model header) for the positive class labels[1]."""
    if not 0 <= target_fpr < 1:
        raise ValueError(f"the target false-positive rate must be in [0, 1), got {target_fpr}")
    if np.min(np.bincount(y, minlength=2)) < folds:
        raise ValueError(f"choosing a threshold needs at least {folds} messages of each label")
    s = out_of_fold_scores(algorithm, labels, spec, x, y, folds, **fit_kw)
    t = threshold_for(s[y == 0], s[y == 1], target_fpr)
    ham, spam = s[y == 0], s[y == 1]
    return t, {
        "targetFpr": target_fpr,
        "method": f"{folds}-fold out-of-fold scores of the training data",
        "ham": int(ham.size),
        "spam": int(spam.size),
        "fpr": float(np.mean(ham >= t)),
        "recall": float(np.mean(spam >= t)),
    }
