// Zeroing that the optimizer may not drop, for buffers that held labels,
// seeds or OT rows.
#pragma once

#include <cstddef>
#include <cstring>

namespace pmf::gc {

inline void secure_wipe(void* p, size_t n) {
  std::memset(p, 0, n);
  asm volatile("" : : "r"(p) : "memory");
}

}  // namespace pmf::gc
