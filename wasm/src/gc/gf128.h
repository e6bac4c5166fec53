// Constant-time GF(2^128) arithmetic for the KOS consistency check, modulo
// X^128 + X^7 + X^2 + X + 1, bit i of a block = coefficient of X^i. WASM has
// no carry-less multiply, so products use integer multiplies with "holes"
// (every 4th bit), the trick of BearSSL's ghash_ctmul64, and are accumulated
// unreduced: one reduction per sum instead of per product.
#pragma once

#include <cstdint>

namespace pmf::gc {

struct Gf128Acc {
  uint64_t c[4] = {0, 0, 0, 0};  // unreduced 256-bit sum of products
  void mul_add(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1);
  void reduce(uint64_t out[2]) const;
};

}  // namespace pmf::gc
