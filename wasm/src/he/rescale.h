// Modulus switching: round(z·m / from) for z in [0, from), constant-time
// (docs/crypto.md#extraction-pipeline). m is either 2^bits (the result taken
// mod 2^bits) or a smaller modulus (the result mod m); both need m < from < 2^55.
#pragma once

#include <cstdint>

#include "he/ring.h"

namespace pmf::he {

class Rescale {
 public:
  // To 2^bits from `from`.
  static Rescale to_pow2(unsigned bits, uint64_t from) {
    return Rescale(from, uint64_t(1) << bits, (uint64_t(1) << bits) - 1, 0);
  }
  // To the modulus `to` < from.
  static Rescale to_modulus(uint64_t to, uint64_t from) {
    return Rescale(from, to, ~uint64_t(0), to);
  }

  // floor((z·m + from/2) / from): an estimate from the fixed-point scale,
  // then at most two constant-time corrections. All products wrap mod 2^64;
  // the remainder they give is exact because it is below 3·from.
  uint64_t operator()(uint64_t z) const {
    uint64_t y = mulhi64(z, scale_);
    uint64_t rem = z * m_ + (from_ >> 1) - y * from_;
    for (int k = 0; k < 2; ++k) {
      const uint64_t over = ge_mask(rem, from_);
      y += over & 1;
      rem -= over & from_;
    }
    y &= mask_;
    return mod_ ? y - (mod_ & ge_mask(y, mod_)) : y;  // y ≤ m: m itself is 0
  }

 private:
  Rescale(uint64_t from, uint64_t m, uint64_t mask, uint64_t mod)
      : from_(from),
        m_(m),
        mask_(mask),
        mod_(mod),
        scale_(uint64_t((static_cast<unsigned __int128>(m) << 64) / from)) {}  // public
  uint64_t from_, m_, mask_, mod_, scale_;  // scale = floor(2^64·m / from) < 2^64
};

}  // namespace pmf::he
