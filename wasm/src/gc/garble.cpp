// Free-XOR + half-gates garbling (Zahur, Rosulek, Evans, EUROCRYPT 2015) with
// point-and-permute: two ciphertexts per AND gate, none for XOR and NOT. The
// garbler's global offset delta has lsb 1; every AND gate uses two fresh
// tweaks (base + 2g, base + 2g + 1), so tweaks never repeat within a session.
#include "gc/garble.h"

#include <vector>

#include "common/wipe.h"
#include "gc/block.h"
#include "gc/chacha.h"
#include "gc/circuit.h"

namespace pmf::gc {
namespace {

void wipe(std::vector<block>& v) { secure_wipe(v.data(), v.size() * sizeof(block)); }

void garble(const CircuitView& c, block delta, const uint8_t* in0, uint64_t tweak, uint8_t* tables,
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

}  // namespace

void garbler_labels(const uint8_t* seed, uint32_t n, uint8_t* out) {
  static const char kDomain[] = "pmf-gc-glabels-1";  // 16 bytes: the key's second half
  uint8_t key[32];
  for (size_t i = 0; i < kLabelSeedBytes; ++i) key[i] = seed[i];
  for (size_t i = 0; i < 16; ++i) key[16 + i] = static_cast<uint8_t>(kDomain[i]);
  const uint8_t nonce[12] = {0};
  std::vector<uint8_t> stream(((16ull * n + 63) / 64) * 64);
  chacha20_stream(key, nonce, 0, stream.data(), stream.size() / 64);
  for (size_t i = 0; i < 16ull * n; ++i) out[i] = stream[i];
  secure_wipe(stream.data(), stream.size());
  secure_wipe(key, sizeof key);
}

int garble_circuit(const uint8_t* circ, size_t circ_len, const uint8_t* delta, const uint8_t* seed,
                   uint32_t ng, const uint8_t* gbits, const uint8_t* q_rows, const uint8_t* e,
                   uint64_t tweak, uint8_t* tables, uint8_t* out0) {
  CircuitView c;
  if (!check_circuit(circ, circ_len, &c) || ng > c.ninputs) return kBadCircuit;
  const block d = load_block(delta);
  if (lsb(d) != 1) return kBadDelta;
  std::vector<uint8_t> in0(16ull * c.ninputs);
  garbler_labels(seed, ng, in0.data());
  for (uint32_t i = 0; i < ng; ++i)
    store_block(in0.data() + 16 * i,
                wasm_v128_xor(load_block(in0.data() + 16 * i), and_bit(d, gbits[i] & 1)));
  for (uint32_t j = 0; ng + j < c.ninputs; ++j)
    store_block(in0.data() + 16 * (ng + j),
                wasm_v128_xor(load_block(q_rows + 16 * j), and_bit(d, e[j] & 1)));
  garble(c, d, in0.data(), tweak, tables, out0);
  secure_wipe(in0.data(), in0.size());
  return static_cast<int>(c.nand);
}

int evaluate_circuit(const uint8_t* circ, size_t circ_len, const uint8_t* in, uint64_t tweak,
                     const uint8_t* tables, uint8_t* out) {
  CircuitView c;
  if (!check_circuit(circ, circ_len, &c)) return kBadCircuit;
  evaluate(c, in, tweak, tables, out);
  return static_cast<int>(c.nand);
}

void hash_blocks(const uint8_t* x, size_t n, uint64_t tweak, uint8_t* out) {
  for (size_t i = 0; i < n; i += 4) {
    block xs[4], h[4];
    uint64_t tw[4];
    for (size_t k = 0; k < 4; ++k) {
      xs[k] = i + k < n ? load_block(x + 16 * (i + k)) : zero_block();
      tw[k] = tweak + i + k;
    }
    hash4(xs, tw, h);
    for (size_t k = 0; k < 4 && i + k < n; ++k) store_block(out + 16 * (i + k), h[k]);
  }
}

int decode_labels(const uint8_t* labels, const uint8_t* zero, const uint8_t* delta, uint32_t k,
                  uint8_t* bits) {
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

}  // namespace pmf::gc
