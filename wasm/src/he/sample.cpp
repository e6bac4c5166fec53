#include "he/sample.h"

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
  // are little-endian), then compacted in place: a word ≥ q is rejected
  // (public seed output; about one word in 2^16), and the stream continues
  // where it stopped only when that happened.
  constexpr uint32_t kWordsPerBlock = 8, kBatch = 4;
  chacha_stream(seed, nonce, 0, reinterpret_cast<uint8_t*>(out), kN / kWordsPerBlock, rounds);
  size_t kept = 0;
  for (size_t i = 0; i < kN; ++i) {
    const uint64_t v = out[i] & mask;
    out[kept] = v;
    kept += v < q;
  }
  uint64_t more[kBatch * kWordsPerBlock];
  for (uint32_t block = kN / kWordsPerBlock; kept < kN; block += kBatch) {
    chacha_stream(seed, nonce, block, reinterpret_cast<uint8_t*>(more), kBatch, rounds);
    for (size_t i = 0; i < kBatch * kWordsPerBlock && kept < kN; ++i) {
      const uint64_t v = more[i] & mask;
      if (v < q) out[kept++] = v;
    }
  }
}

}  // namespace pmf::he
