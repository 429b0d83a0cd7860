// Elementwise pieces shared by the loss kernels (focal, quality focal, varifocal): PyTorch's
// pow with its special-cased exponents, and its backward.

#pragma once

#include <cmath>

namespace mscompat {

// x ** e with PyTorch's special cases (exact squares and cubes, ones for e == 0).
template <typename T>
inline T PowExp(T x, T e) {
  if (e == T(2)) return x * x;
  if (e == T(1)) return x;
  if (e == T(0)) return T(1);
  if (e == T(3)) return x * x * x;
  return std::pow(x, e);
}

// d(x ** e)/dx, PyTorch's pow backward: 0 for e == 0, else e * x^(e - 1).
template <typename T>
inline T PowExpGrad(T x, T e) {
  if (e == T(0)) return T(0);
  if (e == T(1)) return T(1);
  if (e == T(2)) return T(2) * x;
  return e * std::pow(x, e - T(1));
}

}  // namespace mscompat
