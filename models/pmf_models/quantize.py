"""Quantization to b_in-bit signed weights and the choice of T.

Weights are scaled by one factor per model so the largest |weight| (bias row
included) becomes 2^(b_in-1) - 1, then rounded to the nearest integer. The
private protocol computes d = bias + sum_f x_f w_f modulo 2^T; T is chosen so
that every admissible email (at most L_max rows, every x_f <= cap) gives
|d| < 2^(T-1), hence the two's-complement result is d itself. choose_t bounds
that for any weights of b_in bits (it picks b_in); model_t for the model's own
weights, a few bits less, and each bit of T is 256 bytes of every ciphertext
(models/plain/bounds.ts is the same in TypeScript).
"""

import numpy as np

# The lattice layer's plaintext modulus is 2^T with T <= 32 (MAX_T in
# wasm/ts/limits.ts; models/test/bounds.test.ts checks the two agree).
MAX_T = 32


def qmax(b_in):
    return (1 << (b_in - 1)) - 1


def dot_bound(b_in, cap, l_max):
    """Largest |d| any admissible email can reach under the format's limits."""
    return l_max * cap * qmax(b_in) + qmax(b_in)


def choose_t(b_in, cap, l_max):
    """Smallest T with 2^(T-1) > dot_bound."""
    return dot_bound(b_in, cap, l_max).bit_length() + 1


def default_b_in(cap, l_max, t_max=30):
    """Finest quantization (at most 16 bits) that keeps T <= t_max."""
    for b in range(16, 1, -1):
        if choose_t(b, cap, l_max) <= t_max:
            return b
    raise ValueError(f"no b_in keeps T <= {t_max} for cap {cap}, L {l_max}: lower lMax or fIn")


def quantize(weights, b_in):
    """Float (N+1)xB -> (int32 (N+1)xB, scale). Zero models quantize to zero."""
    top = float(np.max(np.abs(weights))) if weights.size else 0.0
    scale = qmax(b_in) / top if top > 0 else 1.0
    q = np.rint(weights * scale)
    return np.clip(q, -qmax(b_in), qmax(b_in)).astype(np.int32), scale


def worst_case(weights_int, cap, l_max):
    """Exact max over admissible emails of |d_j|, per column (int64 array).

    For column j the extreme is reached by the L_max rows with the largest
    positive (or most negative) weights, each at the cap.
    """
    rows = weights_int[1:].astype(np.int64)
    bias = weights_int[0].astype(np.int64)
    k = min(l_max, rows.shape[0])
    pos = np.sort(np.maximum(rows, 0), axis=0)[::-1][:k].sum(axis=0)
    neg = np.sort(np.minimum(rows, 0), axis=0)[:k].sum(axis=0)
    return np.maximum(np.abs(bias + cap * pos), np.abs(bias + cap * neg))


def model_t(weights_int, cap, l_max, b_in):
    """Smallest T (at least b_in, so every weight fits) above every admissible email's |d|."""
    return max(b_in, int(worst_case(weights_int, cap, l_max).max()).bit_length() + 1)
