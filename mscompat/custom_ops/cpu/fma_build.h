// A kernel implementation compiled twice, for any CPU and for AVX2+FMA, the build chosen at run
// time where the CPU has it (the arithmetic is the same: the fused multiply-adds are
// instructions instead of calls). Used by cubic_kernel.cc, grid_sample_kernel.cc and
// linear_kernel.cc:
//
//   #define MSCOMPAT_IMPL "cubic_impl.h"
//   #include "fma_build.h"
//
// MSCOMPAT_IMPL is included once in namespace mscompat_generic and once in mscompat_fma (it
// names its namespace MSCOMPAT_NS; MSCOMPAT_AVX2 is defined for the second copy, which may use
// <immintrin.h>) and defines RunForward<T> and RunBackward<T>(params, ndims, shapes); this file
// then defines Launch, which an entry point calls to check its parameters and run the right
// copy. Defining MSCOMPAT_NO_FMA_PATH builds the generic copy only. Include it once per file: no
// include guard.

#include <cstdint>
#include <initializer_list>

#include "common.h"

#define MSCOMPAT_NS mscompat_generic
#include MSCOMPAT_IMPL
#undef MSCOMPAT_NS

#if defined(__GNUC__) && defined(__x86_64__) && !defined(MSCOMPAT_NO_FMA_PATH)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#define MSCOMPAT_NS mscompat_fma
#define MSCOMPAT_AVX2 1
#include MSCOMPAT_IMPL
#undef MSCOMPAT_AVX2
#undef MSCOMPAT_NS
#pragma GCC pop_options
#define MSCOMPAT_HAVE_FMA_PATH 1
#endif

namespace {

// Whether this CPU has AVX2 and FMA (checked once).
inline bool CpuHasFma() {
#ifdef MSCOMPAT_HAVE_FMA_PATH
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

// RunForward<T> or RunBackward<T> of the copy for this CPU.
template <typename T>
int Run(bool backward, void **params, int *ndims, int64_t **shapes) {
#ifdef MSCOMPAT_HAVE_FMA_PATH
  if (CpuHasFma())
    return backward ? mscompat_fma::RunBackward<T>(params, ndims, shapes)
                    : mscompat_fma::RunForward<T>(params, ndims, shapes);
#endif
  return backward ? mscompat_generic::RunBackward<T>(params, ndims, shapes)
                  : mscompat_generic::RunForward<T>(params, ndims, shapes);
}

// An entry point taking `arity` parameters: int64 ones at `int64s`, and at `floats` ones that
// share one dtype, float32 or float64, for which the forward or backward kernel runs.
inline int Launch(bool backward, int arity, std::initializer_list<int> int64s,
                  std::initializer_list<int> floats, int nparam, void **params, int *ndims,
                  int64_t **shapes, const char **dtypes) {
  if (nparam != arity) return mscompat::kBadArity;
  if (!mscompat::AllDtype(dtypes, int64s, "int64")) return mscompat::kBadDtype;
  return mscompat::ByDtype<float, double>(mscompat::SharedDtype(dtypes, floats), [&](auto t) {
    return Run<decltype(t)>(backward, params, ndims, shapes);
  });
}

}  // namespace
