// Per-user key switching: the answer to the decryption oracle (docs/security.md).
//
// The provider never decrypts a client's ciphertext under the model key s.
// Each user u gets a key-switching key KSK_u = {RLWE_{s_u}(g^i·s)}_{i<ℓ} for a
// ternary s_u derived from a provider secret, the user and a key epoch; the
// client re-randomizes under s, switches its ciphertext to s_u and only then
// blinds, floods and extracts. A malicious client's chosen ciphertexts thus
// leak bits of s_u, not of s, and the provider rotates s_u (next epoch) after
// a small budget of decryptions, far below what recovers s_u.
//
// Gadget: balanced base-2^8 digits of the centered value in (−q/2, q/2),
// ℓ = 14 digits (112 bits ≥ log2 q + 1). The KSK's a parts are expanded from
// a seed (index i + 1 of expand_uniform), so only the b parts are shipped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "he/scheme.h"

namespace pmf::he {

constexpr unsigned kKsBaseBits = 8;
constexpr size_t kKsDigits = 14;
constexpr uint8_t kKskTag = 'K';
constexpr size_t kKskBytes = 2 + kSeedBytes + kKsDigits * kLimbs * kPackedLimbBytes;
constexpr uint8_t kKskNoiseNonce[12] = {'p', 'm', 'f', '-', 'h', 'e', '-', 'k', 's', 'k', 0, 0};

// Bound on the noise the switch adds, |Σ_i (d_i·e_i)[j]|, exceeded with
// probability < 2^-80: each of the n·ℓ terms d·e has |d| ≤ 2^7 and e
// centered binomial (η = 21, sub-Gaussian with variance proxy η/2), so the
// sum is sub-Gaussian with proxy n·ℓ·2^14·η/2 and its 2^-80 tail is
// sqrt(2·80·ln 2·proxy) ≈ 1.05·2^20. wasm/test/he-keyswitch.test.ts measures it.
constexpr uint64_t kKsNoiseBound = uint64_t(1) << 21;

// The client's loaded KSK, in NTT form with Shoup companions.
struct KeySwitchKey {
  uint64_t k0[kKsDigits][kLimbs][kN], k0_shoup[kKsDigits][kLimbs][kN];
  uint64_t k1[kKsDigits][kLimbs][kN], k1_shoup[kKsDigits][kLimbs][kN];
};

// Provider: KSK from `from` (the model key s) to `to` (a user key s_u); its
// errors come from e_seed, so the same (user, epoch) always gives the same
// bytes (fresh errors per request would let a client average them away).
Status ksk_generate(const SecretKey& from, const SecretKey& to, const uint8_t a_seed[32],
                    const uint8_t e_seed[32], uint8_t out[kKskBytes]);

// Client: validates (every b value < q_i) and loads a serialized KSK.
Status ksk_load(const uint8_t* in, size_t len, KeySwitchKey& k);

// (b, a) with b + a·s = phase, both in coefficient form, becomes (b + ks_b,
// ks_a) with b + ks_b + ks_a·s_u = phase + Σ_i d_i·e_i. Constant-time in a.
Status key_switch(const KeySwitchKey& k, const uint64_t a[kLimbs][kN], uint64_t ks_b[kLimbs][kN],
                  uint64_t ks_a[kLimbs][kN]);

}  // namespace pmf::he
