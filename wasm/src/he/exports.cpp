// C ABI of the lattice layer (names pmf_he_*). Objects cross the boundary as
// opaque handles; every loader validates its bytes and returns a Status
// (common/status.h; the wasm/ts/he-*.ts classes throw it as a CoreError). Handles holding
// secrets are wiped when freed.
#include <new>

#include "common/export.h"
#include "he/client.h"
#include "he/keyswitch.h"
#include "he/ntt.h"
#include "he/sample.h"
#include "he/scheme.h"

using namespace pmf;
using namespace pmf::he;

PMF_EXPORT int pmf_he_layout(int what) {
  switch (what) {
    case 0:
      return int(kN);
    case 1:
      return int(kSecretKeyBytes);
    case 2:
      return int(kPublicKeyBytes);
    case 3:
      return int(kRecordBytes);
    case 4:
      return int(kQBits);
    case 6:
      return int(kMinQMinusT);
    case 7:
      return int(kFloodMarginBits);
    case 8:
      return int(kMaxT);
    case 9:
      return int(kMaxQ);
    default:
      return -1;
  }
}

// The moduli q1, q2, q_ks as (hi, lo) 32-bit halves, so tests can check the constants.
PMF_EXPORT uint32_t pmf_he_prime(int limb, int hi) {
  return hi ? uint32_t(kModulus[limb] >> 32) : uint32_t(kModulus[limb]);
}

// The key switch's gadget for T (0: in_bits, 1: base_bits, 2: digits) and its KSK's size.
PMF_EXPORT int pmf_he_ks_gadget(unsigned T, int what) {
  const KsGadget g = ks_gadget(T);
  return int(what == 0 ? g.in_bits : what == 1 ? g.base_bits : g.digits);
}

PMF_EXPORT int pmf_he_ksk_bytes(unsigned T) {
  return T >= 1 && T <= kMaxT ? int(ksk_bytes(T)) : -1;
}

PMF_EXPORT int pmf_he_lwe_bytes(unsigned Q) { return int(lwe_bytes(Q)); }

// rounds: 20 (ChaCha20) or 8 (ChaCha8, a model's a in package format 2).
PMF_EXPORT void pmf_he_expand_a(const uint8_t* seed, int limb, uint64_t* out, unsigned rounds) {
  expand_uniform(seed, size_t(limb), out, 0, rounds);
}

PMF_EXPORT void pmf_he_sk_generate(uint8_t* out) { sk_generate(out); }

PMF_EXPORT void pmf_he_sk_derive_user(const uint8_t* seed, uint8_t* out) {
  sk_derive_user(seed, out);
}

PMF_EXPORT int pmf_he_max_flood_bits(unsigned T) { return int(max_flood_bits(T)); }

PMF_EXPORT SecretKey* pmf_he_sk_load(const uint8_t* in, size_t len, int* status) {
  SecretKey* sk = new (std::nothrow) SecretKey;
  if (!sk) {
    *status = kNoMemory;
    return nullptr;
  }
  *status = sk_load(in, len, *sk);
  if (*status == kOk) return sk;
  pmf::secure_wipe(sk, sizeof *sk);
  delete sk;
  return nullptr;
}

PMF_EXPORT void pmf_he_sk_free(SecretKey* sk) {
  if (!sk) return;
  pmf::secure_wipe(sk, sizeof *sk);
  delete sk;
}

PMF_EXPORT int pmf_he_encrypt_record(const SecretKey* sk, const uint32_t* m, unsigned T,
                                     unsigned a_rounds, uint8_t* out) {
  return encrypt_record(*sk, m, T, a_rounds, out);
}

PMF_EXPORT int pmf_he_public_key(const SecretKey* sk, const uint8_t* p1_seed, const uint8_t* e_seed,
                                 uint8_t* out) {
  return public_key(*sk, p1_seed, e_seed, out);
}

PMF_EXPORT int pmf_he_ksk_generate(const SecretKey* from, const SecretKey* to, unsigned T,
                                   const uint8_t* a_seed, const uint8_t* e_seed, uint8_t* out) {
  return ksk_generate(*from, *to, T, a_seed, e_seed, out);
}

PMF_EXPORT KeySwitchKey* pmf_he_ksk_load(const uint8_t* in, size_t len, int* status) {
  KeySwitchKey* k = new (std::nothrow) KeySwitchKey;
  if (!k) {
    *status = kNoMemory;
    return nullptr;
  }
  *status = ksk_load(in, len, *k);
  if (*status == kOk) return k;
  delete k;
  return nullptr;
}

PMF_EXPORT void pmf_he_ksk_free(KeySwitchKey* k) { delete k; }

PMF_EXPORT int pmf_he_lwe_phase(const SecretKey* sk, const uint8_t* in, size_t len, unsigned Q,
                                uint64_t* phase) {
  return lwe_phase(*sk, in, len, Q, *phase);
}

PMF_EXPORT int pmf_he_decrypt(const SecretKey* sk, const uint8_t* in, size_t len, unsigned T,
                              unsigned Q, uint32_t* y) {
  return lwe_decrypt(*sk, in, len, T, Q, *y);
}

PMF_EXPORT PublicKey* pmf_he_pk_load(const uint8_t* in, size_t len, const uint8_t* p1_seed,
                                     int* status) {
  PublicKey* pk = new (std::nothrow) PublicKey;
  if (!pk) {
    *status = kNoMemory;
    return nullptr;
  }
  *status = pk_load(in, len, p1_seed, *pk);
  if (*status == kOk) return pk;
  delete pk;
  return nullptr;
}

PMF_EXPORT void pmf_he_pk_free(PublicKey* pk) { delete pk; }

PMF_EXPORT Model* pmf_he_model_new(uint32_t rows, uint32_t width, uint32_t a_cap, unsigned a_rounds,
                                   int* status) {
  Status st;
  Model* m = model_new(rows, width, a_cap, a_rounds, st);
  *status = st;
  return m;
}

// How many expanded a polynomials the model holds (each 2 × n × 8 bytes).
PMF_EXPORT uint32_t pmf_he_model_a_held(const Model* m) { return m->a_held; }

PMF_EXPORT int pmf_he_model_add(Model* m, const uint8_t* records, size_t count) {
  return model_add(*m, records, count);
}

PMF_EXPORT void pmf_he_model_free(Model* m) { delete m; }

PMF_EXPORT Accumulator* pmf_he_acc_new() { return new (std::nothrow) Accumulator; }

PMF_EXPORT void pmf_he_acc_free(Accumulator* acc) { delete acc; }

// flood_bound of a computed accumulator (0 when it holds none), as two 32-bit halves.
PMF_EXPORT void pmf_he_flood_bound(const Accumulator* acc, uint32_t* out) {
  const uint64_t b = acc->model ? flood_bound(*acc) : 0;
  out[0] = uint32_t(b);
  out[1] = uint32_t(b >> 32);
}

PMF_EXPORT int pmf_he_dot(Model* m, const uint32_t* rows, const uint32_t* counts, size_t len,
                          uint32_t max_count, Accumulator* acc) {
  return dot(*m, rows, counts, len, max_count, *acc);
}

PMF_EXPORT int pmf_he_extract(const Model* m, const Accumulator* acc, const PublicKey* pk,
                              const KeySwitchKey* ksk, uint32_t j, unsigned T, unsigned Q,
                              unsigned F, uint8_t* out, uint32_t* mask) {
  return extract(*m, *acc, *pk, *ksk, j, T, Q, F, out, *mask);
}

PMF_EXPORT int pmf_he_extract_packed(const Model* m, const Accumulator* acc, const PublicKey* pk,
                                     const KeySwitchKey* ksk, uint32_t count, unsigned T,
                                     unsigned Q, unsigned F, uint8_t* out, uint32_t* masks) {
  return extract_packed(*m, *acc, *pk, *ksk, count, T, Q, F, out, masks);
}

PMF_EXPORT int pmf_he_packed_bytes(unsigned Q, uint32_t count) {
  return int(packed_bytes_for(Q, count));
}

PMF_EXPORT int pmf_he_decrypt_packed(const SecretKey* sk, const uint8_t* in, size_t len, unsigned T,
                                     unsigned Q, uint32_t count, uint32_t* y) {
  return packed_decrypt(*sk, in, len, T, Q, count, y);
}

PMF_EXPORT int pmf_he_flood_noise(const SecretKey* sk, const Model* m, const Accumulator* acc,
                                  const PublicKey* pk, uint32_t j, unsigned T, unsigned F,
                                  uint32_t d, double* noise) {
  return flood_noise(*sk, *m, *acc, *pk, j, T, F, d, *noise);
}

PMF_EXPORT int pmf_he_acc_noise(const SecretKey* sk, const Model* m, const Accumulator* acc,
                                uint32_t j, unsigned T, uint32_t d, int64_t* noise) {
  return acc_noise(*sk, *m, *acc, j, T, d, *noise);
}

// Diagnostics for tests: key_switch_at on an a-part given mod q2 (n values),
// into b_j and ks_a (n/2 values mod q_ks: the coefficients of j's parity; n
// values of room).
PMF_EXPORT int pmf_he_key_switch_at(const KeySwitchKey* k, const uint64_t* a, uint32_t j,
                                    uint64_t* b_j, uint64_t* ks_a) {
  for (size_t c = 0; c < kN; ++c)
    if (a[c] >= kQ[1]) return kOutOfRange;
  return key_switch_at(*k, a, j, *b_j, ks_a);
}

// Diagnostics for tests: one transform of n values below modulus m (0: q1,
// 1: q2, 2: q_ks), in place. op 0: ntt_forward, 1: ntt_forward_lazy, 2:
// ntt_inverse, 3 and 4: ntt_inverse_half of parity 0 and 1 (n/2 values out).
PMF_EXPORT int pmf_he_ntt(int m, int op, uint64_t* a) {
  if (m < 0 || m >= int(kModuli) || op < 0 || op > 4) return kBadParams;
  const NttTables& t = ntt_tables(size_t(m));
  for (size_t c = 0; c < kN; ++c)
    if (a[c] >= t.q) return kOutOfRange;
  if (op == 0) ntt_forward(a, t);
  if (op == 1) ntt_forward_lazy(a, t);
  if (op == 2) ntt_inverse(a, t);
  if (op >= 3) ntt_inverse_half(a, size_t(op - 3), t, a);
  return kOk;
}
