// Module-wide exports: ABI version and the constant-time primitives the
// TypeScript side needs directly (label comparison, tag checks).
#include "common/ct.h"
#include "common/export.h"

// Bumped whenever an exported signature or a serialized layout changes, so a
// stale build fails loudly at load time instead of misbehaving.
PMF_EXPORT int pmf_abi_version() { return 5; }

PMF_EXPORT int pmf_ct_memeq(const uint8_t* a, const uint8_t* b, size_t len) {
  return pmf::ct_memeq(a, b, len);
}
