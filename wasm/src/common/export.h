// Marks a function as part of the WASM module's C ABI. The TypeScript
// wrappers in wasm/ts/ are the only callers; keep signatures to integers
// and pointers into linear memory.
#pragma once

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define PMF_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define PMF_EXPORT extern "C"
#endif
