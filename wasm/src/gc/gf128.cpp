#include "gc/gf128.h"

namespace pmf::gc {
namespace {

// Low 64 bits of the carry-less product. Each partial product keeps bits 4
// apart, so a column sums at most 16 ones and any carry lands outside the
// lanes that are kept (see BearSSL ghash_ctmul64.c for the argument).
inline uint64_t bmul64(uint64_t x, uint64_t y) {
  const uint64_t m0 = 0x1111111111111111ull, m1 = m0 << 1, m2 = m0 << 2, m3 = m0 << 3;
  const uint64_t x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
  const uint64_t y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
  uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
  uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
  uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
  uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
  return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

inline uint64_t rev64(uint64_t x) {
  x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
  x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
  x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
  x = ((x >> 8) & 0x00FF00FF00FF00FFull) | ((x & 0x00FF00FF00FF00FFull) << 8);
  x = ((x >> 16) & 0x0000FFFF0000FFFFull) | ((x & 0x0000FFFF0000FFFFull) << 16);
  return (x >> 32) | (x << 32);
}

// Full 128-bit carry-less product of two 64-bit polynomials.
inline void clmul64(uint64_t x, uint64_t y, uint64_t& lo, uint64_t& hi) {
  lo = bmul64(x, y);
  hi = rev64(bmul64(rev64(x), rev64(y))) >> 1;
}

}  // namespace

void Gf128Acc::mul_add(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  // Karatsuba: three 64x64 products.
  uint64_t l0, l1, h0, h1, m0, m1;
  clmul64(a0, b0, l0, l1);
  clmul64(a1, b1, h0, h1);
  clmul64(a0 ^ a1, b0 ^ b1, m0, m1);
  m0 ^= l0 ^ h0;
  m1 ^= l1 ^ h1;
  c[0] ^= l0;
  c[1] ^= l1 ^ m0;
  c[2] ^= h0 ^ m1;
  c[3] ^= h1;
}

void Gf128Acc::reduce(uint64_t out[2]) const {
  // X^128 = X^7 + X^2 + X + 1: fold the top word, then the next one.
  uint64_t c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
  c1 ^= c3 ^ (c3 << 1) ^ (c3 << 2) ^ (c3 << 7);
  c2 ^= (c3 >> 63) ^ (c3 >> 62) ^ (c3 >> 57);
  c0 ^= c2 ^ (c2 << 1) ^ (c2 << 2) ^ (c2 << 7);
  c1 ^= (c2 >> 63) ^ (c2 >> 62) ^ (c2 >> 57);
  out[0] = c0;
  out[1] = c1;
}

Gf128DotPublic::Gf128DotPublic() {
  for (auto& row : bucket_)
    for (auto& b : row) b = wasm_i64x2_const(0, 0);
}

void Gf128DotPublic::add(const uint8_t chi[16], v128_t t) {
  for (int m = 0; m < 16; ++m) {
    bucket_[2 * m][chi[m] & 15] = wasm_v128_xor(bucket_[2 * m][chi[m] & 15], t);
    bucket_[2 * m + 1][chi[m] >> 4] = wasm_v128_xor(bucket_[2 * m + 1][chi[m] >> 4], t);
  }
}

void Gf128DotPublic::reduce(uint64_t out[2]) const {
  // sum_j chi_j t_j = sum_i X^(4i) sum_v v(X) bucket[i][v]
  //                 = sum_i sum_k X^(4i+k) (XOR of bucket[i][v] over v with bit k set).
  Gf128Acc acc;
  for (int i = 0; i < 32; ++i) {
    for (int k = 0; k < 4; ++k) {
      v128_t s = wasm_i64x2_const(0, 0);
      for (int v = 0; v < 16; ++v)
        if ((v >> k) & 1) s = wasm_v128_xor(s, bucket_[i][v]);
      const uint64_t lo = static_cast<uint64_t>(wasm_i64x2_extract_lane(s, 0));
      const uint64_t hi = static_cast<uint64_t>(wasm_i64x2_extract_lane(s, 1));
      const int b = 4 * i + k;  // multiply by X^b: shift into the 256-bit sum
      const int w = b / 64, r = b % 64;
      acc.c[w] ^= lo << r;
      acc.c[w + 1] ^= (hi << r) | (r ? lo >> (64 - r) : 0);
      acc.c[w + 2] ^= r ? hi >> (64 - r) : 0;  // w <= 1, so w + 2 <= 3
    }
  }
  acc.reduce(out);
}

}  // namespace pmf::gc
