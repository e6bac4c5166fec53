#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "he/client.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#include "he/sample.h"

// The client's encrypted model and its dot product (docs/crypto.md#dot-product):
// loading the packed records, and shift-and-add per feature.
namespace pmf::he {

Model::~Model() {
  if (a)
    for (uint32_t ct = 0; ct < cts; ++ct) free(a[ct]);
  free(a);
  free(seeds);
  free(b);
}

Accumulator::~Accumulator() {
  secure_wipe(a, sizeof a);
  if (!features.empty()) secure_wipe(features.data(), features.size() * sizeof features[0]);
}

namespace {

// dst[i] += x·src[i+k] for i < n−k and dst[i] += x·(q − src[i+k−n]) for the
// wrapped tail: multiplication by x·X^{−k} in Z_q[X]/(X^n+1), unreduced.
void shift_add(uint64_t* dst, const uint64_t* src, size_t k, uint64_t x, uint64_t q) {
  const size_t head = kN - k;
#ifdef __wasm_simd128__
  const v128_t vx = wasm_i64x2_splat(int64_t(x)), vxq = wasm_i64x2_splat(int64_t(x * q));
  size_t i = 0;
  if (x == 1) {
    for (; i + 2 <= head; i += 2)
      wasm_v128_store(dst + i,
                      wasm_i64x2_add(wasm_v128_load(dst + i), wasm_v128_load(src + k + i)));
    for (; i < head; ++i) dst[i] += src[k + i];
    for (; i + 2 <= kN; i += 2)
      wasm_v128_store(dst + i, wasm_i64x2_add(wasm_v128_load(dst + i),
                                              wasm_i64x2_sub(vxq, wasm_v128_load(src + i - head))));
  } else {
    for (; i + 2 <= head; i += 2)
      wasm_v128_store(dst + i, wasm_i64x2_add(wasm_v128_load(dst + i),
                                              wasm_i64x2_mul(vx, wasm_v128_load(src + k + i))));
    for (; i < head; ++i) dst[i] += x * src[k + i];
    for (; i + 2 <= kN; i += 2)
      wasm_v128_store(
          dst + i,
          wasm_i64x2_add(wasm_v128_load(dst + i),
                         wasm_i64x2_sub(vxq, wasm_i64x2_mul(vx, wasm_v128_load(src + i - head)))));
  }
  for (; i < kN; ++i) dst[i] += x * (q - src[i - head]);
#else
  for (size_t i = 0; i < head; ++i) dst[i] += x * src[k + i];
  for (size_t i = head; i < kN; ++i) dst[i] += x * (q - src[i - head]);
#endif
}

void reduce_all(uint64_t* a, size_t limb) {
  const NttTables& t = ntt_tables(limb);
  for (size_t i = 0; i < kN; ++i) a[i] = reduce64(a[i], t.q, t.one_shoup);
}

constexpr size_t kABytes = kLimbs * kN * sizeof(uint64_t);

void expand_a(const Model& m, uint32_t ct, uint64_t* out) {
  for (size_t l = 0; l < kLimbs; ++l)
    expand_uniform(m.seeds + size_t(ct) * kSeedBytes, l, out + l * kN, 0, m.a_rounds);
}

// Ciphertext ct's expanded a, cached while the cache has room; if it has
// none, expanded into scratch (kept there while the same ciphertext follows:
// features are sorted by row). Null only when scratch cannot be allocated.
const uint64_t* a_of(Model& m, uint32_t ct, uint64_t*& scratch, uint32_t& in_scratch) {
  if (m.a && m.a[ct]) return m.a[ct];
  if (m.a_held < m.a_cap) {
    if (uint64_t* a = static_cast<uint64_t*>(malloc(kABytes))) {
      expand_a(m, ct, a);
      m.a[ct] = a;
      ++m.a_held;
      return a;
    }
  }
  if (!scratch && !(scratch = static_cast<uint64_t*>(malloc(kABytes)))) return nullptr;
  if (in_scratch != ct) expand_a(m, ct, scratch);
  in_scratch = ct;
  return scratch;
}

}  // namespace

Model* model_new(uint32_t rows, uint32_t width, uint32_t a_cap, unsigned a_rounds, Status& st) {
  st = kBadParams;
  if (rows < 1 || width < 1 || width > kN || !valid_model_a_rounds(a_rounds)) return nullptr;
  Model* m = new (std::nothrow) Model;
  st = kNoMemory;
  if (!m) return nullptr;
  m->rows = rows;
  m->width = width;
  m->a_rounds = a_rounds;
  m->rows_per_ct = uint32_t(kN / width);
  m->cts = uint32_t((uint64_t(rows) + m->rows_per_ct - 1) / m->rows_per_ct);
  m->a_cap = a_cap < m->cts ? a_cap : m->cts;
  // Refuse sizes whose byte counts would not fit this address space.
  const uint64_t need =
      uint64_t(m->cts) * (kSeedBytes + kLimbs * kPackedLimbBytes) + uint64_t(m->a_cap) * kABytes;
  if (need > uint64_t(SIZE_MAX) / 2) {
    delete m;
    return nullptr;
  }
  m->seeds = static_cast<uint8_t*>(malloc(size_t(m->cts) * kSeedBytes));
  m->b = static_cast<uint8_t*>(calloc(size_t(m->cts) * kLimbs * kPackedLimbBytes + 8, 1));
  if (m->a_cap) m->a = static_cast<uint64_t**>(calloc(m->cts, sizeof(uint64_t*)));
  if (!m->seeds || !m->b || (m->a_cap && !m->a)) {
    delete m;
    return nullptr;
  }
  st = kOk;
  return m;
}

Status model_add(Model& m, const uint8_t* records, size_t count) {
  if (count > m.cts - m.loaded) return kBadLength;
  uint64_t* tmp = static_cast<uint64_t*>(malloc(kN * sizeof(uint64_t)));
  if (!tmp) return kNoMemory;
  const bool at_load = m.a_cap == m.cts;  // the whole model fits: expand it now, not per email
  Status st = kOk;
  for (size_t r = 0; r < count && st == kOk; ++r) {
    const uint8_t* rec = records + r * kRecordBytes;
    for (size_t l = 0; l < kLimbs && st == kOk; ++l)
      if (!unpack_bits(rec + kSeedBytes + l * kPackedLimbBytes, kN, kQBits, kQ[l], tmp))
        st = kOutOfRange;
    if (st != kOk) break;
    const uint32_t ct = m.loaded;
    memcpy(m.seeds + size_t(ct) * kSeedBytes, rec, kSeedBytes);
    memcpy(m.b + size_t(ct) * kLimbs * kPackedLimbBytes, rec + kSeedBytes,
           kLimbs * kPackedLimbBytes);
    if (at_load) {
      m.a[ct] = static_cast<uint64_t*>(malloc(kABytes));
      if (!m.a[ct]) {
        st = kNoMemory;
        break;
      }
      expand_a(m, ct, m.a[ct]);
      ++m.a_held;
    }
    m.loaded = ct + 1;
  }
  free(tmp);
  return st;
}

Status dot(Model& m, const uint32_t* rows, const uint32_t* counts, size_t len, uint32_t max_count,
           Accumulator& acc) {
  if (m.loaded != m.cts) return kBadState;
  if (max_count < 1 || max_count > kLazyBudget) return kBadParams;
  acc.model = nullptr;
  acc.features.clear();
  acc.features.reserve(len + 1);
  acc.features.push_back(1);  // bias: row 0, x = 1
  for (size_t i = 0; i < len; ++i) {
    if (rows[i] < 1 || rows[i] >= m.rows || counts[i] < 1 || counts[i] > max_count)
      return kBadFeature;
    acc.features.push_back(uint64_t(rows[i]) << 32 | counts[i]);
  }
  std::sort(acc.features.begin(),
            acc.features.end());  // one expansion per ciphertext, cache-friendly

  memset(acc.a, 0, sizeof acc.a);
  uint64_t* scratch = nullptr;
  uint32_t in_scratch = UINT32_MAX;
  uint64_t budget = 0;
  acc.weight = 0;
  for (uint64_t f : acc.features) {
    const uint32_t row = uint32_t(f >> 32), x = uint32_t(f), ct = row / m.rows_per_ct;
    const size_t k = size_t(row % m.rows_per_ct) * m.width;
    const uint64_t* a = a_of(m, ct, scratch, in_scratch);
    if (!a) return kNoMemory;
    if (budget + x > kLazyBudget) {
      for (size_t l = 0; l < kLimbs; ++l) reduce_all(acc.a[l], l);
      budget = 1;  // reduced values are < q: one unit of the budget
    }
    budget += x;
    acc.weight += x;
    for (size_t l = 0; l < kLimbs; ++l) shift_add(acc.a[l], a + l * kN, k, x, kQ[l]);
  }
  for (size_t l = 0; l < kLimbs; ++l) reduce_all(acc.a[l], l);
  free(scratch);
  acc.model = &m;
  return kOk;
}

}  // namespace pmf::he
