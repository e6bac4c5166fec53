import itertools

import numpy as np
import pytest

from pmf_models.quantize import choose_t, default_b_in, dot_bound, model_t, qmax, quantize, worst_case


def test_t_is_minimal_and_sufficient():
    for b_in, cap, l_max in itertools.product(range(2, 17), (1, 15, 255), (1, 692, 4096, 65536)):
        t = choose_t(b_in, cap, l_max)
        bound = dot_bound(b_in, cap, l_max)
        assert bound < 2 ** (t - 1)
        assert bound >= 2 ** (t - 2)


def test_default_b_in_keeps_t_within_30():
    assert default_b_in(15, 4096) == 14
    assert default_b_in(1, 4096) == 16
    assert choose_t(default_b_in(255, 65536), 255, 65536) <= 30
    with pytest.raises(ValueError, match="lower lMax"):
        default_b_in(2**16 - 1, 2**20, t_max=20)


def test_quantize_uses_the_full_range_and_rounds_to_nearest():
    w = np.array([[0.5, -2.0], [1.0, 0.25], [-0.74, 0.0]])
    q, scale = quantize(w, 8)
    assert scale == pytest.approx(127 / 2.0)
    assert q.dtype == np.int32
    assert np.abs(q).max() == 127
    np.testing.assert_array_equal(q, np.rint(w * scale))
    assert np.all(np.abs(q - w * scale) <= 0.5)
    zero, _ = quantize(np.zeros((3, 1)), 8)
    assert not zero.any()


def test_worst_case_matches_brute_force_over_all_admissible_emails():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n, cap, l_max = 6, 3, 3
        w = rng.integers(-qmax(6), qmax(6) + 1, size=(n + 1, 2)).astype(np.int32)
        best = np.zeros(2, dtype=np.int64)
        for x in itertools.product(range(cap + 1), repeat=n):
            if sum(v > 0 for v in x) > l_max:
                continue
            d = w[0].astype(np.int64) + np.array(x) @ w[1:].astype(np.int64)
            best = np.maximum(best, np.abs(d))
        np.testing.assert_array_equal(worst_case(w, cap, l_max), best)
        assert np.all(best <= dot_bound(6, cap, l_max))


def test_model_t_is_the_smallest_width_that_holds_the_worst_email():
    rng = np.random.default_rng(3)
    for b_in, cap, l_max in [(12, 15, 1024), (8, 1, 40), (14, 15, 4096)]:
        w = (rng.laplace(size=(5001, 3)) * qmax(b_in) / 8).clip(-qmax(b_in), qmax(b_in)).astype(np.int32)
        t = model_t(w, cap, l_max, b_in)
        worst = worst_case(w, cap, l_max).max()
        assert worst < 2 ** (t - 1)
        assert worst >= 2 ** (t - 2) or t == b_in
        assert b_in <= t <= choose_t(b_in, cap, l_max)
    assert model_t(np.zeros((4, 1), dtype=np.int32), 15, 10, 6) == 6
