// ChaCha20 (RFC 8439) as a deterministic stream: the project's XOF for
// seeded polynomials and the PRG behind bulk sampling (keyed from the
// platform CSPRNG). Fixed-time: no table lookups, no data-dependent branches.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmf {

// One 64-byte keystream block for (key, counter, nonce), RFC 8439 §2.3.
void chacha20_block(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                    uint8_t out[64]);

// Four consecutive blocks (counter .. counter+3) at once: the SIMD width.
void chacha20_blocks(const uint32_t key[8], uint32_t counter, const uint32_t nonce[3],
                     uint8_t out[256]);

// nblocks 64-byte keystream blocks for a byte key and nonce, starting at block
// `counter`: for callers that address the stream by block (OT extension).
void chacha20_stream(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter, uint8_t* out,
                     size_t nblocks);

// The same with `rounds` = 20 (ChaCha20) or 8 (ChaCha8: the RFC 8439 block
// function with 4 double rounds instead of 10, for expanding public seeds,
// docs/crypto.md#samplers-and-seed-expansion). Any other value means 20.
void chacha_stream(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter, uint8_t* out,
                   size_t nblocks, unsigned rounds);

class ChaCha20Stream {
 public:
  // Key 32 bytes, nonce 12 bytes, block counter starting at 0.
  ChaCha20Stream(const uint8_t key[32], const uint8_t nonce[12]);
  ~ChaCha20Stream();
  ChaCha20Stream(const ChaCha20Stream&) = delete;
  ChaCha20Stream& operator=(const ChaCha20Stream&) = delete;

  void read(uint8_t* out, size_t len);
  // Next 8 keystream bytes as a little-endian integer.
  uint64_t next_u64();

 private:
  void refill();
  uint32_t key_[8];
  uint32_t nonce_[3];
  uint32_t counter_ = 0;
  uint8_t buf_[256];
  size_t pos_ = sizeof buf_;
};

// A ChaCha20 stream keyed with 32 fresh bytes from pmf::random_bytes: cheap
// bulk randomness for noise, masks and ephemeral secrets.
class FreshPrg : public ChaCha20Stream {
 public:
  FreshPrg();
};

}  // namespace pmf
