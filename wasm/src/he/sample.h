// Samplers. Seeded expansion is deterministic (known-answer tested); the
// secret samplers draw from a caller's PRG and are constant-time.
#pragma once

#include <cstdint>

#include "common/chacha20.h"
#include "he/ring.h"

namespace pmf::he {

// Uniform polynomial mod kModulus[limb] (q1, q2 or q_ks) from a 32-byte seed:
// ChaCha20 (ChaCha8 with rounds = 8: a model's a in package format 2) keyed
// by the seed, nonce "pmf-he-a" ‖ u8(limb) ‖ u24le(index), 64-bit
// little-endian words masked to the modulus's bit length, rejected when >=
// the modulus (probability ≤ 2^-16 per word). Index 0 is a model
// ciphertext's or p1's a; key-switching keys use limb kQksIndex, indices 1..ℓ.
void expand_uniform(const uint8_t seed[32], size_t limb, uint64_t* out, uint32_t index = 0,
                    unsigned rounds = 20);

// Uniform in {-1, 0, 1}: high word of r·3 (bias < 2^-62).
inline int8_t sample_ternary(ChaCha20Stream& prg) {
  return int8_t(int64_t(mulhi64(prg.next_u64(), 3)) - 1);
}

// Centered binomial with eta = 21: popcount of 21 bits minus popcount of 21 bits.
inline int64_t sample_cbd(ChaCha20Stream& prg) {
  uint64_t r = prg.next_u64();
  return int64_t(__builtin_popcountll(r & 0x1fffff)) -
         int64_t(__builtin_popcountll((r >> 21) & 0x1fffff));
}

}  // namespace pmf::he
