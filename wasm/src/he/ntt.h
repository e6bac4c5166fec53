// Negacyclic NTT over Z_qi[X]/(X^n + 1) (Longa–Naehrig ordering: forward
// Cooley–Tukey with bit-reversed powers of psi, inverse Gentleman–Sande).
// The provider's encryption and keys and the client's fresh encryptions of
// zero and key switch use it; the client's dot product stays in coefficient form.
#pragma once

#include <cstdint>

#include "he/ring.h"

namespace pmf::he {

struct NttTables {
  uint64_t q;
  uint64_t one_shoup;  // floor(2^64 / q), for reduce64
  uint64_t psi_rev[kN], psi_rev_shoup[kN];
  uint64_t psi_inv_rev[kN], psi_inv_rev_shoup[kN];
  uint64_t n_inv, n_inv_shoup;
  uint64_t psi_inv_rev_n, psi_inv_rev_n_shoup;  // psi_inv_rev[1]·n_inv: the inverse's last layer
};

// Tables for kModulus[i] (q1, q2, q_ks), computed on first use.
const NttTables& ntt_tables(size_t limb);

// Forward transform of values < q: outputs reduced into [0, q), or, by
// ntt_forward_lazy, only congruent and below 2^60 (for a Shoup product next,
// which takes any 64-bit value).
void ntt_forward(uint64_t* a, const NttTables& t);
void ntt_forward_lazy(uint64_t* a, const NttTables& t);
void ntt_inverse(uint64_t* a, const NttTables& t);
// Coefficients 2k + parity (k < n/2) of the inverse transform of a (values
// < q), into half (which may be a): about half the work of ntt_inverse.
void ntt_inverse_half(const uint64_t* a, size_t parity, const NttTables& t, uint64_t* half);

// c = a ⊙ b (NTT domain), b given with its Shoup companion.
void pointwise_mul(uint64_t* c, const uint64_t* a, const uint64_t* b, const uint64_t* b_shoup,
                   const NttTables& t);

}  // namespace pmf::he
