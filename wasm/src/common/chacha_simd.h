// The ChaCha permutation on four states at once with WASM SIMD: lane k of
// x[w] is word w of state k. Shared by the ChaCha20 keystream
// (common/chacha20) and the reduced-round garbling hash (gc/chacha).
// Constant-time: additions, XORs and fixed rotations only, no tables.
#pragma once

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

#include <cstdint>

namespace pmf::chacha_simd {

constexpr uint32_t kSigma[4] = {0x61707865, 0x3320646e, 0x79622d32,
                                0x6b206574};  // "expand 32-byte k"

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

// Runs `rounds` rounds on in and adds the input (the ChaCha block function).
template <int rounds>
inline void permute4(const v128_t in[16], v128_t x[16]) {
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

}  // namespace pmf::chacha_simd

#endif  // __wasm_simd128__
