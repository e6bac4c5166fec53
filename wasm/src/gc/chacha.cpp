#include "gc/chacha.h"

#include <cstring>

namespace pmf::gc {
namespace {

inline v128_t rotl16(v128_t v) {
  return wasm_i8x16_shuffle(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
}
inline v128_t rotl8(v128_t v) {
  return wasm_i8x16_shuffle(v, v, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
}
inline v128_t rotl12(v128_t v) {
  return wasm_v128_or(wasm_i32x4_shl(v, 12), wasm_u32x4_shr(v, 20));
}
inline v128_t rotl7(v128_t v) { return wasm_v128_or(wasm_i32x4_shl(v, 7), wasm_u32x4_shr(v, 25)); }

inline void quarter(v128_t& a, v128_t& b, v128_t& c, v128_t& d) {
  a = wasm_i32x4_add(a, b);
  d = rotl16(wasm_v128_xor(d, a));
  c = wasm_i32x4_add(c, d);
  b = rotl12(wasm_v128_xor(b, c));
  a = wasm_i32x4_add(a, b);
  d = rotl8(wasm_v128_xor(d, a));
  c = wasm_i32x4_add(c, d);
  b = rotl7(wasm_v128_xor(b, c));
}

// Lane k of x[w] is word w of state k. Runs `rounds` rounds and adds the input.
template <int rounds>
inline void chacha4(const v128_t in[16], v128_t x[16]) {
  for (int i = 0; i < 16; ++i) x[i] = in[i];
  for (int r = 0; r < rounds; r += 2) {
    quarter(x[0], x[4], x[8], x[12]);
    quarter(x[1], x[5], x[9], x[13]);
    quarter(x[2], x[6], x[10], x[14]);
    quarter(x[3], x[7], x[11], x[15]);
    quarter(x[0], x[5], x[10], x[15]);
    quarter(x[1], x[6], x[11], x[12]);
    quarter(x[2], x[7], x[8], x[13]);
    quarter(x[3], x[4], x[9], x[14]);
  }
  for (int i = 0; i < 16; ++i) x[i] = wasm_i32x4_add(x[i], in[i]);
}

// 4x4 transpose of 32-bit words: rows become columns.
inline void transpose4(v128_t& a, v128_t& b, v128_t& c, v128_t& d) {
  v128_t t0 = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5);
  v128_t t1 = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
  v128_t t2 = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5);
  v128_t t3 = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
  a = wasm_i64x2_shuffle(t0, t2, 0, 2);
  b = wasm_i64x2_shuffle(t0, t2, 1, 3);
  c = wasm_i64x2_shuffle(t1, t3, 0, 2);
  d = wasm_i64x2_shuffle(t1, t3, 1, 3);
}

constexpr uint32_t kSigma[4] = {0x61707865, 0x3320646e, 0x79622d32,
                                0x6b206574};  // "expand 32-byte k"
constexpr uint32_t kGcKey[4] = {0x2d666d70, 0x682d6367, 0x2d687361,
                                0x61646574};  // "pmf-gc-hash-teda"

}  // namespace

void hash4(const block xs[4], const uint64_t tweak[4], block out[4]) {
  v128_t in[16], x[16];
  for (int i = 0; i < 4; ++i) in[i] = wasm_i32x4_splat(static_cast<int32_t>(kSigma[i]));
  in[4] = xs[0];
  in[5] = xs[1];
  in[6] = xs[2];
  in[7] = xs[3];
  transpose4(in[4], in[5], in[6], in[7]);
  for (int i = 0; i < 4; ++i) in[8 + i] = wasm_i32x4_splat(static_cast<int32_t>(kGcKey[i]));
  in[12] = wasm_i32x4_make(static_cast<int32_t>(tweak[0]), static_cast<int32_t>(tweak[1]),
                           static_cast<int32_t>(tweak[2]), static_cast<int32_t>(tweak[3]));
  in[13] =
      wasm_i32x4_make(static_cast<int32_t>(tweak[0] >> 32), static_cast<int32_t>(tweak[1] >> 32),
                      static_cast<int32_t>(tweak[2] >> 32), static_cast<int32_t>(tweak[3] >> 32));
  in[14] = wasm_i32x4_splat(0);
  in[15] = wasm_i32x4_splat(0);
  chacha4<kHashRounds>(in, x);
  transpose4(x[4], x[5], x[6], x[7]);
  out[0] = x[4];
  out[1] = x[5];
  out[2] = x[6];
  out[3] = x[7];
}

}  // namespace pmf::gc
