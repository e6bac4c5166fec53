#include "he/client.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "common/chacha20.h"
#include "he/rescale.h"
#include "he/sample.h"

// docs/crypto.md#extraction-pipeline: what turns an accumulator into the
// ciphertexts that leave the device, and its test diagnostics.
namespace pmf::he {

namespace {

inline const uint8_t* record_b(const Model& m, uint32_t ct, size_t limb) {
  return m.b + (size_t(ct) * kLimbs + limb) * kPackedLimbBytes;
}

// Coefficient j of the b-part of acc: Σ count·b_ct[j + offset] (no wrap since
// j < B and offset + B <= n), reduced only when the counts' budget runs out
// (the counts steer it, as in dot()).
uint64_t b_coefficient(const Model& m, const Accumulator& acc, uint32_t j, size_t limb) {
  const NttTables& t = ntt_tables(limb);
  uint64_t sum = 0, budget = 0;
  for (uint64_t f : acc.features) {
    const uint32_t row = uint32_t(f >> 32), x = uint32_t(f);
    const size_t idx = size_t(row % m.rows_per_ct) * m.width + j;
    const uint64_t v = packed_at(record_b(m, row / m.rows_per_ct, limb), idx, kQBits);
    if (budget + x > kLazyBudget) {
      sum = reduce64(sum, t.q, t.one_shoup);
      budget = 1;  // a reduced sum is < q: one unit of the budget
    }
    sum += v * x;
    budget += x;
  }
  return reduce64(sum, t.q, t.one_shoup);
}

// Coefficient j of p0·u in Z_q[X]/(X^n+1), u ternary and secret: masks, no branches.
uint64_t product_coefficient(const uint64_t* p0, const int8_t* u, uint32_t j, const NttTables& t) {
  uint64_t plus = 0, minus = 0;
  for (size_t base = 0; base < kN; base += 512) {  // 512 terms < 2^63
    uint64_t p = 0, mi = 0;
    for (size_t i = base; i < base + 512; ++i) {
      const bool wrapped = i > j;  // public: depends on the index only
      const uint64_t c = p0[wrapped ? kN + j - i : j - i];
      const uint64_t pos = 0 - uint64_t(u[i] == 1), neg = 0 - uint64_t(u[i] == -1);
      const uint64_t sign = 0 - uint64_t(wrapped);  // wrapped terms change sign
      p += c & ((pos & ~sign) | (neg & sign));
      mi += c & ((neg & ~sign) | (pos & sign));
    }
    plus = add_mod(plus, reduce64(p, t.q, t.one_shoup), t.q);
    minus = add_mod(minus, reduce64(mi, t.q, t.one_shoup), t.q);
  }
  return sub_mod(plus, minus, t.q);
}

// Exact RNS rescale dropping q1: x mod q1·q2 → round(x / q1) mod q2, constant-time.
struct DropQ1 {
  uint64_t inv_q1, inv_q1_shoup;  // q1^{-1} mod q2
  DropQ1() {
    inv_q1 = pow_mod(kQ[0] % kQ[1], kQ[1] - 2, kQ[1]);
    inv_q1_shoup = shoup_precompute(inv_q1, kQ[1]);
  }
  // round(x / q1) mod q2 = (x2 − centered(x1)) · q1^{-1} mod q2.
  uint64_t operator()(uint64_t x1, uint64_t x2) const {
    const uint64_t q1 = kQ[0], q2 = kQ[1];
    const uint64_t high = ge_mask(x1, (q1 + 1) / 2);
    const uint64_t x1_mod_q2 = x1 - (high & (q1 - q2));  // q1 > q2
    return mul_shoup(sub_mod(x2, x1_mod_q2, q2), inv_q1, inv_q1_shoup, q2);
  }
};

const DropQ1& drop_q1() {
  static const DropQ1 drop;
  return drop;
}

struct ExtractScratch {
  int8_t u[kN], e2[kN];
  uint64_t za[kLimbs][kN], z2[kN], ks_b[kN], ks_a[kN];
  uint64_t lwe[kLweN + 1];
  ~ExtractScratch() { secure_wipe(this, sizeof *this); }
};

// Uniform in [0, 2^bits) for bits ≤ 127, as (hi, lo) halves.
void sample_wide(ChaCha20Stream& prg, unsigned bits, uint64_t& hi, uint64_t& lo) {
  lo = prg.next_u64();
  hi = prg.next_u64();
  if (bits <= 64) {
    lo &= bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    hi = 0;
  } else {
    hi &= (uint64_t(1) << (bits - 64)) - 1;
  }
}

// hi·2^64 + lo mod q (hi < q), constant-time.
uint64_t wide_mod(uint64_t hi, uint64_t lo, const NttTables& t) {
  static const uint64_t two64[kLimbs] = {mul_mod(uint64_t(1) << 32, uint64_t(1) << 32, kQ[0]),
                                         mul_mod(uint64_t(1) << 32, uint64_t(1) << 32, kQ[1])};
  const size_t l = t.q == kQ[0] ? 0 : 1;
  return add_mod(mul_shoup(hi, two64[l], shoup_precompute(two64[l], t.q), t.q),
                 reduce64(lo, t.q, t.one_shoup), t.q);
}

// docs/crypto.md#extraction-pipeline steps 1–2, in RNS: check the noise
// budget, then re-randomize under s with a fresh encryption of zero: the
// a-part of acc + Z (Z = p1·u + e2) goes to sc.za, u stays in sc.u for the
// b coefficients (blind_coefficient).
Status rerandomize(const Model& m, const Accumulator& acc, const PublicKey& pk, unsigned T,
                   unsigned F, ExtractScratch& sc, FreshPrg& prg) {
  // Flooding hides the honest noise at statistical distance
  // flood_bound/2^(F+1) ≤ 2^-51 per coefficient. What comes later (dropping
  // q1, the key switch, the switch to 2^Q) adds noise that depends on the
  // re-randomized a part alone.
  if (T < 1 || T > kMaxT || F < kFloodMarginBits + 1 || F > max_flood_bits(T)) return kBadParams;
  if (acc.model != &m) return kBadState;
  if (flood_bound(acc) > (uint64_t(1) << (F - kFloodMarginBits))) return kNoiseBudget;

  for (size_t i = 0; i < kN; ++i) sc.u[i] = sample_ternary(prg);
  for (size_t i = 0; i < kN; ++i) sc.e2[i] = int8_t(sample_cbd(prg));
  for (size_t l = 0; l < kLimbs; ++l) {
    const NttTables& t = ntt_tables(l);
    uint64_t* za = sc.za[l];
    for (size_t i = 0; i < kN; ++i) za[i] = from_signed(sc.u[i], t.q);
    ntt_forward_lazy(za, t);  // pointwise_mul takes any 64-bit value
    pointwise_mul(za, za, pk.p1_ntt[l], pk.p1_ntt_shoup[l], t);
    ntt_inverse(za, t);
    for (size_t i = 0; i < kN; ++i)
      za[i] = add_mod(add_mod(za[i], from_signed(sc.e2[i], t.q), t.q), acc.a[l][i], t.q);
  }
  return kOk;
}

// docs/crypto.md#extraction-pipeline steps 2–3 at coefficient j (< m.width),
// after rerandomize: bj = acc.b[j] + (p0·u)[j] + e1 + Δ·r + E with a fresh
// e1, a fresh blind r uniform in [0, 2^T) and a fresh flood E uniform in
// [−2^F, 2^F) for this coefficient alone.
void blind_coefficient(const Model& m, const Accumulator& acc, const PublicKey& pk, uint32_t j,
                       unsigned T, unsigned F, const ExtractScratch& sc, FreshPrg& prg,
                       uint64_t bj[kLimbs], uint64_t& r) {
  const int64_t e1 = sample_cbd(prg);
  r = prg.next_u64() & ((uint64_t(1) << T) - 1);
  uint64_t flood_hi, flood_lo;  // E + 2^F, uniform in [0, 2^(F+1))
  sample_wide(prg, F + 1, flood_hi, flood_lo);
  const uint64_t two_f_hi = F >= 64 ? uint64_t(1) << (F - 64) : 0;
  const uint64_t two_f_lo = F >= 64 ? 0 : uint64_t(1) << F;
  for (size_t l = 0; l < kLimbs; ++l) {
    const NttTables& t = ntt_tables(l);
    const uint64_t q = t.q;
    const uint64_t d = delta_mod(T, l);
    uint64_t b = add_mod(b_coefficient(m, acc, j, l), product_coefficient(pk.p0[l], sc.u, j, t), q);
    b = add_mod(b, from_signed(e1, q), q);
    b = add_mod(b, mul_shoup(r, d, shoup_precompute(d, q), q), q);
    b = add_mod(b, wide_mod(flood_hi, flood_lo, t), q);
    bj[l] = sub_mod(b, wide_mod(two_f_hi, two_f_lo, t), q);
  }
  secure_wipe(&flood_hi, sizeof flood_hi);
  secure_wipe(&flood_lo, sizeof flood_lo);
}

// Steps 1–3 for the single coefficient j: b at j in bj, the ring a-part in sc.za.
Status blind_and_flood(const Model& m, const Accumulator& acc, const PublicKey& pk, uint32_t j,
                       unsigned T, unsigned F, ExtractScratch& sc, uint64_t bj[kLimbs],
                       uint64_t& r) {
  if (j >= m.width) return kBadParams;
  FreshPrg prg;
  const Status st = rerandomize(m, acc, pk, T, F, sc, prg);
  if (st == kOk) blind_coefficient(m, acc, pk, j, T, F, sc, prg, bj, r);
  return st;
}

// Coefficient k of the LWE a-vector extracted at j from a ring a-part.
inline uint64_t extracted_a(const uint64_t* a, uint32_t j, size_t k, uint64_t q) {
  const bool wrapped = k > j;  // public: depends on the index only
  const uint64_t v = a[wrapped ? kN + j - k : j - k];
  return wrapped ? neg_mod(v, q) : v;
}

// Step 4 for the a-part: sc.za without q1, into sc.z2.
void drop_a(ExtractScratch& sc) {
  const DropQ1& drop = drop_q1();
  for (size_t k = 0; k < kN; ++k) sc.z2[k] = drop(sc.za[0][k], sc.za[1][k]);
}

// docs/crypto.md#extraction-pipeline steps 4–5: drop q1 from the a-part and
// switch it from s to the user key s_u(X²) modulo q_ks, into sc.ks_b, sc.ks_a.
Status drop_and_switch(const KeySwitchKey& ksk, ExtractScratch& sc) {
  drop_a(sc);
  return key_switch(ksk, sc.z2, sc.ks_b, sc.ks_a);
}

// The same for one extraction at j: of the switch's b-part only sc.ks_b[j].
Status drop_and_switch_at(const KeySwitchKey& ksk, uint32_t j, ExtractScratch& sc) {
  drop_a(sc);
  return key_switch_at(ksk, sc.z2, j, sc.ks_b[j], sc.ks_a);
}

// b' modulo q_ks at coefficient j: bj with q1 dropped, taken from q2 to q_ks,
// plus the switch's b-part.
uint64_t switched_b(const ExtractScratch& sc, uint32_t j, const uint64_t bj[kLimbs]) {
  static const Rescale to_qks = Rescale::to_modulus(kQks, kQ[1]);
  return add_mod(to_qks(drop_q1()(bj[0], bj[1])), sc.ks_b[j], kQks);
}

// Step 6: extract coefficient j. Only the even a-coefficients meet a non-zero
// key coefficient: lwe[1 + i] pairs with s_u[i], and takes a[j − 2i] (or
// −a[n + j − 2i]), of j's parity: sc.ks_a holds those, ks_a[k] = a[2k + j mod 2].
void extract_lwe(uint32_t j, const uint64_t bj[kLimbs], ExtractScratch& sc) {
  sc.lwe[0] = switched_b(sc, j, bj);
  const size_t half = j >> 1;
  for (size_t i = 0; i < kLweN; ++i) {
    const bool wrapped = i > half;  // public: depends on the index only
    const uint64_t v = sc.ks_a[wrapped ? kLweN + half - i : half - i];
    sc.lwe[i + 1] = wrapped ? neg_mod(v, kQks) : v;
  }
}

}  // namespace

Status extract(const Model& m, const Accumulator& acc, const PublicKey& pk, const KeySwitchKey& ksk,
               uint32_t j, unsigned T, unsigned Q, unsigned F, uint8_t* out, uint32_t& mask) {
  if (Q < T + kMinQMinusT || Q > kMaxQ || ksk.T != T) return kBadParams;
  ExtractScratch* sc = new (std::nothrow) ExtractScratch;
  if (!sc) return kNoMemory;
  uint64_t bj[kLimbs], r = 0;
  Status st = blind_and_flood(m, acc, pk, j, T, F, *sc, bj, r);
  if (st == kOk) st = drop_and_switch_at(ksk, j, *sc);
  if (st == kOk) {
    extract_lwe(j, bj, *sc);
    // b' to 2^Q, the a-part to 2^(Q−1) (scheme.h, lwe_bytes).
    const Rescale sw_b = Rescale::to_pow2(Q, kQks), sw_a = Rescale::to_pow2(Q - 1, kQks);
    out[0] = kLweTag;
    out[1] = kLweVersion;
    out[2] = uint8_t(Q);
    memset(out + 3, 0, lwe_bytes(Q) - 3);
    BitWriter w(out + 3);
    w.put(sw_b(sc->lwe[0]), Q);
    for (size_t k = 1; k <= kLweN; ++k) w.put(sw_a(sc->lwe[k]), Q - 1);
    w.finish();
    mask = uint32_t(r);
  }
  secure_wipe(bj, sizeof bj);
  secure_wipe(&r, sizeof r);
  delete sc;
  return st;
}

Status extract_packed(const Model& m, const Accumulator& acc, const PublicKey& pk,
                      const KeySwitchKey& ksk, uint32_t count, unsigned T, unsigned Q, unsigned F,
                      uint8_t* out, uint32_t* masks) {
  if (Q < T + kMinQMinusT || Q > kMaxQ || ksk.T != T || count < 1 || count > m.width)
    return kBadParams;
  ExtractScratch* sc = new (std::nothrow) ExtractScratch;
  uint64_t* b = static_cast<uint64_t*>(malloc(size_t(count) * kLimbs * sizeof(uint64_t)));
  Status st = sc && b ? kOk : kNoMemory;
  uint64_t r = 0;
  if (st == kOk) {
    FreshPrg prg;
    st = rerandomize(m, acc, pk, T, F, *sc, prg);
    for (uint32_t j = 0; j < count && st == kOk; ++j) {
      blind_coefficient(m, acc, pk, j, T, F, *sc, prg, b + size_t(j) * kLimbs, r);
      masks[j] = uint32_t(r);
    }
  }
  if (st == kOk) st = drop_and_switch(ksk, *sc);
  if (st == kOk) {
    const Rescale sw_b = Rescale::to_pow2(Q, kQks), sw_a = Rescale::to_pow2(Q - 1, kQks);
    out[0] = kPackedTag;
    out[1] = kPackedVersion;
    out[2] = uint8_t(Q);
    out[3] = uint8_t(count);
    out[4] = uint8_t(count >> 8);
    memset(out + kPackedHeaderBytes, 0, packed_bytes_for(Q, count) - kPackedHeaderBytes);
    BitWriter w(out + kPackedHeaderBytes);
    for (uint32_t j = 0; j < count; ++j) w.put(sw_b(switched_b(*sc, j, b + size_t(j) * kLimbs)), Q);
    for (size_t k = 0; k < kN; ++k) w.put(sw_a(sc->ks_a[k]), Q - 1);
    w.finish();
  }
  if (b) secure_wipe(b, size_t(count) * kLimbs * sizeof(uint64_t));
  free(b);
  secure_wipe(&r, sizeof r);
  delete sc;
  return st;
}

Status flood_noise(const SecretKey& sk, const Model& m, const Accumulator& acc, const PublicKey& pk,
                   uint32_t j, unsigned T, unsigned F, uint32_t d, double& noise) {
  ExtractScratch* sc = new (std::nothrow) ExtractScratch;
  if (!sc) return kNoMemory;
  uint64_t bj[kLimbs], r = 0;
  const Status st = blind_and_flood(m, acc, pk, j, T, F, *sc, bj, r);
  if (st == kOk) {
    uint64_t phase[kLimbs];
    const uint64_t plain = (uint64_t(d) + r) & ((uint64_t(1) << T) - 1);
    for (size_t l = 0; l < kLimbs; ++l) {
      const uint64_t q = kQ[l];
      uint64_t v = bj[l];
      for (size_t k = 0; k < kN; ++k)
        v = add_mod(v, mul_mod(extracted_a(sc->za[l], j, k, q), from_signed(sk.s[k], q), q), q);
      phase[l] = sub_mod(v, mul_mod(delta_mod(T, l), plain, q), q);
    }
    noise = double(centered_crt(phase[0], phase[1]));
  }
  delete sc;
  return st;
}

Status acc_noise(const SecretKey& sk, const Model& m, const Accumulator& acc, uint32_t j,
                 unsigned T, uint32_t d, int64_t& noise) {
  if (j >= m.width || T < 1 || T > kMaxT) return kBadParams;
  if (acc.model != &m) return kBadState;
  uint64_t phase[kLimbs];
  for (size_t l = 0; l < kLimbs; ++l) {
    const uint64_t q = kQ[l];
    uint64_t v = b_coefficient(m, acc, j, l);
    for (size_t k = 0; k < kN; ++k)
      v = add_mod(v, mul_mod(extracted_a(acc.a[l], j, k, q), from_signed(sk.s[k], q), q), q);
    phase[l] = sub_mod(v, mul_mod(delta_mod(T, l), d, q), q);
  }
  noise = int64_t(centered_crt(phase[0], phase[1]));
  return kOk;
}

}  // namespace pmf::he
