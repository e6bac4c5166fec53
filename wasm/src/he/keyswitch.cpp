#include "he/keyswitch.h"

#include <cstring>
#include <new>

#include "he/sample.h"

namespace pmf::he {

namespace {

uint64_t gadget(size_t digit, size_t limb) {
  return pow_mod(2, uint64_t(kKsBaseBits) * digit, kQ[limb]);
}

struct GenScratch {
  uint64_t a[kLimbs][kN], b[kLimbs][kN];
  int8_t e[kN];
  ~GenScratch() { secure_wipe(this, sizeof *this); }
};

struct SwitchScratch {
  int8_t digits[kKsDigits][kN];
  uint64_t d[kN], prod[kN];
  ~SwitchScratch() { secure_wipe(this, sizeof *this); }
};

// Balanced base-2^8 digits of the centered CRT value of (x1, x2), constant-time.
void decompose(uint64_t x1, uint64_t x2, int8_t digits[kKsDigits][kN], size_t k) {
  __int128 x = centered_crt(x1, x2);
  for (size_t i = 0; i < kKsDigits; ++i) {
    const int64_t low = int64_t(x & 0xff);
    const int64_t digit = low - ((low & 0x80) << 1);  // in [−128, 128)
    digits[i][k] = int8_t(digit);
    x = (x - digit) >> kKsBaseBits;  // exact
  }
}

}  // namespace

Status ksk_generate(const SecretKey& from, const SecretKey& to, const uint8_t a_seed[32],
                    const uint8_t e_seed[32], uint8_t out[kKskBytes]) {
  GenScratch* sc = new (std::nothrow) GenScratch;
  if (!sc) return kNoMemory;
  out[0] = kKskTag;
  out[1] = kLayoutVersion;
  memcpy(out + 2, a_seed, kSeedBytes);
  ChaCha20Stream prg(e_seed, kKskNoiseNonce);
  for (size_t i = 0; i < kKsDigits; ++i) {
    for (size_t l = 0; l < kLimbs; ++l) expand_uniform(a_seed, l, sc->a[l], uint32_t(i + 1));
    sample_errors(prg, sc->e);
    rlwe_body(to, sc->a, sc->e, sc->b);  // −a·s_u + e
    for (size_t l = 0; l < kLimbs; ++l) {
      const uint64_t q = kQ[l], g = gadget(i, l), gs = shoup_precompute(g, q);
      for (size_t k = 0; k < kN; ++k)
        sc->b[l][k] = add_mod(sc->b[l][k], mul_shoup(from_signed(from.s[k], q), g, gs, q), q);
      pack_bits(sc->b[l], kN, kQBits, out + 2 + kSeedBytes + (i * kLimbs + l) * kPackedLimbBytes);
    }
  }
  delete sc;
  return kOk;
}

Status ksk_load(const uint8_t* in, size_t len, KeySwitchKey& k) {
  if (len != kKskBytes || in[0] != kKskTag) return kBadLength;
  if (in[1] != kLayoutVersion) return kBadVersion;
  const uint8_t* seed = in + 2;
  for (size_t i = 0; i < kKsDigits; ++i) {
    for (size_t l = 0; l < kLimbs; ++l) {
      const NttTables& t = ntt_tables(l);
      const uint8_t* b = in + 2 + kSeedBytes + (i * kLimbs + l) * kPackedLimbBytes;
      if (!unpack_bits(b, kN, kQBits, t.q, k.k0[i][l])) return kOutOfRange;
      expand_uniform(seed, l, k.k1[i][l], uint32_t(i + 1));
      ntt_forward(k.k0[i][l], t);
      ntt_forward(k.k1[i][l], t);
      for (size_t c = 0; c < kN; ++c) {
        k.k0_shoup[i][l][c] = shoup_precompute(k.k0[i][l][c], t.q);
        k.k1_shoup[i][l][c] = shoup_precompute(k.k1[i][l][c], t.q);
      }
    }
  }
  return kOk;
}

Status key_switch(const KeySwitchKey& k, const uint64_t a[kLimbs][kN], uint64_t ks_b[kLimbs][kN],
                  uint64_t ks_a[kLimbs][kN]) {
  SwitchScratch* sc = new (std::nothrow) SwitchScratch;
  if (!sc) return kNoMemory;
  for (size_t c = 0; c < kN; ++c) decompose(a[0][c], a[1][c], sc->digits, c);
  for (size_t l = 0; l < kLimbs; ++l) {
    const NttTables& t = ntt_tables(l);
    memset(ks_b[l], 0, sizeof ks_b[l]);
    memset(ks_a[l], 0, sizeof ks_a[l]);
    for (size_t i = 0; i < kKsDigits; ++i) {
      for (size_t c = 0; c < kN; ++c) sc->d[c] = from_signed(sc->digits[i][c], t.q);
      ntt_forward(sc->d, t);
      pointwise_mul(sc->prod, sc->d, k.k0[i][l], k.k0_shoup[i][l], t);
      for (size_t c = 0; c < kN; ++c) ks_b[l][c] = add_mod(ks_b[l][c], sc->prod[c], t.q);
      pointwise_mul(sc->prod, sc->d, k.k1[i][l], k.k1_shoup[i][l], t);
      for (size_t c = 0; c < kN; ++c) ks_a[l][c] = add_mod(ks_a[l][c], sc->prod[c], t.q);
    }
    ntt_inverse(ks_b[l], t);
    ntt_inverse(ks_a[l], t);
  }
  delete sc;
  return kOk;
}

}  // namespace pmf::he
