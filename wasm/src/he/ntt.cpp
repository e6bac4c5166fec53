#include "he/ntt.h"

namespace pmf::he {

uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t q) {
  return uint64_t(static_cast<unsigned __int128>(a) * b % q);
}

uint64_t pow_mod(uint64_t base, uint64_t exp, uint64_t q) {
  uint64_t r = 1;
  for (; exp; exp >>= 1, base = mul_mod(base, base, q))
    if (exp & 1) r = mul_mod(r, base, q);
  return r;
}

__int128 centered_crt(uint64_t x1, uint64_t x2) {
  using u128 = unsigned __int128;
  const uint64_t q1 = kQ[0], q2 = kQ[1];
  static const uint64_t inv = pow_mod(q1 % q2, q2 - 2, q2);  // q1^{-1} mod q2
  static const uint64_t inv_shoup = shoup_precompute(inv, q2);
  const uint64_t x1_mod_q2 = x1 - (ge_mask(x1, q2) & q2);  // q1 < 2·q2
  const uint64_t h = mul_shoup(sub_mod(x2, x1_mod_q2, q2), inv, inv_shoup, q2);
  const __int128 q = __int128(u128(q1) * q2);
  const __int128 x = __int128(u128(x1) + u128(q1) * h);  // in [0, q)
  return x - (q & ((q / 2 - x) >> 127));                 // minus q when x > q/2
}

namespace {

unsigned bit_reverse(unsigned x, unsigned bits) {
  unsigned r = 0;
  for (unsigned i = 0; i < bits; ++i, x >>= 1) r = (r << 1) | (x & 1);
  return r;
}

void build(NttTables& t, size_t limb) {
  const uint64_t q = kModulus[limb];
  t.q = q;
  t.one_shoup = shoup_precompute(1, q);
  const uint64_t psi = kPsi[limb];
  const uint64_t psi_inv = pow_mod(psi, 2 * kN - 1, q);
  for (unsigned i = 0; i < kN; ++i) {
    unsigned e = bit_reverse(i, kLogN);
    t.psi_rev[i] = pow_mod(psi, e, q);
    t.psi_rev_shoup[i] = shoup_precompute(t.psi_rev[i], q);
    t.psi_inv_rev[i] = pow_mod(psi_inv, e, q);
    t.psi_inv_rev_shoup[i] = shoup_precompute(t.psi_inv_rev[i], q);
  }
  t.n_inv = pow_mod(kN, q - 2, q);
  t.n_inv_shoup = shoup_precompute(t.n_inv, q);
  t.psi_inv_rev_n = mul_mod(t.psi_inv_rev[1], t.n_inv, q);
  t.psi_inv_rev_n_shoup = shoup_precompute(t.psi_inv_rev_n, q);
}

}  // namespace

const NttTables& ntt_tables(size_t limb) {
  static NttTables tables[kModuli];
  static bool ready[kModuli] = {false, false, false};
  if (!ready[limb]) {
    build(tables[limb], limb);
    ready[limb] = true;
  }
  return tables[limb];
}

// Lazy butterflies (after Harvey) with Shoup products short of exact
// (mul_shoup_lazier, in [0, 4q)), two layers per pass (radix 4: half the
// loads and stores of one layer at a time). Forward: no correction at all;
// each layer adds less than 4q to the largest value, so inputs below q stay
// below 49q < 2^60 (q < 2^54) through the 12 layers. Inverse: values
// stay below 4q with one masked correction per butterfly, and the last layer
// folds in the factor 1/n. Same outputs as exact arithmetic.
namespace {

static_assert(kQ[0] < (uint64_t(1) << 54) && kQ[1] < (uint64_t(1) << 54) && kQks < kQ[1],
              "forward values stay below 49q < 2^60");
static_assert(kLogN % 2 == 0, "the forward layers pair up");

// x − m when x ≥ m (x, m < 2^63), without a branch.
inline uint64_t reduce_once(uint64_t x, uint64_t m) { return x - (m & ge_mask(x, m)); }

}  // namespace

// Layers m and 2m at once: block i of layer m (twiddle psi_rev[m + i]) pairs
// x[j] with x[j + len] and x[j + len/2] with x[j + 3len/2]; layer 2m then
// pairs within each half (twiddles psi_rev[2m + 2i], psi_rev[2m + 2i + 1]).
void ntt_forward_lazy(uint64_t* a, const NttTables& t) {
  const uint64_t q = t.q, four_q = 4 * q;
  for (size_t m = 1, len = kN / 2; m < kN; m <<= 2, len >>= 2) {
    const size_t h = len / 2;
    for (size_t i = 0; i < m; ++i) {
      const uint64_t w = t.psi_rev[m + i], ws = t.psi_rev_shoup[m + i];
      const uint64_t w0 = t.psi_rev[2 * m + 2 * i], w0s = t.psi_rev_shoup[2 * m + 2 * i];
      const uint64_t w1 = t.psi_rev[2 * m + 2 * i + 1], w1s = t.psi_rev_shoup[2 * m + 2 * i + 1];
      uint64_t* x = a + 2 * i * len;
      for (size_t j = 0; j < h; ++j) {
        const uint64_t u0 = x[j], u1 = x[j + h];
        const uint64_t v0 = mul_shoup_lazier(x[j + len], w, ws, q);
        const uint64_t v1 = mul_shoup_lazier(x[j + len + h], w, ws, q);
        const uint64_t s0 = u0 + v0, d0 = u0 - v0 + four_q;  // the two halves of layer m
        const uint64_t s1 = u1 + v1, d1 = u1 - v1 + four_q;
        const uint64_t y0 = mul_shoup_lazier(s1, w0, w0s, q), y1 = mul_shoup_lazier(d1, w1, w1s, q);
        x[j] = s0 + y0;
        x[j + h] = s0 - y0 + four_q;
        x[j + len] = d0 + y1;
        x[j + len + h] = d0 - y1 + four_q;
      }
    }
  }
}

void ntt_forward(uint64_t* a, const NttTables& t) {
  ntt_forward_lazy(a, t);
  for (size_t i = 0; i < kN; ++i) a[i] = reduce64(a[i], t.q, t.one_shoup);
}

namespace {

// Gentleman–Sande butterfly on values below 4q: (u + v, (u − v)·w), both below 4q.
inline void gs_butterfly(uint64_t& x, uint64_t& y, uint64_t w, uint64_t ws, uint64_t q) {
  const uint64_t u = x, v = y;
  x = reduce_once(u + v, 4 * q);
  y = mul_shoup_lazier(u - v + 4 * q, w, ws, q);
}

// The inverse layers on n ≤ kN values below 4q: for the whole transform
// (n = kN), or for one parity's half after the first layer (n = kN/2, whose
// layers use the same twiddles at half the stride), two layers per pass while
// two remain. The last layer folds in 1/kN.
void inverse_layers(uint64_t* a, size_t n, const NttTables& t) {
  const uint64_t q = t.q, four_q = 4 * q;
  size_t len = 1, m = n;
  for (; m >= 8; m >>= 2, len <<= 2) {  // layers m (blocks h + i) and m/2 (blocks h/2 + i)
    const size_t h = m >> 1;
    for (size_t i = 0; i < h / 2; ++i) {
      const uint64_t w = t.psi_inv_rev[h / 2 + i], ws = t.psi_inv_rev_shoup[h / 2 + i];
      const uint64_t w0 = t.psi_inv_rev[h + 2 * i], w0s = t.psi_inv_rev_shoup[h + 2 * i];
      const uint64_t w1 = t.psi_inv_rev[h + 2 * i + 1], w1s = t.psi_inv_rev_shoup[h + 2 * i + 1];
      uint64_t* x = a + 4 * i * len;
      for (size_t j = 0; j < len; ++j) {
        uint64_t x0 = x[j], x1 = x[j + len], x2 = x[j + 2 * len], x3 = x[j + 3 * len];
        gs_butterfly(x0, x1, w0, w0s, q);
        gs_butterfly(x2, x3, w1, w1s, q);
        gs_butterfly(x0, x2, w, ws, q);
        gs_butterfly(x1, x3, w, ws, q);
        x[j] = x0;
        x[j + len] = x1;
        x[j + 2 * len] = x2;
        x[j + 3 * len] = x3;
      }
    }
  }
  if (m == 4) {  // one layer left before the last
    for (size_t i = 0; i < 2; ++i) {
      uint64_t* x = a + 2 * i * len;
      for (size_t j = 0; j < len; ++j)
        gs_butterfly(x[j], x[j + len], t.psi_inv_rev[2 + i], t.psi_inv_rev_shoup[2 + i], q);
    }
  }
  // The last layer (one twiddle w) with 1/kN: x = (u + v)/kN, y = (u − v)·w/kN.
  const uint64_t wn = t.psi_inv_rev_n, wns = t.psi_inv_rev_n_shoup;
  for (size_t j = 0; j < n / 2; ++j) {
    const uint64_t u = a[j], v = a[j + n / 2];
    a[j] = mul_shoup(u + v, t.n_inv, t.n_inv_shoup, q);
    a[j + n / 2] = mul_shoup(u - v + four_q, wn, wns, q);
  }
}

}  // namespace

void ntt_inverse(uint64_t* a, const NttTables& t) { inverse_layers(a, kN, t); }

// The first layer pairs a[2i] with a[2i + 1] into the even (u + v) and odd
// ((u − v)·w) positions, and the later layers never mix the two: one parity
// needs only its half.
void ntt_inverse_half(const uint64_t* a, size_t parity, const NttTables& t, uint64_t* half) {
  const uint64_t q = t.q, four_q = 4 * q;
  if (parity == 0)
    for (size_t i = 0; i < kN / 2; ++i) half[i] = reduce_once(a[2 * i] + a[2 * i + 1], four_q);
  else
    for (size_t i = 0; i < kN / 2; ++i)
      half[i] = mul_shoup_lazier(a[2 * i] - a[2 * i + 1] + four_q, t.psi_inv_rev[kN / 2 + i],
                                 t.psi_inv_rev_shoup[kN / 2 + i], q);
  inverse_layers(half, kN / 2, t);
}

void pointwise_mul(uint64_t* c, const uint64_t* a, const uint64_t* b, const uint64_t* b_shoup,
                   const NttTables& t) {
  for (size_t j = 0; j < kN; ++j) c[j] = mul_shoup(a[j], b[j], b_shoup[j], t.q);
}

}  // namespace pmf::he
