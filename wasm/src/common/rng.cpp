#include "common/rng.h"

#include <cstdlib>

#include "common/export.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>

// Emscripten 3.1.6's getentropy() makes one JS call per byte; fill the whole
// buffer with the platform CSPRNG directly (globalThis.crypto exists in
// browsers, workers and Node >= 19). Returns 0 on success.
EM_JS(int, pmf_js_random_fill, (uint8_t * buf, size_t len), {
  var c = globalThis.crypto;
  if (!c || typeof c.getRandomValues != "function") return -1;
  for (var off = 0; off < len; off += 65536) {  // getRandomValues' per-call cap
    c.getRandomValues(HEAPU8.subarray(buf + off, buf + Math.min(len, off + 65536)));
  }
  return 0;
});
#else
#include <unistd.h>
#endif

namespace pmf {

void random_bytes(uint8_t* buf, size_t len) {
#ifdef __EMSCRIPTEN__
  if (pmf_js_random_fill(buf, len) != 0) abort();
#else
  while (len > 0) {
    size_t chunk = len < 256 ? len : 256;  // getentropy's per-call limit
    if (getentropy(buf, chunk) != 0) abort();
    buf += chunk;
    len -= chunk;
  }
#endif
}

}  // namespace pmf

PMF_EXPORT void pmf_random_bytes(uint8_t* buf, size_t len) { pmf::random_bytes(buf, len); }
