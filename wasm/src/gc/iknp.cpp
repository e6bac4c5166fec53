// IKNP OT extension (Ishai, Kilian, Nissim, Petrank, CRYPTO 2003) producing
// correlated OTs, with the KOS consistency check (Keller, Orsini, Scholl,
// CRYPTO 2015) against a receiver that uses inconsistent choice bits.
//
// The extension receiver holds 128 seed pairs (k0_i, k1_i) from the base OTs,
// the sender holds k_{s_i,i} and s (= the garbler's delta). For a batch of L
// OTs (L a multiple of 512) the receiver with choice bits r sends
// u_i = G(k0_i) ^ G(k1_i) ^ r; the sender computes column q_i = G(k_{s_i,i}) ^
// s_i u_i. After transposing, row j satisfies q_j = t_j ^ r_j * s: the
// receiver's t_j is the label of bit r_j for zero label q_j and offset s.
// G is ChaCha20 with the seed as key, a zero nonce and a running block counter.
#include "gc/iknp.h"

#include <cstring>
#include <vector>

#include "common/ct.h"
#include "common/wipe.h"
#include "gc/block.h"
#include "gc/chacha.h"
#include "gc/gf128.h"

namespace pmf::gc {
namespace {

constexpr size_t kCols = 128;
const uint8_t kZeroNonce[12] = {0};
const uint8_t kKosNonce[12] = {'p', 'm', 'f', '-', 'k', 'o', 's', '-', 'c', 'h', 'i', 0};

void wipe_bytes(std::vector<uint8_t>& v) { secure_wipe(v.data(), v.size()); }

// Column i (L/8 bytes at cols + i*L/8) = G(keys[i]) from block `counter` on.
void expand_columns(const uint8_t* keys, uint32_t counter, size_t L, uint8_t* cols) {
  for (size_t i = 0; i < kCols; ++i)
    chacha20_stream(keys + 32 * i, kZeroNonce, counter, cols + i * (L / 8), L / 512);
}

// rows[j] bit i = cols[i] bit j, for j < L; 16 columns at a time with bitmask.
void transpose(const uint8_t* cols, size_t L, uint8_t* rows) {
  const size_t stride = L / 8;
  for (size_t i0 = 0; i0 < kCols; i0 += 16) {
    const uint8_t* c = cols + i0 * stride;
    for (size_t b = 0; b < stride; ++b) {
      v128_t v = wasm_u8x16_make(c[b], c[stride + b], c[2 * stride + b], c[3 * stride + b],
                                 c[4 * stride + b], c[5 * stride + b], c[6 * stride + b],
                                 c[7 * stride + b], c[8 * stride + b], c[9 * stride + b],
                                 c[10 * stride + b], c[11 * stride + b], c[12 * stride + b],
                                 c[13 * stride + b], c[14 * stride + b], c[15 * stride + b]);
      for (int bit = 7; bit >= 0; --bit) {
        const uint16_t m = static_cast<uint16_t>(wasm_i8x16_bitmask(v));
        std::memcpy(rows + (8 * b + bit) * 16 + i0 / 8, &m, 2);
        v = wasm_i8x16_shl(v, 1);
      }
    }
  }
}

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Runs fn(j, chi_j) for the L challenge blocks expanded from seed.
template <typename F>
void for_each_chi(const uint8_t* seed, size_t L, F fn) {
  uint8_t chi[1024];  // 64 challenges per chunk
  for (size_t j0 = 0; j0 < L; j0 += 64) {
    chacha20_stream(seed, kKosNonce, static_cast<uint32_t>(j0 / 4), chi, 16);
    for (size_t k = 0; k < 64 && j0 + k < L; ++k) fn(j0 + k, chi + 16 * k);
  }
}

bool valid_batch(size_t L, uint32_t counter) {
  return L > 0 && L % 512 == 0 && L <= (1u << 20) && counter <= 0xFFFFFFFFu - L / 512;
}

}  // namespace

Status ot_recv_extend(const uint8_t* k0, const uint8_t* k1, uint32_t counter, size_t L,
                      const uint8_t* r, uint8_t* u, uint8_t* t_rows) {
  if (!valid_batch(L, counter)) return kBadBatch;
  const size_t stride = L / 8;
  std::vector<uint8_t> t0(kCols * stride), t1(kCols * stride);
  expand_columns(k0, counter, L, t0.data());
  expand_columns(k1, counter, L, t1.data());
  for (size_t i = 0; i < kCols; ++i)
    for (size_t b = 0; b < stride; ++b)
      u[i * stride + b] = t0[i * stride + b] ^ t1[i * stride + b] ^ r[b];
  transpose(t0.data(), L, t_rows);
  wipe_bytes(t0);
  wipe_bytes(t1);
  return kOk;
}

Status ot_send_extend(const uint8_t* ks, const uint8_t* s, uint32_t counter, size_t L,
                      const uint8_t* u, uint8_t* q_rows) {
  if (!valid_batch(L, counter)) return kBadBatch;
  const size_t stride = L / 8;
  std::vector<uint8_t> q(kCols * stride);
  expand_columns(ks, counter, L, q.data());
  for (size_t i = 0; i < kCols; ++i) {
    const uint8_t mask = static_cast<uint8_t>(0 - ((s[i / 8] >> (i % 8)) & 1));
    for (size_t b = 0; b < stride; ++b) q[i * stride + b] ^= u[i * stride + b] & mask;
  }
  transpose(q.data(), L, q_rows);
  wipe_bytes(q);
  return kOk;
}

Status kos_respond(const uint8_t* seed, size_t L, const uint8_t* r, const uint8_t* t_rows,
                   uint8_t* xt) {
  if (!valid_batch(L, 0)) return kBadBatch;
  uint64_t x0 = 0, x1 = 0;
  Gf128DotPublic acc;
  for_each_chi(seed, L, [&](size_t j, const uint8_t* chi) {
    const uint64_t m = 0 - static_cast<uint64_t>((r[j / 8] >> (j % 8)) & 1);
    x0 ^= load64(chi) & m;
    x1 ^= load64(chi + 8) & m;
    acc.add(chi, load_block(t_rows + 16 * j));
  });
  uint64_t t[2];
  acc.reduce(t);
  std::memcpy(xt, &x0, 8);
  std::memcpy(xt + 8, &x1, 8);
  std::memcpy(xt + 16, t, 16);
  return kOk;
}

int kos_check(const uint8_t* seed, size_t L, const uint8_t* q_rows, const uint8_t* s,
              const uint8_t* xt) {
  if (!valid_batch(L, 0)) return kBadBatch;
  Gf128DotPublic acc;
  for_each_chi(seed, L,
               [&](size_t j, const uint8_t* chi) { acc.add(chi, load_block(q_rows + 16 * j)); });
  uint64_t q[2], xs[2];
  acc.reduce(q);
  Gf128Acc prod;
  prod.mul_add(load64(xt), load64(xt + 8), load64(s), load64(s + 8));
  prod.reduce(xs);
  const uint64_t diff = (q[0] ^ xs[0] ^ load64(xt + 16)) | (q[1] ^ xs[1] ^ load64(xt + 24));
  return static_cast<int>(pmf::ct_eq_mask(diff, 0) & 1);
}

}  // namespace pmf::gc
