#include "he/scheme.h"

#include <cstring>
#include <new>

#include "common/chacha20.h"
#include "common/rng.h"
#include "he/sample.h"

namespace pmf::he {

uint64_t delta_mod(unsigned T, size_t limb) {
  const unsigned __int128 q = static_cast<unsigned __int128>(kQ[0]) * kQ[1];
  return uint64_t(((q - 1) >> T) % kQ[limb]);
}

// Fills b = −(a·s) + e for every limb; a is already in coefficient form.
void rlwe_body(const SecretKey& sk, uint64_t a[kLimbs][kN], const int8_t* e,
               uint64_t b[kLimbs][kN]) {
  for (size_t l = 0; l < kLimbs; ++l) {
    const NttTables& t = ntt_tables(l);
    ntt_forward(a[l], t);
    pointwise_mul(b[l], a[l], sk.s_ntt[l], sk.s_ntt_shoup[l], t);
    ntt_inverse(b[l], t);
    for (size_t i = 0; i < kN; ++i) b[l][i] = sub_mod(from_signed(e[i], t.q), b[l][i], t.q);
  }
}

void sample_errors(ChaCha20Stream& prg, int8_t* e) {
  for (size_t i = 0; i < kN; ++i) e[i] = int8_t(sample_cbd(prg));
}

namespace {

// Ternary coefficients at indices 0, stride, 2·stride, …; zero elsewhere.
void write_secret_key(ChaCha20Stream& prg, size_t stride, uint8_t out[kSecretKeyBytes]) {
  out[0] = kSecretKeyTag;
  out[1] = kLayoutVersion;
  memset(out + 2, 0, kN / 4);
  for (size_t i = 0; i < kN; i += stride) {
    int8_t s = sample_ternary(prg);
    uint8_t code = uint8_t((s & 1) << ((s >> 7) & 1));  // 0 → 0, 1 → 1, −1 → 2
    out[2 + i / 4] |= uint8_t(code << (2 * (i % 4)));
  }
}

struct Scratch {  // large temporaries live on the heap, not the 1 MB stack
  uint64_t a[kLimbs][kN], b[kLimbs][kN];
  int8_t e[kN];
  ~Scratch() { secure_wipe(this, sizeof *this); }
};

}  // namespace

void sk_generate(uint8_t out[kSecretKeyBytes]) {
  FreshPrg prg;
  write_secret_key(prg, 1, out);
}

void sk_derive_user(const uint8_t seed[32], uint8_t out[kSecretKeyBytes]) {
  ChaCha20Stream prg(seed, kDerivedKeyNonce);
  write_secret_key(prg, kN / kLweN, out);
}

Status sk_load(const uint8_t* in, size_t len, SecretKey& sk) {
  if (len != kSecretKeyBytes || in[0] != kSecretKeyTag) return kBadLength;
  if (in[1] != kLayoutVersion) return kBadVersion;
  uint8_t bad = 0;
  for (size_t i = 0; i < kN; ++i) {
    uint8_t code = (in[2 + i / 4] >> (2 * (i % 4))) & 3;
    bad |= uint8_t(code == 3);
    sk.s[i] = int8_t(code & 1) - int8_t(code >> 1);  // 0 → 0, 1 → 1, 2 → −1
  }
  if (bad) return kOutOfRange;
  sk_precompute(sk);
  return kOk;
}

void sk_precompute(SecretKey& sk) {
  for (size_t l = 0; l < kLimbs; ++l) {
    const NttTables& t = ntt_tables(l);
    for (size_t i = 0; i < kN; ++i) sk.s_ntt[l][i] = from_signed(sk.s[i], t.q);
    ntt_forward(sk.s_ntt[l], t);
    for (size_t i = 0; i < kN; ++i) sk.s_ntt_shoup[l][i] = shoup_precompute(sk.s_ntt[l][i], t.q);
  }
}

Status encrypt_record(const SecretKey& sk, const uint32_t* m, unsigned T, unsigned a_rounds,
                      uint8_t out[kRecordBytes]) {
  if (T == 0 || T > kMaxT || !valid_model_a_rounds(a_rounds)) return kBadParams;
  for (size_t i = 0; i < kN; ++i)
    if ((uint64_t(m[i]) >> T) != 0) return kOutOfRange;
  Scratch* sc = new (std::nothrow) Scratch;
  if (!sc) return kNoMemory;
  random_bytes(out, kSeedBytes);
  for (size_t l = 0; l < kLimbs; ++l) expand_uniform(out, l, sc->a[l], 0, a_rounds);
  {
    FreshPrg prg;
    sample_errors(prg, sc->e);
  }
  rlwe_body(sk, sc->a, sc->e, sc->b);
  for (size_t l = 0; l < kLimbs; ++l) {
    const uint64_t q = kQ[l], d = delta_mod(T, l), ds = shoup_precompute(d, q);
    for (size_t i = 0; i < kN; ++i)
      sc->b[l][i] = add_mod(sc->b[l][i], mul_shoup(m[i], d, ds, q), q);
    pack_bits(sc->b[l], kN, kQBits, out + kSeedBytes + l * kPackedLimbBytes);
  }
  delete sc;
  return kOk;
}

Status public_key(const SecretKey& sk, const uint8_t p1_seed[32], const uint8_t e_seed[32],
                  uint8_t out[kPublicKeyBytes]) {
  Scratch* sc = new (std::nothrow) Scratch;
  if (!sc) return kNoMemory;
  for (size_t l = 0; l < kLimbs; ++l) expand_uniform(p1_seed, l, sc->a[l]);
  {
    ChaCha20Stream prg(e_seed, kPublicKeyNoiseNonce);
    sample_errors(prg, sc->e);
  }
  rlwe_body(sk, sc->a, sc->e, sc->b);  // p0 = −(p1·s + e): same form with −e
  out[0] = kPublicKeyTag;
  out[1] = kLayoutVersion;
  for (size_t l = 0; l < kLimbs; ++l)
    pack_bits(sc->b[l], kN, kQBits, out + 2 + l * kPackedLimbBytes);
  delete sc;
  return kOk;
}

Status lwe_phase(const SecretKey& sk, const uint8_t* in, size_t len, unsigned Q, uint64_t& phase) {
  if (Q == 0 || Q > kMaxQ) return kBadParams;
  if (len != lwe_bytes(Q) || in[0] != kLweTag) return kBadLength;
  if (in[1] != kLweVersion) return kBadVersion;
  if (in[2] != Q) return kBadParams;
  const uint8_t* p = in + 3;
  const size_t plen = len - 3, bits = Q + kLweN * size_t(Q - 1);
  if (bits % 8 && (p[plen - 1] >> (bits % 8)) != 0)
    return kOutOfRange;  // one encoding per ciphertext
  // Every value is valid, so decryption fuses unpacking and the inner
  // product. b' has Q bits; a'[k] has Q − 1 bits at offset Q + k(Q − 1),
  // worth 2·a'[k] modulo 2^Q.
  auto value = [&](size_t bit, unsigned width) { return bits_at(p, plen, bit, width); };
  const uint64_t mask = (uint64_t(1) << Q) - 1;
  uint64_t acc = value(0, Q);
  for (size_t k = 0; k < kLweN; ++k)
    acc += (value(Q + k * (Q - 1), Q - 1) << 1) *
           uint64_t(int64_t(sk.s[2 * k]));  // wraps mod 2^64 ⊇ 2^Q
  phase = acc & mask;
  secure_wipe(&acc, sizeof acc);
  return kOk;
}

Status lwe_decrypt(const SecretKey& sk, const uint8_t* in, size_t len, unsigned T, unsigned Q,
                   uint32_t& y) {
  if (T < 1 || T > kMaxT || Q <= T) return kBadParams;
  uint64_t v;
  Status st = lwe_phase(sk, in, len, Q, v);
  if (st != kOk) return st;
  y = round_phase(v, T, Q);
  secure_wipe(&v, sizeof v);
  return kOk;
}

Status packed_decrypt(const SecretKey& sk, const uint8_t* in, size_t len, unsigned T, unsigned Q,
                      uint32_t count, uint32_t* y) {
  if (T < 1 || T > kMaxT || Q <= T || Q > kMaxQ || count < 1 || count > kN) return kBadParams;
  if (len != packed_bytes_for(Q, count) || in[0] != kPackedTag) return kBadLength;
  if (in[1] != kPackedVersion) return kBadVersion;
  if (in[2] != Q || (uint32_t(in[3]) | uint32_t(in[4]) << 8) != count) return kBadParams;
  const uint8_t* p = in + kPackedHeaderBytes;
  const size_t plen = len - kPackedHeaderBytes, a_at = size_t(count) * Q;
  const size_t bits = a_at + kN * size_t(Q - 1);
  if (bits % 8 && (p[plen - 1] >> (bits % 8)) != 0)
    return kOutOfRange;  // one encoding per ciphertext
  // The a-part is public: unpacked once, in units of 2^(Q−1) doubled to 2^Q.
  std::vector<uint64_t> a(kN);
  for (size_t k = 0; k < kN; ++k) a[k] = bits_at(p, plen, a_at + k * (Q - 1), Q - 1) << 1;
  // Coefficient j of a·s_u(X²): Σ over even k ≤ j of a[j−k]·s[k], minus Σ over
  // even k > j of a[n+j−k]·s[k] (negacyclic); the same inner product as
  // lwe_phase on the LWE vector extracted at j. Wraps mod 2^64 ⊇ 2^Q.
  const uint64_t mask = (uint64_t(1) << Q) - 1;
  for (uint32_t j = 0; j < count; ++j) {
    uint64_t acc = bits_at(p, plen, size_t(j) * Q, Q);
    size_t k = 0;
    for (; k <= j; k += 2) acc += a[j - k] * uint64_t(int64_t(sk.s[k]));
    for (; k < kN; k += 2) acc -= a[kN + j - k] * uint64_t(int64_t(sk.s[k]));
    acc &= mask;
    y[j] = round_phase(acc, T, Q);
    secure_wipe(&acc, sizeof acc);
  }
  return kOk;
}

Status pk_load(const uint8_t* in, size_t len, const uint8_t p1_seed[32], PublicKey& pk) {
  if (len != kPublicKeyBytes || in[0] != kPublicKeyTag) return kBadLength;
  if (in[1] != kLayoutVersion) return kBadVersion;
  for (size_t l = 0; l < kLimbs; ++l) {
    const NttTables& t = ntt_tables(l);
    if (!unpack_bits(in + 2 + l * kPackedLimbBytes, kN, kQBits, t.q, pk.p0[l])) return kOutOfRange;
    expand_uniform(p1_seed, l, pk.p1_ntt[l]);
    ntt_forward(pk.p1_ntt[l], t);
    for (size_t i = 0; i < kN; ++i) pk.p1_ntt_shoup[l][i] = shoup_precompute(pk.p1_ntt[l][i], t.q);
  }
  return kOk;
}

}  // namespace pmf::he
