// Run under Valgrind's memcheck by he-ct.test.ts (the "ctgrind" method): the
// secret inputs are marked undefined, so every branch or memory index that
// depends on them is reported as a use of uninitialised data.
#include <valgrind/memcheck.h>

#include <cstdio>
#include <vector>

#include "he/keyswitch.h"
#include "he/rescale.h"
#include "he/sample.h"
#include "he/scheme.h"

using namespace pmf;
using namespace pmf::he;

template <typename T>
void secret(T* p, size_t n) {
  VALGRIND_MAKE_MEM_UNDEFINED(p, n * sizeof *p);
}

template <typename T>
void published(T* p, size_t n) {
  VALGRIND_MAKE_MEM_DEFINED(p, n * sizeof *p);
}

int main() {
  // sk_load's second half: the key's NTT form and its Shoup companions.
  auto* sk = new SecretKey;
  auto* user = new SecretKey;
  uint8_t bytes[kSecretKeyBytes], seed[32] = {5};
  sk_generate(bytes);
  if (sk_load(bytes, sizeof bytes, *sk) != kOk) return 1;
  sk_derive_user(seed, bytes);
  if (sk_load(bytes, sizeof bytes, *user) != kOk) return 2;
  secret(sk->s, kN);
  sk_precompute(*sk);
  published(&sk->s_ntt_shoup[0][0], kLimbs * kN);
  printf("sk_precompute %llu\n", (unsigned long long)sk->s_ntt_shoup[1][kN - 1]);
  published(sk->s, kN);

  // The key switch of a secret a-part (rounding to 2^in, digits, NTTs modulo
  // q_ks) at the widest and the narrowest gadget, and the two rescalings.
  std::vector<uint64_t> a(kN), ks_b(kN), ks_a(kN);
  for (unsigned T : {32u, 24u, 8u}) {
    std::vector<uint8_t> kskb(ksk_bytes(T));
    if (ksk_generate(*sk, *user, T, seed, seed, kskb.data()) != kOk) return 3;
    auto* ksk = new KeySwitchKey;
    if (ksk_load(kskb.data(), kskb.size(), *ksk) != kOk) return 4;
    expand_uniform(seed, 1, a.data());
    secret(a.data(), kN);
    if (key_switch(*ksk, a.data(), ks_b.data(), ks_a.data()) != kOk) return 5;
    const Rescale to_qks = Rescale::to_modulus(kQks, kQ[1]), to_q = Rescale::to_pow2(T + 9, kQks);
    uint64_t sum = 0;
    for (size_t c = 0; c < kN; ++c) sum += to_q(ks_a[c]) + to_qks(a[c]);
    published(&sum, 1);
    printf("key_switch T=%u %llu\n", T, (unsigned long long)sum);
    delete ksk;
  }
  delete user;
  delete sk;
  return 0;
}
