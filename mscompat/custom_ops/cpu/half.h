// Rounding to float16 precision, shared by the kernels that reproduce PyTorch's float16
// arithmetic in float32 (cubic_kernel.cc, fold_kernel.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mscompat {

// float32 `v` rounded to the nearest float16 value (ties to even), as a float32.
inline float RoundToHalf(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const uint32_t sign = bits & 0x80000000u;
  uint32_t mag = bits ^ sign;
  float a;
  std::memcpy(&a, &mag, sizeof a);
  if (a != a) return v;  // NaN
  if (a >= 65520.0f) {   // rounds to infinity
    mag = 0x7F800000u;
  } else if (a >= 6.103515625e-05f) {  // a normal float16: keep 10 fraction bits
    mag = (mag + 0xFFFu + ((mag >> 13) & 1u)) & ~0x1FFFu;
  } else {  // subnormal float16: multiples of 2^-24
    a = std::nearbyint(a * 16777216.0f) / 16777216.0f;
    std::memcpy(&mag, &a, sizeof mag);
  }
  bits = sign | mag;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace mscompat
