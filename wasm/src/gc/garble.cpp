// Free-XOR + half-gates garbling (Zahur, Rosulek, Evans, EUROCRYPT 2015) with
// point-and-permute: two ciphertexts per AND gate, none for XOR and NOT. The
// garbler's global offset delta has lsb 1; every AND gate uses two fresh
// tweaks (base + 2g, base + 2g + 1), so tweaks never repeat within a session.
#include <vector>

#include "common/export.h"
#include "gc/block.h"
#include "gc/chacha.h"
#include "gc/circuit.h"

namespace pmf::gc {
namespace {

inline uint64_t tweak_of(uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; }

// Zeroes the wire labels before the vector releases them.
void wipe(std::vector<block>& v) {
  for (auto& b : v) b = zero_block();
  asm volatile("" : : "r"(v.data()) : "memory");
}

}  // namespace

int garble(const CircuitView& c, block delta, const uint8_t* in0, uint64_t tweak, uint8_t* tables,
           uint8_t* out0) {
  std::vector<block> w(c.nwires);
  for (uint32_t i = 0; i < c.ninputs; ++i) w[i] = load_block(in0 + 16 * i);
  for (uint32_t g = 0; g < c.ngates; ++g) {
    const uint32_t* gate = c.gates + 4ull * g;
    const block a0 = w[gate[1]];
    switch (gate[0]) {
      case kXor:
        w[gate[3]] = wasm_v128_xor(a0, w[gate[2]]);
        break;
      case kNot:
        w[gate[3]] = wasm_v128_xor(a0, delta);
        break;
      default: {
        const block b0 = w[gate[2]];
        const uint32_t pa = lsb(a0), pb = lsb(b0);
        const block xs[4] = {a0, wasm_v128_xor(a0, delta), b0, wasm_v128_xor(b0, delta)};
        const uint64_t tw[4] = {tweak, tweak, tweak + 1, tweak + 1};
        block h[4];
        hash4(xs, tw, h);
        const block tg = wasm_v128_xor(wasm_v128_xor(h[0], h[1]), and_bit(delta, pb));
        const block wg0 = wasm_v128_xor(h[0], and_bit(tg, pa));
        const block te = wasm_v128_xor(wasm_v128_xor(h[2], h[3]), a0);
        const block we0 = wasm_v128_xor(h[2], and_bit(wasm_v128_xor(te, a0), pb));
        w[gate[3]] = wasm_v128_xor(wg0, we0);
        store_block(tables, tg);
        store_block(tables + 16, te);
        tables += 32;
        tweak += 2;
      }
    }
  }
  for (uint32_t i = 0; i < c.noutputs; ++i) store_block(out0 + 16 * i, w[c.outputs[i]]);
  wipe(w);
  return 0;
}

void evaluate(const CircuitView& c, const uint8_t* in, uint64_t tweak, const uint8_t* tables, uint8_t* out) {
  std::vector<block> w(c.nwires);
  for (uint32_t i = 0; i < c.ninputs; ++i) w[i] = load_block(in + 16 * i);
  for (uint32_t g = 0; g < c.ngates; ++g) {
    const uint32_t* gate = c.gates + 4ull * g;
    const block a = w[gate[1]];
    switch (gate[0]) {
      case kXor:
        w[gate[3]] = wasm_v128_xor(a, w[gate[2]]);
        break;
      case kNot:
        w[gate[3]] = a;
        break;
      default: {
        const block b = w[gate[2]];
        const block xs[4] = {a, b, a, b};
        const uint64_t tw[4] = {tweak, tweak + 1, tweak, tweak + 1};
        block h[4];
        hash4(xs, tw, h);
        const block tg = load_block(tables), te = load_block(tables + 16);
        const block wg = wasm_v128_xor(h[0], and_bit(tg, lsb(a)));
        const block we = wasm_v128_xor(h[1], and_bit(wasm_v128_xor(te, a), lsb(b)));
        w[gate[3]] = wasm_v128_xor(wg, we);
        tables += 32;
        tweak += 2;
      }
    }
  }
  for (uint32_t i = 0; i < c.noutputs; ++i) store_block(out + 16 * i, w[c.outputs[i]]);
  wipe(w);
}

}  // namespace pmf::gc

using pmf::gc::CircuitView;

// Garbles the circuit (circ, circ_len) with offset delta (16 bytes, lsb must
// be 1) and the zero labels of all inputs (ninputs x 16 bytes). Writes nand x
// 32 bytes of tables and the zero labels of the outputs. Returns the AND count,
// or -1 for a malformed circuit, -2 for a delta with lsb 0.
PMF_EXPORT int pmf_gc_garble(const uint8_t* circ, size_t circ_len, const uint8_t* delta, const uint8_t* in0,
                             uint32_t tweak_lo, uint32_t tweak_hi, uint8_t* tables, uint8_t* out0) {
  CircuitView c;
  if (!pmf::gc::check_circuit(circ, circ_len, &c)) return -1;
  const pmf::gc::block d = pmf::gc::load_block(delta);
  if (pmf::gc::lsb(d) != 1) return -2;
  pmf::gc::garble(c, d, in0, pmf::gc::tweak_of(tweak_lo, tweak_hi), tables, out0);
  return static_cast<int>(c.nand);
}

// Evaluates with the active input labels; writes the active output labels.
// Returns the AND count or -1 for a malformed circuit.
PMF_EXPORT int pmf_gc_evaluate(const uint8_t* circ, size_t circ_len, const uint8_t* in, uint32_t tweak_lo,
                               uint32_t tweak_hi, const uint8_t* tables, uint8_t* out) {
  CircuitView c;
  if (!pmf::gc::check_circuit(circ, circ_len, &c)) return -1;
  pmf::gc::evaluate(c, in, pmf::gc::tweak_of(tweak_lo, tweak_hi), tables, out);
  return static_cast<int>(c.nand);
}

// out[i] = H(x[i], tweak + i) for n blocks (output-label digests, tests, bench).
PMF_EXPORT void pmf_gc_hash(const uint8_t* x, size_t n, uint32_t tweak_lo, uint32_t tweak_hi, uint8_t* out) {
  const uint64_t base = pmf::gc::tweak_of(tweak_lo, tweak_hi);
  for (size_t i = 0; i < n; i += 4) {
    pmf::gc::block xs[4], h[4];
    uint64_t tw[4];
    for (size_t k = 0; k < 4; ++k) {
      xs[k] = i + k < n ? pmf::gc::load_block(x + 16 * (i + k)) : pmf::gc::zero_block();
      tw[k] = base + i + k;
    }
    pmf::gc::hash4(xs, tw, h);
    for (size_t k = 0; k < 4 && i + k < n; ++k) pmf::gc::store_block(out + 16 * (i + k), h[k]);
  }
}

PMF_EXPORT void pmf_gc_chacha20(const uint8_t* key, const uint8_t* nonce, uint32_t counter, uint8_t* out,
                                size_t nblocks) {
  pmf::gc::chacha20_stream(key, nonce, counter, out, nblocks);
}
