#include "common/chacha20.h"

#include <cstring>

#include "common/chacha_simd.h"
#include "common/export.h"
#include "common/rng.h"
#include "common/wipe.h"

namespace pmf {
namespace {

inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

inline void quarter(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d) {
  a += b;
  d = rotl(d ^ a, 16);
  c += d;
  b = rotl(b ^ c, 12);
  a += b;
  d = rotl(d ^ a, 8);
  c += d;
  b = rotl(b ^ c, 7);
}

inline uint32_t load32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

static void chacha_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                         unsigned rounds, uint8_t out[64]) {
  const uint32_t init[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574, key[0], key[1],
                             key[2],     key[3],     key[4],     key[5],     key[6], key[7],
                             counter,    nonce[0],   nonce[1],   nonce[2]};
  uint32_t x[16];
  memcpy(x, init, sizeof x);
  for (unsigned i = 0; i < rounds; i += 2) {
    quarter(x[0], x[4], x[8], x[12]);
    quarter(x[1], x[5], x[9], x[13]);
    quarter(x[2], x[6], x[10], x[14]);
    quarter(x[3], x[7], x[11], x[15]);
    quarter(x[0], x[5], x[10], x[15]);
    quarter(x[1], x[6], x[11], x[12]);
    quarter(x[2], x[7], x[8], x[13]);
    quarter(x[3], x[4], x[9], x[14]);
  }
  for (int i = 0; i < 16; ++i) {
    uint32_t v = x[i] + init[i];
    out[4 * i] = uint8_t(v);
    out[4 * i + 1] = uint8_t(v >> 8);
    out[4 * i + 2] = uint8_t(v >> 16);
    out[4 * i + 3] = uint8_t(v >> 24);
  }
  secure_wipe(x, sizeof x);
}

void chacha20_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                    uint8_t out[64]) {
  chacha_block(key, counter, nonce, 20, out);
}

namespace {

// Consecutive groups of four blocks (counter, counter + 1, ...) of the ChaCha
// variant with R rounds: the key's SIMD input state is built once per
// stream, not per group, and wiped when the stream is done.
template <int R>
class Blocks4 {
 public:
  Blocks4(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3]) {
#ifdef __wasm_simd128__
    using namespace chacha_simd;
    // Lane i of every vector computes block counter + i.
    for (int i = 0; i < 4; ++i) in_[i] = wasm_u32x4_splat(kSigma[i]);
    for (int i = 0; i < 8; ++i) in_[4 + i] = wasm_u32x4_splat(key[i]);
    in_[12] = wasm_i32x4_make(int32_t(counter), int32_t(counter + 1), int32_t(counter + 2),
                              int32_t(counter + 3));
    for (int i = 0; i < 3; ++i) in_[13 + i] = wasm_u32x4_splat(nonce[i]);
#else
    memcpy(key_, key, sizeof key_);
    memcpy(nonce_, nonce, sizeof nonce_);
    counter_ = counter;
#endif
  }
  ~Blocks4() { secure_wipe(this, sizeof *this); }
  Blocks4(const Blocks4&) = delete;
  Blocks4& operator=(const Blocks4&) = delete;

  // The next four blocks into out.
  void next(uint8_t out[256]) {
#ifdef __wasm_simd128__
    using namespace chacha_simd;
    v128_t x[16];
    permute4<R>(in_, x);
    for (int g = 0; g < 4; ++g) transpose4(x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]);
    // After the transposes x[4g + k] holds bytes 16g .. 16g+15 of block k.
    for (int k = 0; k < 4; ++k)
      for (int g = 0; g < 4; ++g) wasm_v128_store(out + 64 * k + 16 * g, x[4 * g + k]);
    in_[12] = wasm_i32x4_add(in_[12], wasm_i32x4_splat(4));
#else
    for (uint32_t blk = 0; blk < 4; ++blk)
      chacha_block(key_, counter_ + blk, nonce_, R, out + 64 * blk);
    counter_ += 4;
#endif
  }

 private:
#ifdef __wasm_simd128__
  v128_t in_[16];
#else
  uint32_t key_[8], nonce_[3], counter_;
#endif
};

template <int R>
void stream(const uint32_t key[8], const uint32_t nonce[3], uint32_t counter, uint8_t* out,
            size_t nblocks) {
  Blocks4<R> blocks(key, counter, nonce);
  for (; nblocks >= 4; nblocks -= 4, out += 256) blocks.next(out);
  if (nblocks > 0) {
    uint8_t tail[256];
    blocks.next(tail);
    memcpy(out, tail, 64 * nblocks);
    secure_wipe(tail, sizeof tail);
  }
}

}  // namespace

void chacha20_blocks(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                     uint8_t out[256]) {
  Blocks4<20>(key, counter, nonce).next(out);
}

void chacha_stream(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter, uint8_t* out,
                   size_t nblocks, unsigned rounds) {
  uint32_t k[8], n[3];
  for (int i = 0; i < 8; ++i) k[i] = load32(key + 4 * i);
  for (int i = 0; i < 3; ++i) n[i] = load32(nonce + 4 * i);
  if (rounds == 8)  // public: the variant
    stream<8>(k, n, counter, out, nblocks);
  else
    stream<20>(k, n, counter, out, nblocks);
  secure_wipe(k, sizeof k);
}

void chacha20_stream(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter, uint8_t* out,
                     size_t nblocks) {
  chacha_stream(key, nonce, counter, out, nblocks, 20);
}

ChaCha20Stream::ChaCha20Stream(const uint8_t key[32], const uint8_t nonce[12]) {
  for (int i = 0; i < 8; ++i) key_[i] = load32(key + 4 * i);
  for (int i = 0; i < 3; ++i) nonce_[i] = load32(nonce + 4 * i);
}

ChaCha20Stream::~ChaCha20Stream() {
  secure_wipe(key_, sizeof key_);
  secure_wipe(buf_, sizeof buf_);
}

void ChaCha20Stream::refill() {
  chacha20_blocks(key_, counter_, nonce_, buf_);
  counter_ += 4;
  pos_ = 0;
}

void ChaCha20Stream::read(uint8_t* out, size_t len) {
  while (len > 0) {
    if (pos_ == sizeof buf_) refill();
    size_t take = len < sizeof buf_ - pos_ ? len : sizeof buf_ - pos_;
    memcpy(out, buf_ + pos_, take);
    pos_ += take;
    out += take;
    len -= take;
  }
}

uint64_t ChaCha20Stream::next_u64() {
  if (pos_ > sizeof buf_ - 8) {
    uint8_t b[8];
    read(b, 8);
    uint64_t v;
    memcpy(&v, b, 8);
    return v;
  }
  uint64_t v;
  memcpy(&v, buf_ + pos_, 8);  // wasm and every native target here are little-endian
  pos_ += 8;
  return v;
}

namespace {
struct Seed {
  uint8_t key[32];
  Seed() { random_bytes(key, sizeof key); }
  ~Seed() { secure_wipe(key, sizeof key); }
};
const uint8_t kZeroNonce[12] = {0};
}  // namespace

FreshPrg::FreshPrg() : ChaCha20Stream(Seed().key, kZeroNonce) {}

}  // namespace pmf

// Keystream for (key, nonce) from block 0: known-answer tests against RFC 8439.
PMF_EXPORT void pmf_prg_chacha20(const uint8_t* key, const uint8_t* nonce, uint8_t* out,
                                 size_t len) {
  pmf::ChaCha20Stream(key, nonce).read(out, len);
}
