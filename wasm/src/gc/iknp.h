// IKNP OT extension with the KOS consistency check (iknp.cpp has the
// construction). A batch is L OTs, L a positive multiple of 512 up to 2^20;
// `counter` is the first ChaCha20 block of the batch in each seed's stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace pmf::gc {

// Receiver: choice bits r (L/8 bytes), seed pairs k0, k1 (128 x 32 bytes each).
// Writes u (128 x L/8 bytes, to send) and the rows t_j (L x 16 bytes, kept).
Status ot_recv_extend(const uint8_t* k0, const uint8_t* k1, uint32_t counter, size_t L,
                      const uint8_t* r, uint8_t* u, uint8_t* t_rows);

// Sender: its base-OT keys k_{s_i,i} (128 x 32 bytes), s (16 bytes) and the
// receiver's u. Writes the rows q_j (L x 16 bytes).
Status ot_send_extend(const uint8_t* ks, const uint8_t* s, uint32_t counter, size_t L,
                      const uint8_t* u, uint8_t* q_rows);

// Receiver's KOS response for challenge seed (32 bytes): x = sum chi_j r_j,
// t = sum chi_j t_j in GF(2^128); writes x || t (32 bytes).
Status kos_respond(const uint8_t* seed, size_t L, const uint8_t* r, const uint8_t* t_rows,
                   uint8_t* xt);

// Sender's KOS check: 1 if sum chi_j q_j == t + x * s, 0 if not (in constant
// time), kBadBatch if L is bad.
int kos_check(const uint8_t* seed, size_t L, const uint8_t* q_rows, const uint8_t* s,
              const uint8_t* xt);

}  // namespace pmf::gc
