import numpy as np
import pytest

from conftest import synthetic
from pmf_models import pipeline, threshold


def brute_force(ham, other, target):
    """Every candidate threshold tried: the lowest with few enough ham at or above it."""
    allowed = int(np.floor(target * len(ham)))
    for t in sorted(set(np.concatenate([ham, other]))):
        if np.sum(ham >= t) <= allowed:
            return t
    return np.inf


@pytest.mark.parametrize("seed", range(20))
def test_threshold_is_the_lowest_that_keeps_the_false_positive_rate(seed):
    rng = np.random.default_rng(seed)
    ham = rng.normal(-2, 1.5, size=rng.integers(5, 3000)).round(rng.integers(1, 4))  # ties too
    spam = rng.normal(2, 1.5, size=rng.integers(5, 1000))
    for target in (0.0, 0.001, 0.01, 0.2):
        t = threshold.threshold_for(ham, spam, target)
        assert np.sum(ham >= t) <= np.floor(target * len(ham)), "the rate holds"
        reference = brute_force(ham, spam, target)
        assert t <= reference, "no score between the chosen and the lowest valid threshold is lost"
        below = np.concatenate([ham, spam])
        assert not np.any((below >= t) & (below < reference)), "the same verdicts as the lowest valid one"


def test_chosen_threshold_is_folded_and_recorded_and_holds_on_held_out_ham(spec):
    x, y = synthetic(3000, 2, seed=5)
    noisy = np.random.default_rng(1).random(len(y)) < 0.1  # overlapping classes: the threshold matters
    y = np.where(noisy, 1 - y, y)
    xt, yt = x[2000:], y[2000:]
    x, y = x[:2000], y[:2000]
    t0 = pipeline.evaluate(*pipeline.fit("spam", "lr", ["ham", "spam"], spec, x, y)[:3], xt, yt)["quantized"]
    t, choice = threshold.choose("lr", ["ham", "spam"], spec, x, y, target_fpr=0.01)
    assert choice["fpr"] <= 0.01 and choice["ham"] == int(np.sum(y == 0))
    header, w_int, w = pipeline.fit("spam", "lr", ["ham", "spam"], spec, x, y, threshold=t)
    assert header["threshold"] == t
    held = pipeline.evaluate(header, w_int, w, xt, yt)["quantized"]
    assert held["fpr"] < t0["fpr"], "fewer legitimate messages to Junk than at threshold 0"
    assert held["fpr"] <= 0.03, held


def test_target_out_of_range_and_too_few_examples(spec):
    x, y = synthetic(40, 2)
    with pytest.raises(ValueError, match="must be in"):
        threshold.choose("lr", ["ham", "spam"], spec, x, y, target_fpr=1.0)
    with pytest.raises(ValueError, match="at least 5"):
        threshold.choose("lr", ["ham", "spam"], spec, x[:6], y[:6])
