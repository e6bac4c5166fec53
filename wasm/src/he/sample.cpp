#include "he/sample.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace pmf::he {

void expand_uniform(const uint8_t seed[32], size_t limb, uint64_t* out, uint32_t index,
                    unsigned rounds) {
  const uint8_t nonce[12] = {'p',
                             'm',
                             'f',
                             '-',
                             'h',
                             'e',
                             '-',
                             'a',
                             uint8_t(limb),
                             uint8_t(index),
                             uint8_t(index >> 8),
                             uint8_t(index >> 16)};
  const uint64_t q = kModulus[limb], mask = (uint64_t(1) << kModulusBits[limb]) - 1;
  // The first kN words straight into out (wasm and every native target here
  // are little-endian), masked; a word ≥ q is rejected (public seed output;
  // about one word in 2^16), and only then are they compacted in place and
  // the stream continued where it stopped.
  constexpr uint32_t kWordsPerBlock = 8, kBatch = 4;
  chacha_stream(seed, nonce, 0, reinterpret_cast<uint8_t*>(out), kN / kWordsPerBlock, rounds);
  bool rejected = false;
  size_t i = 0;
#ifdef __wasm_simd128__
  const v128_t vmask = wasm_i64x2_splat(int64_t(mask)), vq = wasm_i64x2_splat(int64_t(q));
  v128_t over = wasm_i64x2_splat(0);
  for (; i + 2 <= kN; i += 2) {
    const v128_t v = wasm_v128_and(wasm_v128_load(out + i), vmask);
    wasm_v128_store(out + i, v);
    over = wasm_v128_or(over, wasm_i64x2_ge(v, vq));  // values < 2^55: signed compare
  }
  rejected = wasm_v128_any_true(over);
#endif
  for (; i < kN; ++i) {
    out[i] &= mask;
    rejected |= out[i] >= q;
  }
  if (!rejected) return;
  size_t kept = 0;
  for (i = 0; i < kN; ++i) {
    const uint64_t v = out[i];
    out[kept] = v;
    kept += v < q;
  }
  uint64_t more[kBatch * kWordsPerBlock];
  for (uint32_t block = kN / kWordsPerBlock; kept < kN; block += kBatch) {
    chacha_stream(seed, nonce, block, reinterpret_cast<uint8_t*>(more), kBatch, rounds);
    for (size_t k = 0; k < kBatch * kWordsPerBlock && kept < kN; ++k) {
      const uint64_t v = more[k] & mask;
      if (v < q) out[kept++] = v;
    }
  }
}

}  // namespace pmf::he
