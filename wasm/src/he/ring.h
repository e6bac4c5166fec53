// Frozen ring parameters (docs/crypto.md#parameters) and constant-time arithmetic modulo
// the RNS primes. R_q = Z_q[X]/(X^n + 1), q = q1·q2; the key switch runs modulo
// a third prime q_ks.
//
// q1, q2 are the two largest k·2^32 + 1 below 2^54 (search downward from
// k = 2^22 − 1, deterministic Miller–Rabin): qi ≡ 1 mod 2^32 makes them
// NTT-friendly for n = 4096 (≡ 1 mod 2n) and makes q ≡ 1 mod 2^T for every
// T ≤ 32, so Δ = (q−1)/2^T is exact. q_ks = 2^50 − 2^14 + 1 is the largest
// prime ≡ 1 mod 2n below 2^50: the modulus of the user-key instance, whose
// security after a budget of leaked bits needs log2 q_ks ≤ 50
// (docs/crypto.md#security-of-the-keys). psi_i = g^((qi−1)/2n) for the
// smallest g that gives a primitive 2n-th root. wasm/test/he-params.test.ts
// re-checks all of this with BigInt arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmf::he {

constexpr size_t kN = 4096;
constexpr unsigned kLogN = 12;
constexpr size_t kLimbs = 2;
constexpr uint64_t kQ[kLimbs] = {0x3ffff700000001ULL, 0x3fffc000000001ULL};
constexpr unsigned kQBits = 54;                       // bit length of each qi
constexpr size_t kPackedLimbBytes = kN * kQBits / 8;  // one limb, bit-packed
// Every modulus with NTT tables: q1, q2 and, at index kQksIndex, q_ks.
constexpr size_t kModuli = 3;
constexpr size_t kQksIndex = 2;
constexpr uint64_t kQks = 0x3ffffffffc001ULL;
constexpr unsigned kQksBits = 50;
constexpr uint64_t kModulus[kModuli] = {kQ[0], kQ[1], kQks};
constexpr unsigned kModulusBits[kModuli] = {kQBits, kQBits, kQksBits};
constexpr uint64_t kPsi[kModuli] = {17742327281753919ULL, 2591887741274009ULL, 1094367314627419ULL};
constexpr unsigned kCbdEta = 21;  // error: centered binomial
constexpr unsigned kMaxT = 32;
// LWE output modulus 2^Q: the switch from q_ks, with fixed-point scale
// 2^(64+Q)/q_ks, needs 2^Q < q_ks.
constexpr unsigned kMaxQ = 49;
// Q − T ≥ 9: a decryption margin 2^(Q−T−1) = 256 against the rounding of the
// switch to 2^Q (n' = 2048 terms: variance ≤ 683), the key switch's (variance
// ≤ 45 at every T, he/keyswitch.h) plus the flood (≤ 32 after the switch, see
// max_flood_bits): failure ≤ 2^-44 (docs/crypto.md#plaintext-and-output-modulus).
// wasm/test/he-failure.slow.test.ts measures it.
constexpr unsigned kMinQMinusT = 9;
// The flood must exceed the honest noise bound by this many bits: statistical
// distance ≤ bound/2^(F+1) ≤ 2^-51 per ciphertext. Distances add up over every
// ciphertext a device sends; the client keeps their sum below 2^-40 over the
// device's lifetime (client/core/flood-ledger.ts, docs/security.md#flooding-over-a-lifetime).
constexpr unsigned kFloodMarginBits = 50;
// E|Z| for the encryption of zero's noise Z = −(e·u)[j] + e1 + (e2·s)[j], with
// u, e1, e2 the client's fresh randomness: E[Z²] ≤ n·21²·⅔ + η/2 + n·η/2 ≈ 1116.8²
// even for a p0 error and a key at their extremes. The flood covers E|ν|, not
// the worst case: the distance of E + ν from E is E|ν|/2^(F+1) for ν independent of E.
constexpr uint64_t kEncZeroNoise = 1117;
// Largest flood exponent F for plaintext bits T: after the switch to 2^Q the
// flood is 2^(F+Q)/q ≈ 2^(F+Q−108) ≤ 2^(Q−T−4), an eighth of the margin;
// capped at 100 bits (sampled from 128 random bits).
constexpr unsigned max_flood_bits(unsigned T) { return T >= 4 ? 104 - T : 100; }

// High 64 bits of a·b, from 32-bit halves (wasm has no 64×64→128 multiply).
inline uint64_t mulhi64(uint64_t a, uint64_t b) {
  uint64_t al = uint32_t(a), ah = a >> 32, bl = uint32_t(b), bh = b >> 32;
  uint64_t p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
  uint64_t mid = (p0 >> 32) + uint32_t(p1) + uint32_t(p2);
  return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

// floor(a·b / 2^64) or up to two less: mulhi64 without the low halves'
// product and without the carry of the middle ones (each of the three parts
// dropped is below 1), for Shoup quotients that may be short (mul_shoup_lazier).
inline uint64_t mulhi64_short(uint64_t a, uint64_t b) {
  uint64_t al = uint32_t(a), ah = a >> 32, bl = uint32_t(b), bh = b >> 32;
  return ah * bh + ((al * bh) >> 32) + ((ah * bl) >> 32);
}

// All-ones when x >= y (x, y < 2^63), without a branch.
inline uint64_t ge_mask(uint64_t x, uint64_t y) { return 0 - (((x - y) >> 63) ^ 1); }

inline uint64_t add_mod(uint64_t a, uint64_t b, uint64_t q) {
  uint64_t s = a + b;
  return s - (q & ge_mask(s, q));
}

inline uint64_t sub_mod(uint64_t a, uint64_t b, uint64_t q) {
  uint64_t d = a - b;
  return d + (q & (0 - (d >> 63)));
}

inline uint64_t neg_mod(uint64_t a, uint64_t q) { return sub_mod(0, a, q); }

// Shoup multiplication by a fixed w < q with w' = floor(w·2^64 / q):
// correct for any x < 2^64 and constant-time. w' is computed by restoring
// division, one quotient bit per step with masks: w is often secret (a key's
// NTT coefficients, sk_precompute), and a 128-bit division's running time
// depends on its operands.
inline uint64_t shoup_precompute(uint64_t w, uint64_t q) {
  uint64_t rem = w, quo = 0;  // rem < q < 2^55 throughout
  for (int i = 0; i < 64; ++i) {
    rem <<= 1;
    const uint64_t take = ge_mask(rem, q);
    rem -= q & take;
    quo = (quo << 1) | (take & 1);
  }
  return quo;
}

// x·w mod q in [0, 2q), for any x < 2^64 (Shoup without the final correction).
inline uint64_t mul_shoup_lazy(uint64_t x, uint64_t w, uint64_t w_shoup, uint64_t q) {
  return x * w - mulhi64(x, w_shoup) * q;
}

// x·w mod q in [0, 4q), for any x < 2^64: the quotient ⌊x·w'/2^64⌋ is at
// most one below ⌊x·w/q⌋ and mulhi64_short up to two below that; one
// multiply fewer than mul_shoup_lazy.
inline uint64_t mul_shoup_lazier(uint64_t x, uint64_t w, uint64_t w_shoup, uint64_t q) {
  return x * w - mulhi64_short(x, w_shoup) * q;
}

inline uint64_t mul_shoup(uint64_t x, uint64_t w, uint64_t w_shoup, uint64_t q) {
  const uint64_t r = mul_shoup_lazy(x, w, w_shoup, q);
  return r - (q & ge_mask(r, q));
}

// x mod q for any 64-bit x, constant-time (Shoup with w = 1).
inline uint64_t reduce64(uint64_t x, uint64_t q, uint64_t one_shoup) {
  uint64_t r = x - mulhi64(x, one_shoup) * q;
  return r - (q & ge_mask(r, q));
}

// Signed integer (|v| < q) into [0, q).
inline uint64_t from_signed(int64_t v, uint64_t q) {
  uint64_t u = uint64_t(v);
  return u + (q & (0 - (u >> 63)));
}

uint64_t pow_mod(uint64_t base, uint64_t exp, uint64_t q);  // not constant-time: public data only
uint64_t mul_mod(uint64_t a, uint64_t b,
                 uint64_t q);  // generic, 128-bit division: public data only

// The integer x in (−q/2, q/2] with x ≡ x1 mod q1 and x ≡ x2 mod q2 (x_i < q_i),
// constant-time.
__int128 centered_crt(uint64_t x1, uint64_t x2);

}  // namespace pmf::he
