// The tweakable correlation-robust hash of the garbling scheme: the ChaCha20
// block function (RFC 8439, common/chacha_simd.h) on four labels at once. The
// OT PRG is common/chacha20's keystream. Constant-time: only additions, XORs
// and fixed rotations, no tables.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/chacha20.h"  // the keystream (pmf::chacha20_stream) used by OT and garbling
#include "gc/block.h"

namespace pmf::gc {

// Rounds of the label hash: the full 20 of ChaCha20, not a reduced variant,
// so the hash has ChaCha20's margin over the best published attacks (7
// rounds) rather than one round of it. It costs ~0.12 µs more per AND gate
// and role than ChaCha8 (hash_4way row of bench/suites/gc.ts), a few µs per
// email, and makes each hash a plain ChaCha20 block that tests check against
// OpenSSL.
constexpr int kHashRounds = 20;

// H(x, tweak): ChaCha20 with key (x || K_gc), block counter = low 32 bits of
// the tweak, nonce = (high 32 bits, 0, 0), output bytes 16..31 of the block.
// K_gc is a fixed public constant. Four hashes at once; the permutation is a
// random permutation in the analysis (as fixed-key AES is in the half-gates
// paper), the input label sits in the secret part of its input.
void hash4(const block x[4], const uint64_t tweak[4], block out[4]);

}  // namespace pmf::gc
