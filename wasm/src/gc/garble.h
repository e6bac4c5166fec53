// Garbling and evaluation of the circuits of wasm/ts/gc-circuit.ts (layout in
// gc/circuit.h), and the label helpers around them. Every label is 16 bytes;
// `tweak` is the first hash tweak of this circuit in the session.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace pmf::gc {

// The garbler's inputs travel as a 16-byte seed instead of their labels: the
// evaluator only ever holds the active label of such a wire, so the garbler
// may draw the active labels (rather than the zero labels) at random and set
// zero = active ^ bit*delta. Each active label is then independent of delta,
// and its point-and-permute bit lsb(active) ^ bit is uniform, exactly as when
// the zero labels are drawn (docs/security.md#garbler-input-labels-as-a-seed).
constexpr size_t kLabelSeedBytes = 16;

// The active labels of the garbler's n inputs: the ChaCha20 keystream (key =
// seed || "pmf-gc-glabels-1", nonce 0, counter 0), 16 bytes per label.
void garbler_labels(const uint8_t* seed, uint32_t n, uint8_t* out);

// Garbles the circuit (circ, circ_len) with offset delta (16 bytes, lsb 1).
// The first ng inputs are the garbler's: their active labels come from
// `seed` (kLabelSeedBytes fresh CSPRNG bytes from the caller, who sends them
// to the evaluator), their zero labels are active ^ bit*delta (bits one per
// byte in gbits). The remaining inputs are the evaluator's: zero label j =
// q_rows[j] ^ e[j]*delta (its correlated-OT row and derandomization bit).
// Writes nand x 32 bytes of tables and the outputs' zero labels. Returns the
// AND count, or kBadCircuit for a malformed circuit or ng out of range,
// kBadDelta for a delta with lsb 0.
int garble_circuit(const uint8_t* circ, size_t circ_len, const uint8_t* delta, const uint8_t* seed,
                   uint32_t ng, const uint8_t* gbits, const uint8_t* q_rows, const uint8_t* e,
                   uint64_t tweak, uint8_t* tables, uint8_t* out0);

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
