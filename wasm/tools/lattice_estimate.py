"""Security estimate of the lattice instances behind the model key (docs/crypto.md#security-of-the-keys).

The primal uSVP attack under the "2016 estimate" (Alkim, Ducas, Pöppelmann,
Schwabe, "Post-quantum key exchange: a new hope", USENIX Security 2016), as
the HomomorphicEncryption.org standard's tables were computed (Albrecht et
al., "Homomorphic Encryption Security Standard", 2018, with the lattice
estimator of that time), plus leaked bits counted as perfect hints (Dachman-
Soled, Ducas, Gong, Rossi, "LWE with side information", CRYPTO 2020).

- LWE with secret dimension n, modulus q, error standard deviation sigma and
  a secret of standard deviation sigma_s. The embedding lattice of m samples
  (Bai-Galbraith, the secret scaled by nu = sigma / sigma_s so that every
  coordinate of the target has standard deviation sigma) has dimension
  d = m + n + 1 and volume q^m · nu^n.
- BKZ-beta finds the target when sqrt(beta)·sigma <= delta^(2·beta - d - 1)·Vol^(1/d),
  delta = ((pi·beta)^(1/beta) · beta / (2·pi·e))^(1/(2(beta-1))); beta is the
  smallest integer that satisfies it, minimized over m.
- Cost of BKZ-beta: 8d calls to an SVP oracle in dimension beta, each a sieve
  of 2^(0.292·beta + 16.4) operations classically (Becker, Ducas, Gama,
  Laarhoven 2016) or 2^(0.265·beta + 16.4) with Grover speed-ups (Laarhoven
  2015): the standard's "BKZ.sieve" and "BKZ.qsieve".
- A perfect hint <v, s> = l removes one dimension (DDGR20, §4.1). A hint on a
  single secret coordinate also removes that coordinate's share of the
  volume, the most any one hint can do; a decryption verdict reveals one bit,
  at most one such hint. h hints are modelled as LWE in dimension n - h.

Run: models/.venv/bin/python wasm/tools/lattice_estimate.py [--json]
The parameters below are the ones the code uses; wasm/test/he-estimate.test.ts
compares them with the code's constants and this script's output with the
figures docs/crypto.md quotes, so a change to either fails until the estimate
is re-run and the docs re-quoted.
"""

import json
import sys
from math import e, log2, pi, sqrt

# What the code uses (wasm/src/he/ring.h, keyswitch.h; provider-server/src/limits.ts).
PARAMS = {
    "n": 4096,  # ring dimension of the model key s
    "q": 18014359854776321 * 18014123631575041,  # q1 · q2
    "n_user": 2048,  # dimension of a user key s_u
    "q_ks": 2**50 - 2**14 + 1,  # modulus of the user-key instance (the KSK)
    "cbd_eta": 21,  # errors: centered binomial, variance eta / 2
    "secret": "ternary",  # uniform in {-1, 0, 1}: variance 2/3
    "user_key_budget": 128,  # decryptions, hence leaked bits, per user key
}

SIGMA = sqrt(PARAMS["cbd_eta"] / 2)
SIGMA_S = sqrt(2 / 3)
CLASSICAL, QUANTUM = 0.292, 0.265


def delta(beta):
    return ((pi * beta) ** (1 / beta) * beta / (2 * pi * e)) ** (1 / (2 * (beta - 1)))


def solves(beta, d, log_vol, sigma):
    return 0.5 * log2(beta) + log2(sigma) <= (2 * beta - d - 1) * log2(delta(beta)) + log_vol / d


def primal_usvp(n, log2_q, sigma=SIGMA, sigma_s=SIGMA_S, hints=0, exponent=CLASSICAL):
    """(bits, beta, m, d) of the cheapest primal uSVP attack on LWE(n - hints, q, sigma)."""
    n -= hints
    log_nu = log2(sigma / sigma_s)
    best = None
    for m in range(n // 4, 3 * n):
        d = m + n + 1
        log_vol = m * log2_q + n * log_nu
        if not solves(d, d, log_vol, sigma):
            continue
        lo, hi = 50, d  # smallest integer beta that succeeds
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if solves(mid, d, log_vol, sigma) else (mid, hi)
        bits = exponent * hi + 16.4 + log2(8 * d)
        if best is None or bits < best[0]:
            best = (bits, hi, m, d)
    return best


def rows():
    p = PARAMS
    log_qks, log_q = log2(p["q_ks"]), log2(p["q"])
    q2 = log2(18014123631575041)
    budget = p["user_key_budget"]
    table = [
        # The standard's 128-bit rows (sigma = 3.2, ternary): the calibration.
        ("HE standard n = 2048, log2 q = 54", 2048, 54, 3.2, 0),
        ("HE standard n = 4096, log2 q = 109", 4096, 109, 3.2, 0),
        # The user keys before this modulus: reproduces the review's 129.8 / 121.2 / 112.4.
        ("user key at q2 (2^54), no hints", p["n_user"], q2, SIGMA, 0),
        ("user key at q2 (2^54), 128 hints", p["n_user"], q2, SIGMA, 128),
        ("user key at q2 (2^54), 256 hints", p["n_user"], q2, SIGMA, 256),
        # What the code uses.
        ("user key at q_ks, no hints", p["n_user"], log_qks, SIGMA, 0),
        (f"user key at q_ks, {budget} hints (its whole budget)", p["n_user"], log_qks, SIGMA, budget),
        ("model key s, no hints", p["n"], log_q, SIGMA, 0),
    ]
    out = []
    for name, n, lq, sigma, h in table:
        c = primal_usvp(n, lq, sigma, hints=h)
        qu = primal_usvp(n, lq, sigma, hints=h, exponent=QUANTUM)
        out.append(
            {
                "instance": name,
                "n": n,
                "log2_q": round(lq, 3),
                "sigma": round(sigma, 3),
                "hints": h,
                "beta": c[1],
                "classical": round(c[0], 1),
                "quantum": round(qu[0], 1),
            }
        )
    return out


def main():
    result = {"params": {k: str(v) if k == "q" else v for k, v in PARAMS.items()}, "rows": rows()}
    if "--json" in sys.argv:
        print(json.dumps(result))
        return
    print(f"{'instance':<52} {'n':>5} {'log2 q':>7} {'hints':>5} {'beta':>5} {'classical':>9} {'quantum':>8}")
    for r in result["rows"]:
        print(
            f"{r['instance']:<52} {r['n']:>5} {r['log2_q']:>7.2f} {r['hints']:>5} {r['beta']:>5} "
            f"{r['classical']:>9.1f} {r['quantum']:>8.1f}"
        )


if __name__ == "__main__":
    main()
