#include "he/keyswitch.h"

#include <cstring>
#include <new>

#include "he/sample.h"

namespace pmf::he {

namespace {

uint64_t gadget(size_t digit) { return pow_mod(2, uint64_t(kKsBaseBits) * digit, kQ[kKsLimb]); }

struct GenScratch {
  uint64_t a[kN], b[kN];
  int8_t e[kN];
  ~GenScratch() { secure_wipe(this, sizeof *this); }
};

struct SwitchScratch {
  int8_t digits[kKsDigits][kN];
  uint64_t d[kN], prod[kN];
  ~SwitchScratch() { secure_wipe(this, sizeof *this); }
};

// Balanced base-2^8 digits of x in [0, q2) taken in (−q2/2, q2/2), constant-time.
void decompose(uint64_t x, int8_t digits[kKsDigits][kN], size_t k) {
  const uint64_t q = kQ[kKsLimb];
  int64_t v = int64_t(x) - int64_t(q & ge_mask(x, (q + 1) / 2));
  for (size_t i = 0; i < kKsDigits; ++i) {
    const int64_t low = v & 0xff;
    const int64_t digit = low - ((low & 0x80) << 1);  // in [−128, 128)
    digits[i][k] = int8_t(digit);
    v = (v - digit) >> kKsBaseBits;  // exact
  }
}

}  // namespace

Status ksk_generate(const SecretKey& from, const SecretKey& to, const uint8_t a_seed[32],
                    const uint8_t e_seed[32], uint8_t out[kKskBytes]) {
  GenScratch* sc = new (std::nothrow) GenScratch;
  if (!sc) return kNoMemory;
  const NttTables& t = ntt_tables(kKsLimb);
  const uint64_t q = t.q;
  out[0] = kKskTag;
  out[1] = kKskVersion;
  memcpy(out + 2, a_seed, kSeedBytes);
  ChaCha20Stream prg(e_seed, kKskNoiseNonce);
  for (size_t i = 0; i < kKsDigits; ++i) {
    expand_uniform(a_seed, kKsLimb, sc->a, uint32_t(i + 1));
    sample_errors(prg, sc->e);
    ntt_forward(sc->a, t);
    pointwise_mul(sc->b, sc->a, to.s_ntt[kKsLimb], to.s_ntt_shoup[kKsLimb], t);
    ntt_inverse(sc->b, t);
    const uint64_t g = gadget(i), gs = shoup_precompute(g, q);
    for (size_t k = 0; k < kN; ++k) {  // −a·s_u + e + g^i·s
      const uint64_t b = sub_mod(from_signed(sc->e[k], q), sc->b[k], q);
      sc->b[k] = add_mod(b, mul_shoup(from_signed(from.s[k], q), g, gs, q), q);
    }
    pack_bits(sc->b, kN, kQBits, out + 2 + kSeedBytes + i * kPackedLimbBytes);
  }
  delete sc;
  return kOk;
}

Status ksk_load(const uint8_t* in, size_t len, KeySwitchKey& k) {
  // Version before length: a key of another layout (an older build's, stored
  // by a client) is reported as such, not as a wrong length.
  if (len < 2 || in[0] != kKskTag) return kBadLength;
  if (in[1] != kKskVersion) return kBadVersion;
  if (len != kKskBytes) return kBadLength;
  const uint8_t* seed = in + 2;
  const NttTables& t = ntt_tables(kKsLimb);
  for (size_t i = 0; i < kKsDigits; ++i) {
    const uint8_t* b = in + 2 + kSeedBytes + i * kPackedLimbBytes;
    if (!unpack_bits(b, kN, kQBits, t.q, k.k0[i])) return kOutOfRange;
    expand_uniform(seed, kKsLimb, k.k1[i], uint32_t(i + 1));
    ntt_forward(k.k0[i], t);
    ntt_forward(k.k1[i], t);
    for (size_t c = 0; c < kN; ++c) {
      k.k0_shoup[i][c] = shoup_precompute(k.k0[i][c], t.q);
      k.k1_shoup[i][c] = shoup_precompute(k.k1[i][c], t.q);
    }
  }
  return kOk;
}

Status key_switch(const KeySwitchKey& k, const uint64_t a[kN], uint64_t ks_b[kN],
                  uint64_t ks_a[kN]) {
  SwitchScratch* sc = new (std::nothrow) SwitchScratch;
  if (!sc) return kNoMemory;
  const NttTables& t = ntt_tables(kKsLimb);
  for (size_t c = 0; c < kN; ++c) decompose(a[c], sc->digits, c);
  memset(ks_b, 0, kN * sizeof ks_b[0]);
  memset(ks_a, 0, kN * sizeof ks_a[0]);
  for (size_t i = 0; i < kKsDigits; ++i) {
    for (size_t c = 0; c < kN; ++c) sc->d[c] = from_signed(sc->digits[i][c], t.q);
    ntt_forward(sc->d, t);
    pointwise_mul(sc->prod, sc->d, k.k0[i], k.k0_shoup[i], t);
    for (size_t c = 0; c < kN; ++c) ks_b[c] = add_mod(ks_b[c], sc->prod[c], t.q);
    pointwise_mul(sc->prod, sc->d, k.k1[i], k.k1_shoup[i], t);
    for (size_t c = 0; c < kN; ++c) ks_a[c] = add_mod(ks_a[c], sc->prod[c], t.q);
  }
  ntt_inverse(ks_b, t);
  ntt_inverse(ks_a, t);
  delete sc;
  return kOk;
}

}  // namespace pmf::he
