// Constant-time GF(2^128) arithmetic for the KOS consistency check, modulo
// X^128 + X^7 + X^2 + X + 1, bit i of a block = coefficient of X^i. WASM has
// no carry-less multiply, so products use integer multiplies with "holes"
// (every 4th bit), the trick of BearSSL's ghash_ctmul64, and are accumulated
// unreduced: one reduction per sum instead of per product.
#pragma once

#include <wasm_simd128.h>

#include <cstddef>
#include <cstdint>

#include "common/wipe.h"

namespace pmf::gc {

// Both hold sums of secret terms (the OT rows t_j or q_j, or Δ's products)
// and wipe them when they go out of scope.
struct Gf128Acc {
  uint64_t c[4] = {0, 0, 0, 0};  // unreduced 256-bit sum of products
  ~Gf128Acc() { secure_wipe(c, sizeof c); }
  void mul_add(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1);
  void reduce(uint64_t out[2]) const;
};

// sum_j chi_j * t_j for many j where every chi_j is public (the KOS
// challenge): t_j is XORed into one of 16 buckets per 4-bit digit of chi_j,
// selected by that (public) digit, so a term costs 32 XORs and no multiply;
// the buckets are combined once at the end. Memory access depends only on
// chi, never on the secret t_j.
class Gf128DotPublic {
 public:
  Gf128DotPublic();
  ~Gf128DotPublic() { secure_wipe(bucket_, sizeof bucket_); }
  void add(const uint8_t chi[16], v128_t t);
  void reduce(uint64_t out[2]) const;

 private:
  v128_t bucket_[32][16];  // [digit position][digit value]
};

}  // namespace pmf::gc
