#include "he/sample.h"

namespace pmf::he {

void expand_uniform(const uint8_t seed[32], size_t limb, uint64_t* out, uint32_t index) {
  uint8_t nonce[12] = {'p',
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
  ChaCha20Stream xof(seed, nonce);
  const uint64_t q = kModulus[limb], mask = (uint64_t(1) << kModulusBits[limb]) - 1;
  for (size_t i = 0; i < kN;) {
    uint64_t v = xof.next_u64() & mask;
    if (v < q) out[i++] = v;  // rejection depends only on public seed output
  }
}

}  // namespace pmf::he
