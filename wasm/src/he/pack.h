// Little-endian bit packing of fixed-width unsigned values (width ≤ 56):
// value i occupies bits [i·w, (i+1)·w) of the byte string, the last byte is
// zero-padded. Used for model b polynomials, public keys and LWE ciphertexts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace pmf::he {

constexpr size_t packed_bytes(size_t count, unsigned width) { return (count * width + 7) / 8; }

// Appends values of any width ≤ 56 to a little-endian bit string; finish()
// writes the zero-padded last byte.
class BitWriter {
 public:
  explicit BitWriter(uint8_t* out) : out_(out) {}
  void put(uint64_t v, unsigned width) {
    acc_ |= v << have_;
    have_ += width;
    while (have_ >= 8) {
      *out_++ = uint8_t(acc_);
      acc_ >>= 8;
      have_ -= 8;
    }
  }
  void finish() {
    if (have_) *out_ = uint8_t(acc_);
  }

 private:
  uint8_t* out_;
  uint64_t acc_ = 0;
  unsigned have_ = 0;
};

inline void pack_bits(const uint64_t* v, size_t count, unsigned width, uint8_t* out) {
  BitWriter w(out);
  for (size_t i = 0; i < count; ++i) w.put(v[i], width);
  w.finish();
}

// Unpacks count values; returns false when a value is >= bound or the padding
// bits of the last byte are not zero (one canonical encoding per value).
inline bool unpack_bits(const uint8_t* in, size_t count, unsigned width, uint64_t bound,
                        uint64_t* v) {
  const uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t acc = 0, bad = 0;
  unsigned have = 0;
  for (size_t i = 0; i < count; ++i) {
    while (have < width) {
      acc |= uint64_t(*in++) << have;
      have += 8;
    }
    v[i] = acc & mask;
    bad |= uint64_t(v[i] >= bound);
    acc >>= width;
    have -= width;
  }
  return !bad && acc == 0;
}

// Value i of a packed array, reading 8 bytes at once: the buffer must have at
// least 8 readable bytes from the value's first byte (callers pad).
inline uint64_t packed_at(const uint8_t* in, size_t i, unsigned width) {
  size_t bit = i * width;
  uint64_t w;
  memcpy(&w, in + bit / 8, 8);  // little-endian target
  return (w >> (bit % 8)) & ((uint64_t(1) << width) - 1);
}

// The width-bit value at bit offset `bit` of a len-byte string, reading 8
// bytes at once while 8 remain (no padding needed).
inline uint64_t bits_at(const uint8_t* in, size_t len, size_t bit, unsigned width) {
  const size_t byte = bit / 8;
  uint64_t w = 0;
  if (byte + 8 <= len) {
    memcpy(&w, in + byte, 8);  // little-endian target
  } else {
    for (size_t k = byte; k < len; ++k) w |= uint64_t(in[k]) << (8 * (k - byte));
  }
  return (w >> (bit % 8)) & ((uint64_t(1) << width) - 1);
}

}  // namespace pmf::he
