// Client side of the private dot product (docs/crypto.md#extraction-pipeline).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "he/keyswitch.h"
#include "he/scheme.h"

namespace pmf::he {

// The packed model as the client holds it: per ciphertext the seed and the
// bit-packed b polynomial (only the coefficients that get extracted are ever
// unpacked), plus up to a_cap expanded a polynomials (64 KiB each) so that
// dot products do no XOF work for them: all of them at load time when
// a_cap ≥ cts, else each when a dot product first touches it, until a_cap are
// held (docs/crypto.md#dot-product).
struct Model {
  uint32_t rows = 0;         // N + 1 (bias row 0 included)
  uint32_t width = 0;        // B
  uint32_t rows_per_ct = 0;  // floor(n / B)
  uint32_t cts = 0;
  uint32_t loaded = 0;
  uint32_t a_cap = 0;  // most a polynomials held expanded
  uint32_t a_held = 0;
  unsigned a_rounds = kModelARounds;  // of the XOF that expands each a (the package's format)
  uint8_t* seeds = nullptr;           // cts × 32
  uint8_t* b = nullptr;               // cts × 2 × kPackedLimbBytes (+8 bytes of read slack)
  uint64_t** a = nullptr;  // per ciphertext its expanded a (2 × n) or null; null when a_cap = 0
  ~Model();
};

// Largest Σ count between two reductions of a sum of count·value terms
// (values < q): sums stay below 1024·q < 2^64 because q < 2^54.
constexpr uint64_t kLazyBudget = (uint64_t(1) << (64 - kQBits)) - 1;

// Result of a dot product: the full a-part (all it costs is n coefficients ×
// 2 limbs per feature) and the features themselves, so that b is evaluated
// only at the coefficients extract() asks for.
struct Accumulator {
  uint64_t a[kLimbs][kN];
  std::vector<uint64_t> features;  // (row << 32 | count), sorted, bias row included
  uint64_t weight = 0;             // Σ counts, bounds the honest noise
  const Model* model = nullptr;    // the model it was computed with
  ~Accumulator();
};

Model* model_new(uint32_t rows, uint32_t width, uint32_t a_cap, unsigned a_rounds, Status& st);
// Appends `count` complete records (seed ‖ b), validating every b value < qi.
Status model_add(Model& m, const uint8_t* records, size_t count);

// acc = X^0·ct[0] (bias, x = 1) + Σ count_f · X^{−offset(f)} · ct[row_f];
// rows in 1..N, counts in 1..max_count. Fills m's a cache (not its contents).
Status dot(Model& m, const uint32_t* rows, const uint32_t* counts, size_t len, uint32_t max_count,
           Accumulator& acc);

// What flooding must hide of each coefficient extracted from acc (docs/crypto.md#noise-budget):
// the model noise ≤ 21 and one plaintext wrap per unit of Σx, E|Z| of the
// encryption of zero, the blinding wrap. Statistical distance ≤ bound/2^(F+1) per coefficient.
inline uint64_t flood_bound(const Accumulator& acc) {
  return (kCbdEta + 1) * acc.weight + kEncZeroNoise + 1;
}

// docs/crypto.md#extraction-pipeline for coefficient j: fresh encryption of zero under s, blinding
// by Δ·r (r returned in mask), flooding with E uniform in [−2^F, 2^F), dropping q1, the switch to
// the user key s_u (he/keyswitch.h), extraction, modulus switch to 2^Q and bit-packing into out
// (lwe_bytes(Q) bytes: an LWE ciphertext of dimension kLweN).
Status extract(const Model& m, const Accumulator& acc, const PublicKey& pk, const KeySwitchKey& ksk,
               uint32_t j, unsigned T, unsigned Q, unsigned F, uint8_t* out, uint32_t& mask);

// docs/crypto.md#packed-extraction: coefficients 0..count−1 (count ≤ B) in one
// ciphertext of packed_bytes_for(Q, count) bytes. One fresh encryption of zero,
// then per coefficient its own e1, blind r_j (masks[j]) and flood; one key
// switch; b'[0..count) and the whole switched a-part, modulus-switched as in
// extract(). Only for a public set of coefficients: it links them.
Status extract_packed(const Model& m, const Accumulator& acc, const PublicKey& pk,
                      const KeySwitchKey& ksk, uint32_t count, unsigned T, unsigned Q, unsigned F,
                      uint8_t* out, uint32_t* masks);

// Diagnostics for tests, needing the model key: the noise of one extraction
// after blinding and flooding, before anything that follows (dropping q1, the
// key switch), given d.
Status flood_noise(const SecretKey& sk, const Model& m, const Accumulator& acc, const PublicKey& pk,
                   uint32_t j, unsigned T, unsigned F, uint32_t d, double& noise);

// Diagnostics for tests, needing the secret key: the noise of coefficient j
// of acc (before anything of docs/crypto.md#extraction-pipeline) given the expected plaintext d.
Status acc_noise(const SecretKey& sk, const Model& m, const Accumulator& acc, uint32_t j,
                 unsigned T, uint32_t d, int64_t& noise);

}  // namespace pmf::he
