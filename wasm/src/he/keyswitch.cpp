#include "he/keyswitch.h"

#include <cstdlib>
#include <cstring>
#include <new>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#include "he/rescale.h"
#include "he/sample.h"

namespace pmf::he {

namespace {

// g_i = round(q_ks·2^(base·i) / 2^in): public constants of the gadget.
uint64_t gadget_factor(const KsGadget& g, size_t digit) {
  const unsigned shift = g.in_bits - g.base_bits * unsigned(digit);  // ≥ 1 for every digit
  return (kQks + (uint64_t(1) << (shift - 1))) >> shift;
}

struct GenScratch {
  uint64_t su_ntt[kN], su_shoup[kN], a[kN], b[kN];
  int8_t e[kN];
  ~GenScratch() { secure_wipe(this, sizeof *this); }
};

static_assert(4 * kMaxKsDigits * kQks < (uint64_t(1) << 63), "unreduced digit sums fit 64 bits");

struct SwitchScratch {
  int64_t v[kN];  // what is left of each centered coefficient after the digits so far
  uint64_t d[kN];
  int32_t digit[kN];  // the same digit, signed (|digit| ≤ 2^23)
  ~SwitchScratch() { secure_wipe(this, sizeof *this); }
};

// b (coefficient form, < q_ks < 2^50) as two 25-bit halves, each stored
// backwards (rev[k] = half[n − 1 − k]) so that the products of product_at
// walk both arrays forwards.
constexpr unsigned kHalfBits = 25;
static_assert(kQksBits <= 2 * kHalfBits, "b splits into two halves");

void split_reversed(const uint64_t* b, int32_t* lo, int32_t* hi) {
  for (size_t k = 0; k < kN; ++k) {
    lo[kN - 1 - k] = int32_t(b[k] & ((uint64_t(1) << kHalfBits) - 1));
    hi[kN - 1 - k] = int32_t(b[k] >> kHalfBits);
  }
}

}  // namespace

KeySwitchKey::~KeySwitchKey() {
  if (data) secure_wipe(data, KeySwitchKey::kParts * gadget.digits * kN * sizeof *data);
  free(data);
}

Status ksk_generate(const SecretKey& from, const SecretKey& to, unsigned T,
                    const uint8_t a_seed[32], const uint8_t e_seed[32], uint8_t* out) {
  if (T < 1 || T > kMaxT) return kBadParams;
  GenScratch* sc = new (std::nothrow) GenScratch;
  if (!sc) return kNoMemory;
  const KsGadget g = ks_gadget(T);
  const NttTables& t = ntt_tables(kQksIndex);
  const uint64_t q = t.q;
  for (size_t k = 0; k < kN; ++k) sc->su_ntt[k] = from_signed(to.s[k], q);
  ntt_forward(sc->su_ntt, t);
  for (size_t k = 0; k < kN; ++k) sc->su_shoup[k] = shoup_precompute(sc->su_ntt[k], q);
  out[0] = kKskTag;
  out[1] = kKskVersion;
  out[2] = uint8_t(T);
  memcpy(out + 3, a_seed, kSeedBytes);
  ChaCha20Stream prg(e_seed, kKskNoiseNonce);
  for (size_t i = 0; i < g.digits; ++i) {
    expand_uniform(a_seed, kQksIndex, sc->a, uint32_t(i + 1));
    sample_errors(prg, sc->e);
    ntt_forward(sc->a, t);
    pointwise_mul(sc->b, sc->a, sc->su_ntt, sc->su_shoup, t);
    ntt_inverse(sc->b, t);
    const uint64_t gi = gadget_factor(g, i), gs = shoup_precompute(gi, q);
    for (size_t k = 0; k < kN; ++k) {  // −a·s_u + e + g_i·s
      const uint64_t b = sub_mod(from_signed(sc->e[k], q), sc->b[k], q);
      sc->b[k] = add_mod(b, mul_shoup(from_signed(from.s[k], q), gi, gs, q), q);
    }
    pack_bits(sc->b, kN, kQksBits, out + kKskHeaderBytes + i * kKskDigitBytes);
  }
  delete sc;
  return kOk;
}

Status ksk_load(const uint8_t* in, size_t len, KeySwitchKey& k) {
  // Version before length: a key of another layout (an older build's, stored
  // by a client) is reported as such, not as a wrong length.
  if (len < 3 || in[0] != kKskTag) return kBadLength;
  if (in[1] != kKskVersion) return kBadVersion;
  const unsigned T = in[2];
  if (T < 1 || T > kMaxT) return kBadParams;
  if (len != ksk_bytes(T)) return kBadLength;
  const KsGadget g = ks_gadget(T);
  uint64_t* data =
      static_cast<uint64_t*>(malloc(KeySwitchKey::kParts * g.digits * kN * sizeof(uint64_t)));
  if (!data) return kNoMemory;
  free(k.data);
  k.data = data;
  k.T = T;
  k.gadget = g;
  const uint8_t* seed = in + 3;
  const NttTables& t = ntt_tables(kQksIndex);
  for (size_t i = 0; i < g.digits; ++i) {
    uint64_t *b = k.part(i, 0), *b_shoup = k.part(i, 1), *a = k.part(i, 2), *a_shoup = k.part(i, 3);
    if (!unpack_bits(in + kKskHeaderBytes + i * kKskDigitBytes, kN, kQksBits, t.q, b))
      return kOutOfRange;
    split_reversed(b, k.b_lo(i), k.b_hi(i));
    expand_uniform(seed, kQksIndex, a, uint32_t(i + 1));
    ntt_forward(b, t);
    ntt_forward(a, t);
    for (size_t c = 0; c < kN; ++c) {
      b_shoup[c] = shoup_precompute(b[c], t.q);
      a_shoup[c] = shoup_precompute(a[c], t.q);
    }
  }
  return kOk;
}

namespace {

// ā = round(a·2^in / q2), centered in [−2^(in−1), 2^(in−1)), into sc.v.
void round_centered(const KsGadget& g, const uint64_t a[kN], SwitchScratch& sc) {
  const Rescale to_in = Rescale::to_pow2(g.in_bits, kQ[1]);
  const uint64_t top = uint64_t(1) << g.in_bits, half = top >> 1;
  for (size_t c = 0; c < kN; ++c) {
    const uint64_t y = to_in(a[c]);
    sc.v[c] = int64_t(y - (top & ge_mask(y, half)));
  }
}

// Digit i of what is left in sc.v, modulo q_ks in coefficient form, into sc.d.
void next_digit(const KsGadget& g, size_t i, SwitchScratch& sc) {
  const int64_t low_mask = (int64_t(1) << g.base_bits) - 1, sign = int64_t(1) << (g.base_bits - 1);
  const bool last = i + 1 == g.digits;  // public: the top digit takes the rest
  for (size_t c = 0; c < kN; ++c) {
    const int64_t low = sc.v[c] & low_mask;
    const int64_t digit = last ? sc.v[c] : low - ((low & sign) << 1);  // in [−2^(w−1), 2^(w−1))
    sc.v[c] = (sc.v[c] - digit) >> g.base_bits;                        // exact
    sc.d[c] = from_signed(digit, kQks);
    sc.digit[c] = int32_t(digit);
  }
}

// Σ x[i]·y[i] over 32-bit signed values, exact while the sum fits 63 bits.
int64_t dot_i32(const int32_t* x, const int32_t* y, size_t len) {
  size_t i = 0;
  int64_t sum = 0;
#ifdef __wasm_simd128__
  v128_t lo = wasm_i64x2_splat(0), hi = wasm_i64x2_splat(0);
  for (; i + 4 <= len; i += 4) {
    const v128_t vx = wasm_v128_load(x + i), vy = wasm_v128_load(y + i);
    lo = wasm_i64x2_add(lo, wasm_i64x2_extmul_low_i32x4(vx, vy));
    hi = wasm_i64x2_add(hi, wasm_i64x2_extmul_high_i32x4(vx, vy));
  }
  const v128_t both = wasm_i64x2_add(lo, hi);
  sum = wasm_i64x2_extract_lane(both, 0) + wasm_i64x2_extract_lane(both, 1);
#endif
  for (; i < len; ++i) sum += int64_t(x[i]) * y[i];
  return sum;
}

// Signed |x| < 2^62 into [0, q_ks).
uint64_t signed_mod_qks(int64_t x, const NttTables& t) {
  constexpr uint64_t kOffset = kQks << 12;  // > 2^61, a multiple of q_ks
  return reduce64(uint64_t(x + int64_t(kOffset)), t.q, t.one_shoup);
}

// Coefficient j of d·b in Z_q_ks[X]/(X^n+1), d the signed digits and b its
// halves (split_reversed): the terms with c > j wrap and change sign; the
// indices are public. Each product is below 2^23·2^25, n of them below 2^60,
// so the sums are exact in 64 bits and need no reduction until the end.
uint64_t product_at(const int32_t* d, const int32_t* lo, const int32_t* hi, uint32_t j) {
  const NttTables& t = ntt_tables(kQksIndex);
  const size_t head = j + 1, tail = kN - head;  // c ≤ j: b[j − c] = rev[n − 1 − j + c]
  const int64_t s_lo = dot_i32(d, lo + tail, head) - dot_i32(d + head, lo, tail);
  const int64_t s_hi = dot_i32(d, hi + tail, head) - dot_i32(d + head, hi, tail);
  static const uint64_t two25 = uint64_t(1) << kHalfBits,
                        two25_shoup = shoup_precompute(two25, kQks);
  return add_mod(signed_mod_qks(s_lo, t),
                 mul_shoup(signed_mod_qks(s_hi, t), two25, two25_shoup, t.q), t.q);
}

// The switch of a with its b-part either in full (ks_b, j ignored) or only at
// coefficient j (ks_b null, into b_at) and its a-part only at the coefficients
// of j's parity (ks_a[k] = coefficient 2k + j mod 2): one extraction needs
// nothing else of either, which saves one inverse NTT and half of another.
Status switch_digits(const KeySwitchKey& k, const uint64_t a[kN], uint64_t* ks_b, uint32_t j,
                     uint64_t& b_at, uint64_t ks_a[kN]) {
  SwitchScratch* sc = new (std::nothrow) SwitchScratch;
  if (!sc) return kNoMemory;
  const KsGadget& g = k.gadget;
  const NttTables& t = ntt_tables(kQksIndex);
  round_centered(g, a, *sc);
  if (ks_b) memset(ks_b, 0, kN * sizeof ks_b[0]);
  memset(ks_a, 0, kN * sizeof ks_a[0]);
  b_at = 0;
  for (size_t i = 0; i < g.digits; ++i) {
    next_digit(g, i, *sc);
    if (!ks_b) b_at = add_mod(b_at, product_at(sc->digit, k.b_lo(i), k.b_hi(i), j), t.q);
    ntt_forward_lazy(sc->d, t);  // mul_shoup_lazier takes any 64-bit value
    // Unreduced sums: each product is below 4·q_ks, ℓ of them below 2^63.
    const uint64_t *b = k.part(i, 0), *b_shoup = k.part(i, 1);
    const uint64_t *ai = k.part(i, 2), *a_shoup = k.part(i, 3);
    if (ks_b)
      for (size_t c = 0; c < kN; ++c) ks_b[c] += mul_shoup_lazier(sc->d[c], b[c], b_shoup[c], t.q);
    for (size_t c = 0; c < kN; ++c) ks_a[c] += mul_shoup_lazier(sc->d[c], ai[c], a_shoup[c], t.q);
  }
  for (size_t c = 0; c < kN; ++c) ks_a[c] = reduce64(ks_a[c], t.q, t.one_shoup);
  if (ks_b)
    ntt_inverse(ks_a, t);
  else
    ntt_inverse_half(ks_a, j & 1, t, ks_a);
  if (ks_b) {
    for (size_t c = 0; c < kN; ++c) ks_b[c] = reduce64(ks_b[c], t.q, t.one_shoup);
    ntt_inverse(ks_b, t);
  }
  delete sc;
  return kOk;
}

}  // namespace

Status key_switch(const KeySwitchKey& k, const uint64_t a[kN], uint64_t ks_b[kN],
                  uint64_t ks_a[kN]) {
  uint64_t unused;
  return switch_digits(k, a, ks_b, 0, unused, ks_a);
}

Status key_switch_at(const KeySwitchKey& k, const uint64_t a[kN], uint32_t j, uint64_t& ks_b_j,
                     uint64_t ks_a[kN]) {
  if (j >= kN) return kBadParams;
  return switch_digits(k, a, nullptr, j, ks_b_j, ks_a);
}

}  // namespace pmf::he
