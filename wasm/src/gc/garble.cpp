// Free-XOR + half-gates garbling (Zahur, Rosulek, Evans, EUROCRYPT 2015) with
// point-and-permute: two ciphertexts per AND gate, none for XOR and NOT. The
// garbler's global offset delta has lsb 1; every AND gate uses two fresh
// tweaks (base + 2g, base + 2g + 1), so tweaks never repeat within a session.
#include <vector>

#include "common/export.h"
#include "common/wipe.h"
#include "gc/block.h"
#include "gc/chacha.h"
#include "gc/circuit.h"

namespace pmf::gc {
namespace {

inline uint64_t tweak_of(uint32_t lo, uint32_t hi) {
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

void wipe(std::vector<block>& v) { secure_wipe(v.data(), v.size() * sizeof(block)); }

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

void evaluate(const CircuitView& c, const uint8_t* in, uint64_t tweak, const uint8_t* tables,
              uint8_t* out) {
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

// Garbles the circuit (circ, circ_len) with offset delta (16 bytes, lsb 1).
// The first ng inputs are the garbler's: their zero labels are expanded with
// ChaCha20 from `seed` (32 fresh CSPRNG bytes from the caller: Emscripten's
// getentropy costs a JS call per byte, too slow per email) and their active labels (zero ^
// bit*delta, bits one per byte in gbits) are written to glabels. The remaining inputs are the
// evaluator's: zero label j = q_rows[j] ^ e[j]*delta (its correlated-OT row and derandomization
// bit). Writes nand x 32 bytes of tables and the outputs' zero labels. Returns the AND count, or -1
// for a malformed circuit or ng out of range, -2 for a delta with lsb 0.
PMF_EXPORT int pmf_gc_garble(const uint8_t* circ, size_t circ_len, const uint8_t* delta,
                             const uint8_t* seed, uint32_t ng, const uint8_t* gbits,
                             const uint8_t* q_rows, const uint8_t* e, uint32_t tweak_lo,
                             uint32_t tweak_hi, uint8_t* tables, uint8_t* glabels, uint8_t* out0) {
  using namespace pmf::gc;
  CircuitView c;
  if (!check_circuit(circ, circ_len, &c) || ng > c.ninputs) return -1;
  const block d = load_block(delta);
  if (lsb(d) != 1) return -2;
  std::vector<uint8_t> in0(16ull * c.ninputs);
  const uint8_t nonce[12] = {0};
  std::vector<uint8_t> stream(((16ull * ng + 63) / 64) * 64);
  pmf::chacha20_stream(seed, nonce, 0, stream.data(), stream.size() / 64);
  for (uint32_t i = 0; i < ng; ++i) {
    const block z = load_block(stream.data() + 16 * i);
    store_block(in0.data() + 16 * i, z);
    store_block(glabels + 16 * i, wasm_v128_xor(z, and_bit(d, gbits[i] & 1)));
  }
  for (uint32_t j = 0; ng + j < c.ninputs; ++j)
    store_block(in0.data() + 16 * (ng + j),
                wasm_v128_xor(load_block(q_rows + 16 * j), and_bit(d, e[j] & 1)));
  garble(c, d, in0.data(), tweak_of(tweak_lo, tweak_hi), tables, out0);
  pmf::secure_wipe(stream.data(), stream.size());
  pmf::secure_wipe(in0.data(), in0.size());
  return static_cast<int>(c.nand);
}

// Evaluates with the active input labels; writes the active output labels.
// Returns the AND count or -1 for a malformed circuit.
PMF_EXPORT int pmf_gc_evaluate(const uint8_t* circ, size_t circ_len, const uint8_t* in,
                               uint32_t tweak_lo, uint32_t tweak_hi, const uint8_t* tables,
                               uint8_t* out) {
  CircuitView c;
  if (!pmf::gc::check_circuit(circ, circ_len, &c)) return -1;
  pmf::gc::evaluate(c, in, pmf::gc::tweak_of(tweak_lo, tweak_hi), tables, out);
  return static_cast<int>(c.nand);
}

// out[i] = H(x[i], tweak + i) for n blocks (output-label digests, tests, bench).
PMF_EXPORT void pmf_gc_hash(const uint8_t* x, size_t n, uint32_t tweak_lo, uint32_t tweak_hi,
                            uint8_t* out) {
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

PMF_EXPORT void pmf_gc_chacha20(const uint8_t* key, const uint8_t* nonce, uint32_t counter,
                                uint8_t* out, size_t nblocks) {
  pmf::chacha20_stream(key, nonce, counter, out, nblocks);
}

// Decodes k output labels against their zero labels: bit i of the result is 1
// where labels[i] == zero[i] ^ delta. Returns 1 if every label equals one of
// its wire's two labels, else 0 (bits then meaningless). Constant-time in the
// labels: every comparison runs to the end.
PMF_EXPORT int pmf_gc_decode_labels(const uint8_t* labels, const uint8_t* zero,
                                    const uint8_t* delta, uint32_t k, uint8_t* bits) {
  using namespace pmf::gc;
  const block d = load_block(delta);
  uint32_t all_valid = 1;
  for (uint32_t i = 0; i < k; ++i) {
    const block l = load_block(labels + 16 * i), z = load_block(zero + 16 * i);
    const uint32_t is0 = static_cast<uint32_t>(wasm_i8x16_all_true(wasm_i8x16_eq(l, z)));
    const uint32_t is1 =
        static_cast<uint32_t>(wasm_i8x16_all_true(wasm_i8x16_eq(l, wasm_v128_xor(z, d))));
    bits[i] = static_cast<uint8_t>(is1);
    all_valid &= is0 | is1;
  }
  return static_cast<int>(all_valid);
}
