// 128-bit blocks (wire labels, OT rows) as WASM SIMD vectors. Bit i of a block
// is bit (i & 7) of byte (i >> 3); the "lsb" used for point-and-permute is bit 0.
#pragma once

#include <wasm_simd128.h>

#include <cstdint>

namespace pmf::gc {

using block = v128_t;

inline block load_block(const uint8_t* p) { return wasm_v128_load(p); }
inline void store_block(uint8_t* p, block b) { wasm_v128_store(p, b); }
inline block zero_block() { return wasm_i64x2_const(0, 0); }

// Bit 0 of the block, as 0 or 1.
inline uint32_t lsb(block b) { return static_cast<uint32_t>(wasm_i32x4_extract_lane(b, 0)) & 1; }

// All-ones block if bit is 1, zero block if 0 (bit must be 0 or 1).
inline block mask_of(uint32_t bit) { return wasm_i32x4_splat(-static_cast<int32_t>(bit)); }

// b if bit is 1, zero otherwise, without branching on bit.
inline block and_bit(block b, uint32_t bit) { return wasm_v128_and(b, mask_of(bit)); }

}  // namespace pmf::gc
