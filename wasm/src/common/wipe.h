// Zeroing that the optimizer may not drop, for buffers that held secrets
// (keys, noise, masks, labels, seeds, OT rows).
#pragma once

#include <cstddef>
#include <cstring>

namespace pmf {

inline void secure_wipe(void* p, size_t n) {
  std::memset(p, 0, n);
  asm volatile("" : : "r"(p) : "memory");  // the zeroed memory counts as read
}

}  // namespace pmf
