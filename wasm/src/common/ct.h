// Constant-time helpers for code that touches secrets (keys, masks, labels).
// None of these branch on or index memory by their data arguments.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmf {

// All-ones if a == b, else zero, without a data-dependent branch.
inline uint64_t ct_eq_mask(uint64_t a, uint64_t b) {
  uint64_t x = a ^ b;
  // (x | -x) has its top bit set iff x != 0.
  return ((x | (0 - x)) >> 63) - 1;
}

// Selects a if mask is all-ones, b if zero.
inline uint64_t ct_select(uint64_t mask, uint64_t a, uint64_t b) { return b ^ (mask & (a ^ b)); }

// 1 if the two buffers are equal, 0 otherwise; time depends only on len.
inline int ct_memeq(const uint8_t* a, const uint8_t* b, size_t len) {
  uint8_t acc = 0;
  for (size_t i = 0; i < len; ++i) acc |= static_cast<uint8_t>(a[i] ^ b[i]);
  return static_cast<int>(ct_eq_mask(acc, 0) & 1);
}

}  // namespace pmf
