// Native build of the lattice sources (no SIMD: exercises the scalar paths)
// for he-native.test.ts: prints the expansion of seed 00..1f as hex (ChaCha20
// per modulus, ChaCha8 for q1 and q2), then a
// model round trip through dot, key switch, extract and decrypt.
#include <cstdio>
#include <vector>

#include "he/client.h"
#include "he/sample.h"
#include "he/scheme.h"

using namespace pmf;
using namespace pmf::he;

int main() {
  uint8_t seed[32];
  for (int i = 0; i < 32; ++i) seed[i] = uint8_t(i);
  std::vector<uint64_t> a(kN);
  for (size_t limb = 0; limb < kModuli; ++limb) {
    expand_uniform(seed, limb, a.data());
    printf("expand%zu ", limb);
    for (uint64_t v : a)
      for (int b = 0; b < 8; ++b) printf("%02x", unsigned((v >> (8 * b)) & 0xff));
    printf("\n");
  }
  for (size_t limb = 0; limb < kLimbs; ++limb) {  // ChaCha8: a model record's a, package format 2
    expand_uniform(seed, limb, a.data(), 0, kModelARounds);
    printf("expand8_%zu ", limb);
    for (uint64_t v : a)
      for (int b = 0; b < 8; ++b) printf("%02x", unsigned((v >> (8 * b)) & 0xff));
    printf("\n");
  }

  // Model N = 5000, B = 1 with w_r = (r mod 200) − 100, bias 7, T = 24, and
  // the deployed Q = T + 9, F = 104 − T.
  const unsigned T = 24, Q = T + kMinQMinusT, F = max_flood_bits(T);
  std::vector<uint8_t> skb(kSecretKeyBytes), pkb(kPublicKeyBytes), rec(kRecordBytes);
  sk_generate(skb.data());
  auto* sk = new SecretKey;
  if (sk_load(skb.data(), skb.size(), *sk) != kOk) return 1;
  const uint32_t rows = 5001;
  Status st;
  Model* m = model_new(rows, 1, true, kModelARounds, st);
  auto weight = [](uint32_t r) { return r == 0 ? 7 : int32_t(r % 200) - 100; };
  std::vector<uint32_t> msg(kN);
  for (uint32_t ct = 0; ct * kN < rows; ++ct) {
    for (uint32_t i = 0; i < kN; ++i) {
      const uint32_t r = ct * uint32_t(kN) + i;
      msg[i] = r < rows ? uint32_t(weight(r)) & ((1u << T) - 1) : 0;
    }
    if (encrypt_record(*sk, msg.data(), T, kModelARounds, rec.data()) != kOk ||
        model_add(*m, rec.data(), 1) != kOk)
      return 2;
  }
  uint8_t p1_seed[32] = {1}, e_seed[32] = {2}, user_seed[32] = {3}, a_seed[32] = {4};
  if (public_key(*sk, p1_seed, e_seed, pkb.data()) != kOk) return 3;
  auto* pk = new PublicKey;
  if (pk_load(pkb.data(), pkb.size(), p1_seed, *pk) != kOk) return 4;
  // The user key and its key-switching key (the provider decrypts under s_u).
  sk_derive_user(user_seed, skb.data());
  auto* user = new SecretKey;
  if (sk_load(skb.data(), skb.size(), *user) != kOk) return 8;
  std::vector<uint8_t> kskb(ksk_bytes(T));
  if (ksk_generate(*sk, *user, T, a_seed, e_seed, kskb.data()) != kOk) return 9;
  auto* ksk = new KeySwitchKey;
  if (ksk_load(kskb.data(), kskb.size(), *ksk) != kOk) return 10;
  std::vector<uint32_t> fr, fc;
  int64_t want = weight(0);
  for (uint32_t r = 3; r <= 5000; r += 7) {
    fr.push_back(r);
    fc.push_back(1 + r % 15);
    want += int64_t(weight(r)) * (1 + r % 15);
  }
  auto* acc = new Accumulator;
  if (dot(*m, fr.data(), fc.data(), fr.size(), 15, *acc) != kOk) return 5;
  std::vector<uint8_t> lwe(lwe_bytes(Q));
  uint32_t mask = 0, y = 0;
  if (extract(*m, *acc, *pk, *ksk, 0, T, Q, F, lwe.data(), mask) != kOk) return 6;
  if (lwe_decrypt(*user, lwe.data(), lwe.size(), T, Q, y) != kOk) return 7;
  printf("roundtrip %u %u\n", (y - mask) & ((1u << T) - 1), uint32_t(want) & ((1u << T) - 1));
  delete acc;
  delete ksk;
  delete user;
  delete pk;
  delete m;
  delete sk;
  return 0;
}
