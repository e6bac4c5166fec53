// Run under Valgrind's memcheck by he-ct.test.ts (the "ctgrind" method): the
// secret inputs are marked undefined, so every branch or memory index that
// depends on them is reported as a use of uninitialised data.
#include <valgrind/memcheck.h>

#include <cstdio>

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
  uint8_t bytes[kSecretKeyBytes];
  sk_generate(bytes);
  if (sk_load(bytes, sizeof bytes, *sk) != kOk) return 1;
  secret(sk->s, kN);
  sk_precompute(*sk);
  published(&sk->s_ntt_shoup[0][0], kLimbs * kN);
  printf("sk_precompute %llu\n", (unsigned long long)sk->s_ntt_shoup[1][kN - 1]);
  delete sk;
  return 0;
}
