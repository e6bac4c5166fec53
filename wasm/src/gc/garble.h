// Garbling and evaluation of the circuits of wasm/ts/gc-circuit.ts (layout in
// gc/circuit.h), and the label helpers around them. Every label is 16 bytes;
// `tweak` is the first hash tweak of this circuit in the session.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace pmf::gc {

// Garbles the circuit (circ, circ_len) with offset delta (16 bytes, lsb 1).
// The first ng inputs are the garbler's: their zero labels are expanded with
// ChaCha20 from `seed` (32 fresh CSPRNG bytes from the caller: Emscripten's
// getentropy costs a JS call per byte, too slow per email) and their active
// labels (zero ^ bit*delta, bits one per byte in gbits) are written to
// glabels. The remaining inputs are the evaluator's: zero label j = q_rows[j]
// ^ e[j]*delta (its correlated-OT row and derandomization bit). Writes nand x
// 32 bytes of tables and the outputs' zero labels. Returns the AND count, or
// kBadCircuit for a malformed circuit or ng out of range, kBadDelta for a
// delta with lsb 0.
int garble_circuit(const uint8_t* circ, size_t circ_len, const uint8_t* delta, const uint8_t* seed,
                   uint32_t ng, const uint8_t* gbits, const uint8_t* q_rows, const uint8_t* e,
                   uint64_t tweak, uint8_t* tables, uint8_t* glabels, uint8_t* out0);

// Evaluates with the active input labels; writes the active output labels.
// Returns the AND count or kBadCircuit.
int evaluate_circuit(const uint8_t* circ, size_t circ_len, const uint8_t* in, uint64_t tweak,
                     const uint8_t* tables, uint8_t* out);

// out[i] = H(x[i], tweak + i) for n blocks (output-label digests).
void hash_blocks(const uint8_t* x, size_t n, uint64_t tweak, uint8_t* out);

// Decodes k output labels against their zero labels: bit i is 1 where
// labels[i] == zero[i] ^ delta. Returns 1 if every label equals one of its
// wire's two labels, else 0 (bits then meaningless). Constant-time in the
// labels: every comparison runs to the end.
int decode_labels(const uint8_t* labels, const uint8_t* zero, const uint8_t* delta, uint32_t k,
                  uint8_t* bits);

}  // namespace pmf::gc
