// Per-user key switching and dimension reduction (docs/crypto.md#per-user-key-switching).
//
// The provider never decrypts a client's ciphertext under the model key s.
// Each user u gets a ternary key s_u of dimension n' = n/2 = 2048, derived from
// a provider secret, the user and a key epoch, and a key-switching key
// KSK_u = {RLWE_{s_u(X²)}(g_i·s) mod q_ks}_{i<ℓ} in R_4096. s_u lives in the
// subring R_2048 ↪ R_4096 (Y = X²): as an RLWE instance, KSK_u is 2ℓ samples
// of RLWE(n = 2048, q_ks < 2^50, ternary secret, σ ≈ 3.24). Whoever recovers
// s_u gets s from it (b_0 + a_0·s_u = g_0·s + e_0), so every user key must
// stay ≥ 128 bits after the bits its budget of decryptions leaks:
// docs/crypto.md#security-of-the-keys, wasm/tools/lattice_estimate.py.
//
// The client re-randomizes under s, blinds and floods at q = q1·q2, drops q1,
// rounds the a-part from q2 to 2^in_bits, decomposes it into ℓ digits and
// switches to s_u(X²) modulo q_ks (the b-part goes from q2 to q_ks directly),
// then extracts coefficient j. Against s_u(X²) only the even a-coefficients
// matter, so the LWE ciphertext it sends has dimension 2048, not 4096. The
// switch's noise is added after the flood; it is a function of the
// re-randomized a part alone, independent of the email (docs/security.md).
//
// Gadget for plaintext bits T (ks_gadget): in_bits = T + 12, base 2^(36 − T)
// (all in_bits in one digit for T ≤ 12), ℓ = ⌈in_bits / base_bits⌉ balanced
// digits of the centered value, the top one taking what is left; digit i of
// the KSK encrypts g_i·s with g_i = round(q_ks·2^(base_bits·i) / 2^in_bits),
// so Σ d_i·g_i ≈ (q_ks/2^in_bits)·ā. After the switch to 2^Q (Q ≥ T + 9) the
// rounding to 2^in_bits adds noise of variance ≤ 2^(2(Q−in_bits))·n/12 ≤ 5.4
// and each digit ≤ 2^(2(Q+base_bits−50))·n·(η/2 + 1/4)/12 ≈ 3.6, so the switch
// stays below variance 45 at every T (docs/crypto.md#plaintext-and-output-modulus).
// The KSK's a parts are expanded from a seed (index i + 1 of expand_uniform,
// modulus q_ks), so only the b parts are shipped: 35 + ℓ·25,600 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "he/scheme.h"

namespace pmf::he {

struct KsGadget {
  unsigned in_bits, base_bits, digits;
};

constexpr unsigned kKsInExtraBits = 12;  // in_bits − T
constexpr unsigned kKsBaseSum = 36;      // base_bits + T

constexpr KsGadget ks_gadget(unsigned T) {
  const unsigned in = T + kKsInExtraBits;
  const unsigned base = T + in <= kKsBaseSum ? in : kKsBaseSum - T;
  return {in, base, (in + base - 1) / base};
}

constexpr size_t kMaxKsDigits = ks_gadget(kMaxT).digits;
constexpr uint8_t kKskTag = 'K';
// 2 was the switch modulo q2 (base 2^8, 7 digits), 1 the two-limb switch to a
// 4096-dimensional s_u.
constexpr uint8_t kKskVersion = 3;
constexpr size_t kKskHeaderBytes = 3 + kSeedBytes;  // tag, version, T, the a-parts' seed
constexpr size_t kKskDigitBytes = kN * kQksBits / 8;
constexpr size_t ksk_bytes(unsigned T) {
  return kKskHeaderBytes + ks_gadget(T).digits * kKskDigitBytes;
}
constexpr uint8_t kKskNoiseNonce[12] = {'p', 'm', 'f', '-', 'h', 'e', '-', 'k', 's', 'k', 0, 0};

// The client's loaded KSK for one T: per digit b and a in NTT form modulo
// q_ks with their Shoup companions, and b in coefficient form as two 25-bit
// halves stored backwards (for key_switch_at).
struct KeySwitchKey {
  static constexpr size_t kParts = 5;
  unsigned T = 0;
  KsGadget gadget{};
  uint64_t* data = nullptr;  // digits × {b, b', a, a', b's halves (2 × n × int32)} × n
  const uint64_t* part(size_t digit, size_t which) const {
    return data + (kParts * digit + which) * kN;
  }
  uint64_t* part(size_t digit, size_t which) { return data + (kParts * digit + which) * kN; }
  int32_t* b_lo(size_t digit) { return reinterpret_cast<int32_t*>(part(digit, 4)); }
  int32_t* b_hi(size_t digit) { return b_lo(digit) + kN; }
  const int32_t* b_lo(size_t digit) const {
    return reinterpret_cast<const int32_t*>(part(digit, 4));
  }
  const int32_t* b_hi(size_t digit) const { return b_lo(digit) + kN; }
  ~KeySwitchKey();
};

// Provider: KSK for plaintext bits T from `from` (the model key s) to `to` (a
// user key, in the subring: sk_derive_user); its errors come from e_seed, so
// the same (user, epoch) always gives the same bytes (fresh errors per request
// would let a client average them away). out holds ksk_bytes(T).
Status ksk_generate(const SecretKey& from, const SecretKey& to, unsigned T,
                    const uint8_t a_seed[32], const uint8_t e_seed[32], uint8_t* out);

// Client: validates (tag, version, T, length, every b value < q_ks) and loads a serialized KSK.
Status ksk_load(const uint8_t* in, size_t len, KeySwitchKey& k);

// a (coefficient form, mod q2) with b + a·s = phase becomes (ks_b, ks_a) mod
// q_ks with round(b·q_ks/q2) + ks_b + ks_a·s_u(X²) = phase·q_ks/q2 + noise.
// Constant-time in a.
Status key_switch(const KeySwitchKey& k, const uint64_t a[kN], uint64_t ks_b[kN],
                  uint64_t ks_a[kN]);

// key_switch with the b-part only at coefficient j < n (ks_b_j) and the a-part
// only at the coefficients of j's parity (ks_a[k] = coefficient 2k + j mod 2,
// k < n/2), all one extraction uses of them: the same values for less work.
Status key_switch_at(const KeySwitchKey& k, const uint64_t a[kN], uint32_t j, uint64_t& ks_b_j,
                     uint64_t ks_a[kN]);

}  // namespace pmf::he
