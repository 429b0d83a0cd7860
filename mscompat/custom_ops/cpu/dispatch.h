// Helpers shared by the kernels' C entry points: dtype checks and the choice of the AVX2+FMA
// build of a kernel compiled twice (grid_sample, linear).

#pragma once

#include <cstring>
#include <initializer_list>

namespace mscompat {

// Whether the dtype strings at the listed parameter positions all equal `want`.
inline bool AllDtype(const char **dtypes, std::initializer_list<int> at, const char *want) {
  for (int i : at)
    if (std::strcmp(dtypes[i], want) != 0) return false;
  return true;
}

// Whether this CPU has AVX2 and FMA (checked once).
inline bool CpuHasFma() {
#if defined(__GNUC__) && defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

}  // namespace mscompat
