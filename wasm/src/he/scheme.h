// BFV-style scheme of docs/crypto.md#scheme (coefficient encoding, RNS over q1, q2).
// Provider side: secret key, seeded symmetric encryption of model
// ciphertexts, per-client public keys, decryption of LWE ciphertexts.
// Client side: public key loading, the packed model, shift-and-add dot
// products and the docs/crypto.md#extraction-pipeline extraction pipeline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/chacha20.h"
#include "common/status.h"
#include "common/wipe.h"
#include "he/ntt.h"
#include "he/pack.h"
#include "he/ring.h"

namespace pmf::he {

// Serialized layouts (all versioned; see wasm/README.md, section lattice).
constexpr uint8_t kSecretKeyTag = 'S', kPublicKeyTag = 'P', kLweTag = 'L', kLayoutVersion = 1;
constexpr size_t kSecretKeyBytes = 2 + kN / 4;                     // tag, version, 2-bit codes
constexpr size_t kPublicKeyBytes = 2 + kLimbs * kPackedLimbBytes;  // tag, version, p0 limbs
constexpr size_t kSeedBytes = 32;
constexpr size_t kRecordBytes = kSeedBytes + kLimbs * kPackedLimbBytes;  // one model ciphertext
// The client's LWE ciphertexts have dimension n/2: the user keys they are
// switched to live in the subring R_2048 ↪ R_4096, Y = X² (he/keyswitch.h).
constexpr size_t kLweN = kN / 2;
// b' at Q bits, then a'[0..kLweN) at Q − 1 bits: the a-part's extra rounding
// costs little noise (docs/crypto.md#plaintext-and-output-modulus) and saves
// kLweN bits.
constexpr uint8_t kLweVersion = 3;  // 2: a' at Q bits; 1: dimension 4096
inline size_t lwe_bytes(unsigned Q) { return Q ? 3 + (Q + kLweN * size_t(Q - 1) + 7) / 8 : 0; }

// One ciphertext for the first `count` coefficients of a product (topics with
// B' = B, docs/crypto.md#packed-extraction): tag, version, Q, count (u16 LE),
// then b'[0..count) at Q bits and the whole switched a-part a[0..n) at Q − 1
// bits. Coefficient j decrypts like the LWE ciphertext extracted at j.
constexpr uint8_t kPackedTag = 'M', kPackedVersion = 1;
constexpr size_t kPackedHeaderBytes = 5;
inline size_t packed_bytes_for(unsigned Q, uint32_t count) {
  return kPackedHeaderBytes + (size_t(count) * Q + kN * size_t(Q - 1) + 7) / 8;
}

// y = round(phase / 2^(Q−T)) mod 2^T (docs/crypto.md#decryption).
inline uint32_t round_phase(uint64_t phase, unsigned T, unsigned Q) {
  return uint32_t(((phase + (uint64_t(1) << (Q - T - 1))) >> (Q - T)) & ((uint64_t(1) << T) - 1));
}

struct SecretKey {
  int8_t s[kN];
  uint64_t s_ntt[kLimbs][kN], s_ntt_shoup[kLimbs][kN];
};

struct PublicKey {
  uint64_t p0[kLimbs][kN];
  uint64_t p1_ntt[kLimbs][kN], p1_ntt_shoup[kLimbs][kN];
};

// b = −(a·s) + e for every limb (a in coefficient form; NTT'd in place).
void rlwe_body(const SecretKey& sk, uint64_t a[kLimbs][kN], const int8_t* e,
               uint64_t b[kLimbs][kN]);
// n centered-binomial errors from a stream.
void sample_errors(ChaCha20Stream& prg, int8_t* e);

// Δ = (q−1)/2^T reduced mod q_limb.
uint64_t delta_mod(unsigned T, size_t limb);

// ChaCha20 nonces of the provider's deterministic samplers (keyed by seeds
// the provider derives with HMAC-SHA-256 from its key file, wasm/ts/he-provider.ts).
constexpr uint8_t kDerivedKeyNonce[12] = {'p', 'm', 'f', '-', 'h', 'e', '-', 's', 'k', 0, 0, 0};
constexpr uint8_t kPublicKeyNoiseNonce[12] = {'p', 'm', 'f', '-', 'h', 'e',
                                              '-', 'p', 'k', 'e', 0,   0};

// Provider.
void sk_generate(uint8_t out[kSecretKeyBytes]);
// A per-user decryption key (he/keyswitch.h): s_u(X²) for a ternary s_u of
// dimension kLweN that is a deterministic function of a secret seed, serialized
// like any key (its odd coefficients are zero).
void sk_derive_user(const uint8_t seed[32], uint8_t out[kSecretKeyBytes]);
Status sk_load(const uint8_t* in, size_t len, SecretKey& sk);
// The NTT form of sk.s and its Shoup companions for every limb (sk_load's
// second half), constant-time in s: no branch or memory access depends on it.
void sk_precompute(SecretKey& sk);
// Rounds of the XOF that expands a model record's a from its seed: ChaCha8 in
// packages of format 2, ChaCha20 in format 1 (docs/crypto.md#samplers-and-seed-expansion).
// p1 and the key-switching keys always use ChaCha20.
constexpr unsigned kModelARounds = 8;
constexpr unsigned kLegacyModelARounds = 20;
constexpr bool valid_model_a_rounds(unsigned r) {
  return r == kModelARounds || r == kLegacyModelARounds;
}

// One model ciphertext record (seed ‖ packed b) encrypting m (values < 2^T),
// its a expanded with a_rounds (valid_model_a_rounds).
Status encrypt_record(const SecretKey& sk, const uint32_t* m, unsigned T, unsigned a_rounds,
                      uint8_t out[kRecordBytes]);
// p0 = −(p1·s + e) with e drawn from e_seed: the same (key, nonce) must always
// give the same p0, or averaging repeated answers removes e and reveals p1·s.
Status public_key(const SecretKey& sk, const uint8_t p1_seed[32], const uint8_t e_seed[32],
                  uint8_t out[kPublicKeyBytes]);
// b' + <a', s_u> mod 2^Q for a serialized LWE ciphertext, with sk = s_u(X²).
Status lwe_phase(const SecretKey& sk, const uint8_t* in, size_t len, unsigned Q, uint64_t& phase);
// y = round(phase / 2^(Q−T)) mod 2^T (docs/crypto.md#decryption).
Status lwe_decrypt(const SecretKey& sk, const uint8_t* in, size_t len, unsigned T, unsigned Q,
                   uint32_t& y);

// y[j] for j < count from a packed ciphertext (kPackedTag), with sk = s_u(X²).
Status packed_decrypt(const SecretKey& sk, const uint8_t* in, size_t len, unsigned T, unsigned Q,
                      uint32_t count, uint32_t* y);

// Client.
Status pk_load(const uint8_t* in, size_t len, const uint8_t p1_seed[32], PublicKey& pk);

}  // namespace pmf::he
