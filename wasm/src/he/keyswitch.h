// Per-user key switching and dimension reduction (docs/crypto.md#per-user-key-switching).
//
// The provider never decrypts a client's ciphertext under the model key s.
// Each user u gets a ternary key s_u of dimension n' = n/2 = 2048, derived from
// a provider secret, the user and a key epoch, and a key-switching key
// KSK_u = {RLWE_{s_u(X²)}(g^i·s) mod q2}_{i<ℓ} in R_4096. s_u lives in the
// subring R_2048 ↪ R_4096 (Y = X²): as an RLWE instance, KSK_u is 2ℓ samples
// of RLWE(n = 2048, q2 < 2^54, ternary secret, σ ≈ 3.24), 128-bit secure by
// the HomomorphicEncryption.org tables (n = 2048 allows log q ≤ 54).
//
// The client re-randomizes under s, blinds and floods at q = q1·q2, drops q1
// (the noise is then ≈ 2^-54 of what it was), switches from s to s_u(X²) and
// extracts coefficient j. Against s_u(X²) only the even a-coefficients
// matter, so the LWE ciphertext it sends has dimension 2048, not 4096.
// The switch's noise Σ d_i·e_i is added after the flood; it is a function of
// the re-randomized a part alone, independent of the email (docs/security.md).
// A malicious client's chosen ciphertexts leak bits of s_u, not of s, and the
// provider rotates s_u (next epoch) long before they recover it.
//
// Gadget: balanced base-2^8 digits of the centered value in (−q2/2, q2/2),
// ℓ = 7 digits (56 bits ≥ log2 q2 + 1). The KSK's a parts are expanded from
// a seed (index i + 1 of expand_uniform, limb 1), so only the b parts are shipped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "he/scheme.h"

namespace pmf::he {

constexpr unsigned kKsBaseBits = 8;
constexpr size_t kKsDigits = 7;
constexpr size_t kKsLimb = 1;  // the switch runs modulo q2 alone
constexpr uint8_t kKskTag = 'K';
constexpr uint8_t kKskVersion = 2;  // 1 was the two-limb switch to a 4096-dimensional s_u
constexpr size_t kKskBytes = 2 + kSeedBytes + kKsDigits * kPackedLimbBytes;
constexpr uint8_t kKskNoiseNonce[12] = {'p', 'm', 'f', '-', 'h', 'e', '-', 'k', 's', 'k', 0, 0};

// The noise the switch adds modulo q2, Σ_i (d_i·e_i)[j], exceeds 2^20 with
// probability < 2^-80: each of the n·ℓ terms d·e has |d| ≤ 2^7 and e
// centered binomial (η = 21, sub-Gaussian with variance proxy η/2), so the
// sum is sub-Gaussian with proxy n·ℓ·2^14·η/2 ≈ 2^32.2 and its 2^-80 tail is
// sqrt(2·80·ln 2·proxy) ≈ 2^19.5. After the switch to 2^Q it is scaled by
// 2^Q/q2 (docs/crypto.md#plaintext-and-output-modulus); wasm/test/he-failure.slow.test.ts runs
// 10^5 extractions at T = 32, where that is largest.

// The client's loaded KSK, in NTT form modulo q2 with Shoup companions.
struct KeySwitchKey {
  uint64_t k0[kKsDigits][kN], k0_shoup[kKsDigits][kN];
  uint64_t k1[kKsDigits][kN], k1_shoup[kKsDigits][kN];
};

// Provider: KSK from `from` (the model key s) to `to` (a user key, in the
// subring: sk_derive_user); its errors come from e_seed, so the same (user,
// epoch) always gives the same bytes (fresh errors per request would let a
// client average them away).
Status ksk_generate(const SecretKey& from, const SecretKey& to, const uint8_t a_seed[32],
                    const uint8_t e_seed[32], uint8_t out[kKskBytes]);

// Client: validates (every b value < q2) and loads a serialized KSK.
Status ksk_load(const uint8_t* in, size_t len, KeySwitchKey& k);

// a (coefficient form, mod q2) with b + a·s = phase becomes (b + ks_b, ks_a)
// with b + ks_b + ks_a·s_u(X²) = phase + Σ_i d_i·e_i mod q2. Constant-time in a.
Status key_switch(const KeySwitchKey& k, const uint64_t a[kN], uint64_t ks_b[kN],
                  uint64_t ks_a[kN]);

}  // namespace pmf::he
