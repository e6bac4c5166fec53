// ChaCha (RFC 8439) evaluated on four states at once with WASM SIMD, used for
// two things:
//  - the PRG that expands OT seeds (ChaCha20 keystream, full 20 rounds), and
//  - the tweakable correlation-robust hash of the garbling scheme (fewer
//    rounds, see kHashRounds and wasm/README.md). It is constant-time: only
//    additions, XORs and fixed rotations, no tables.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/chacha20.h"  // the keystream (pmf::chacha20_stream) used by OT and garbling
#include "gc/block.h"

namespace pmf::gc {

// Rounds of the label hash. ChaCha8 keeps a wide margin over the best known
// attacks on ChaCha (7 rounds) while meeting the per-gate budget; measured in
// bench/suites/gc.ts (hash_4way row).
constexpr int kHashRounds = 8;

// H(x, tweak): ChaCha with key (x || K_gc), block counter = low 32 bits of the
// tweak, nonce = (high 32 bits, 0, 0), reduced to kHashRounds, output bytes
// 16..31 of the block. K_gc is a fixed public constant. Four hashes at once;
// the fixed key is a random permutation in the analysis (as fixed-key AES is
// in the half-gates paper), the input label sits in the secret part of it.
void hash4(const block x[4], const uint64_t tweak[4], block out[4]);

}  // namespace pmf::gc
