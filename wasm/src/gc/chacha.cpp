#include "gc/chacha.h"

#include "common/chacha_simd.h"

namespace pmf::gc {
namespace {

using namespace pmf::chacha_simd;

constexpr uint32_t kGcKey[4] = {0x2d666d70, 0x682d6367, 0x2d687361,
                                0x61646574};  // "pmf-gc-hash-teda"

}  // namespace

void hash4(const block xs[4], const uint64_t tweak[4], block out[4]) {
  v128_t in[16], x[16];
  for (int i = 0; i < 4; ++i) in[i] = wasm_i32x4_splat(static_cast<int32_t>(kSigma[i]));
  in[4] = xs[0];
  in[5] = xs[1];
  in[6] = xs[2];
  in[7] = xs[3];
  transpose4(in[4], in[5], in[6], in[7]);
  for (int i = 0; i < 4; ++i) in[8 + i] = wasm_i32x4_splat(static_cast<int32_t>(kGcKey[i]));
  in[12] = wasm_i32x4_make(static_cast<int32_t>(tweak[0]), static_cast<int32_t>(tweak[1]),
                           static_cast<int32_t>(tweak[2]), static_cast<int32_t>(tweak[3]));
  in[13] =
      wasm_i32x4_make(static_cast<int32_t>(tweak[0] >> 32), static_cast<int32_t>(tweak[1] >> 32),
                      static_cast<int32_t>(tweak[2] >> 32), static_cast<int32_t>(tweak[3] >> 32));
  in[14] = wasm_i32x4_splat(0);
  in[15] = wasm_i32x4_splat(0);
  permute4<kHashRounds>(in, x);
  transpose4(x[4], x[5], x[6], x[7]);
  out[0] = x[4];
  out[1] = x[5];
  out[2] = x[6];
  out[3] = x[7];
}

}  // namespace pmf::gc
