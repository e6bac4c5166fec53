#include "common/rng.h"

#include <unistd.h>

#include <cstdlib>

#include "common/export.h"

namespace pmf {

void random_bytes(uint8_t* buf, size_t len) {
  while (len > 0) {
    size_t chunk = len < 256 ? len : 256;  // getentropy's per-call limit
    if (getentropy(buf, chunk) != 0) abort();
    buf += chunk;
    len -= chunk;
  }
}

}  // namespace pmf

PMF_EXPORT void pmf_random_bytes(uint8_t* buf, size_t len) { pmf::random_bytes(buf, len); }
