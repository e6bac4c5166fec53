// Fresh randomness from the platform CSPRNG: crypto.getRandomValues in
// browsers, workers and Node (one bulk call per 64 KiB, not Emscripten's
// per-byte getentropy), getentropy() in native test builds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmf {

// Fills buf with len CSPRNG bytes. Aborts if the platform has no CSPRNG:
// continuing without randomness would break every security property.
void random_bytes(uint8_t* buf, size_t len);

}  // namespace pmf
