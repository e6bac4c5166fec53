#include "he/keyswitch.h"

#include <cstdlib>
#include <cstring>
#include <new>

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

static_assert(2 * kMaxKsDigits * kQks < (uint64_t(1) << 63), "unreduced digit sums fit 64 bits");

struct SwitchScratch {
  int64_t v[kN];  // what is left of each centered coefficient after the digits so far
  uint64_t d[kN];
  ~SwitchScratch() { secure_wipe(this, sizeof *this); }
};

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
    uint64_t *b_coef = k.part(i, 4), *b_coef_shoup = k.part(i, 5);
    if (!unpack_bits(in + kKskHeaderBytes + i * kKskDigitBytes, kN, kQksBits, t.q, b))
      return kOutOfRange;
    memcpy(b_coef, b, kN * sizeof *b);
    expand_uniform(seed, kQksIndex, a, uint32_t(i + 1));
    ntt_forward(b, t);
    ntt_forward(a, t);
    for (size_t c = 0; c < kN; ++c) {
      b_shoup[c] = shoup_precompute(b[c], t.q);
      a_shoup[c] = shoup_precompute(a[c], t.q);
      b_coef_shoup[c] = shoup_precompute(b_coef[c], t.q);
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
  }
}

static_assert(kN * 2 * kQks < (uint64_t(1) << 63), "n lazy products fit 63 bits");

// Coefficient j of d·b in Z_q_ks[X]/(X^n+1), from both in coefficient form:
// the terms with c > j wrap and change sign. The indices are public.
uint64_t product_at(const uint64_t* d, const uint64_t* b, const uint64_t* b_shoup, uint32_t j) {
  const NttTables& t = ntt_tables(kQksIndex);
  uint64_t plus = 0, minus = 0;
  for (size_t c = 0; c <= j; ++c) plus += mul_shoup_lazy(d[c], b[j - c], b_shoup[j - c], t.q);
  for (size_t c = j + 1; c < kN; ++c)
    minus += mul_shoup_lazy(d[c], b[kN + j - c], b_shoup[kN + j - c], t.q);
  return sub_mod(reduce64(plus, t.q, t.one_shoup), reduce64(minus, t.q, t.one_shoup), t.q);
}

// The switch of a with its b-part either in full (ks_b, j ignored) or only at
// coefficient j (ks_b null, into b_at): one extraction needs nothing else of
// it, which saves an inverse NTT.
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
    if (!ks_b) b_at = add_mod(b_at, product_at(sc->d, k.part(i, 4), k.part(i, 5), j), t.q);
    ntt_forward(sc->d, t);
    // Unreduced sums: each product is below 2·q_ks, ℓ of them below 2^64.
    const uint64_t *b = k.part(i, 0), *b_shoup = k.part(i, 1);
    const uint64_t *ai = k.part(i, 2), *a_shoup = k.part(i, 3);
    if (ks_b)
      for (size_t c = 0; c < kN; ++c) ks_b[c] += mul_shoup_lazy(sc->d[c], b[c], b_shoup[c], t.q);
    for (size_t c = 0; c < kN; ++c) ks_a[c] += mul_shoup_lazy(sc->d[c], ai[c], a_shoup[c], t.q);
  }
  for (size_t c = 0; c < kN; ++c) ks_a[c] = reduce64(ks_a[c], t.q, t.one_shoup);
  ntt_inverse(ks_a, t);
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
