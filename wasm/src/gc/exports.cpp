// C ABI of the garbling and OT layer (names pmf_gc_*, pmf_ot_*): thin
// wrappers over gc/garble.h, gc/iknp.h, gc/circuit.h and gc/gf128.h. Failures
// return a Status (common/status.h; wasm/ts throws it as a CoreError); 64-bit
// tweaks arrive as (lo, hi) 32-bit halves.
#include "common/chacha20.h"
#include "common/export.h"
#include "gc/circuit.h"
#include "gc/garble.h"
#include "gc/gf128.h"
#include "gc/iknp.h"

using namespace pmf;
using namespace pmf::gc;

static uint64_t tweak_of(uint32_t lo, uint32_t hi) {
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

PMF_EXPORT int pmf_gc_garble(const uint8_t* circ, size_t circ_len, const uint8_t* delta,
                             const uint8_t* seed, uint32_t ng, const uint8_t* gbits,
                             const uint8_t* q_rows, const uint8_t* e, uint32_t tweak_lo,
                             uint32_t tweak_hi, uint8_t* tables, uint8_t* out0) {
  return garble_circuit(circ, circ_len, delta, seed, ng, gbits, q_rows, e,
                        tweak_of(tweak_lo, tweak_hi), tables, out0);
}

// The garbler's n active input labels from the seed in a gc message.
PMF_EXPORT void pmf_gc_garbler_labels(const uint8_t* seed, uint32_t n, uint8_t* out) {
  garbler_labels(seed, n, out);
}

PMF_EXPORT int pmf_gc_evaluate(const uint8_t* circ, size_t circ_len, const uint8_t* in,
                               uint32_t tweak_lo, uint32_t tweak_hi, const uint8_t* tables,
                               uint8_t* out) {
  return evaluate_circuit(circ, circ_len, in, tweak_of(tweak_lo, tweak_hi), tables, out);
}

PMF_EXPORT void pmf_gc_hash(const uint8_t* x, size_t n, uint32_t tweak_lo, uint32_t tweak_hi,
                            uint8_t* out) {
  hash_blocks(x, n, tweak_of(tweak_lo, tweak_hi), out);
}

PMF_EXPORT void pmf_gc_chacha20(const uint8_t* key, const uint8_t* nonce, uint32_t counter,
                                uint8_t* out, size_t nblocks) {
  chacha20_stream(key, nonce, counter, out, nblocks);
}

PMF_EXPORT int pmf_gc_decode_labels(const uint8_t* labels, const uint8_t* zero,
                                    const uint8_t* delta, uint32_t k, uint8_t* bits) {
  return decode_labels(labels, zero, delta, k, bits);
}

// The circuit's AND-gate count, or kBadCircuit.
PMF_EXPORT int pmf_gc_circuit_check(const uint8_t* data, size_t len) {
  CircuitView c;
  return check_circuit(data, len, &c) ? static_cast<int>(c.nand) : kBadCircuit;
}

// out = sum_i chi[i] * t[i] in GF(2^128) over n terms, through the bucket
// accumulator used by the KOS check; for tests.
PMF_EXPORT void pmf_gc_gf128_dot(const uint8_t* chi, const uint8_t* t, size_t n, uint64_t* out) {
  Gf128DotPublic acc;
  for (size_t i = 0; i < n; ++i) acc.add(chi + 16 * i, wasm_v128_load(t + 16 * i));
  acc.reduce(out);
}

// out = a * b in GF(2^128) (16-byte little-endian operands); for tests.
PMF_EXPORT void pmf_gc_gf128_mul(const uint64_t* a, const uint64_t* b, uint64_t* out) {
  Gf128Acc acc;
  acc.mul_add(a[0], a[1], b[0], b[1]);
  acc.reduce(out);
}

PMF_EXPORT int pmf_ot_recv_extend(const uint8_t* k0, const uint8_t* k1, uint32_t counter, size_t L,
                                  const uint8_t* r, uint8_t* u, uint8_t* t_rows) {
  return ot_recv_extend(k0, k1, counter, L, r, u, t_rows);
}

PMF_EXPORT int pmf_ot_send_extend(const uint8_t* ks, const uint8_t* s, uint32_t counter, size_t L,
                                  const uint8_t* u, uint8_t* q_rows) {
  return ot_send_extend(ks, s, counter, L, u, q_rows);
}

PMF_EXPORT int pmf_ot_kos_respond(const uint8_t* seed, size_t L, const uint8_t* r,
                                  const uint8_t* t_rows, uint8_t* xt) {
  return kos_respond(seed, L, r, t_rows, xt);
}

PMF_EXPORT int pmf_ot_kos_check(const uint8_t* seed, size_t L, const uint8_t* q_rows,
                                const uint8_t* s, const uint8_t* xt) {
  return kos_check(seed, L, q_rows, s, xt);
}
