// oneDNN's dnnl_sgemm, looked up in the process at run time: MindSpore's CPU backend loads
// libdnnl.so.3, and its single-threaded sgemm is much faster than a hand-written loop nest.
// Shared by the kernels whose inner work is matrix products (conv_gemm_kernel.cc,
// attention_kernel.cc). Each call runs on the calling thread (MindSpore's oneDNN has a
// threadpool runtime with no pool set): the kernels split the work over threads themselves.
// Sgemm() is null where the library or the symbol is missing: the entry points then return
// kBadOption, the library's probe fails and the registry runs the composite.

#pragma once

#include <dlfcn.h>

#include <cstdint>

namespace mscompat {

// dnnl_status_t dnnl_sgemm(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
//     float alpha, const float *A, dnnl_dim_t lda, const float *B, dnnl_dim_t ldb, float beta,
//     float *C, dnnl_dim_t ldc): row-major C = alpha op(A) op(B) + beta C; 0 is success.
using SgemmFn = int (*)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t,
                        const float *, int64_t, float, float *, int64_t);

// The process's dnnl_sgemm (looked up once), or null.
inline SgemmFn Sgemm() {
  static const SgemmFn fn = [] {
    void *lib = dlopen("libdnnl.so.3", RTLD_LAZY | RTLD_NOLOAD);
    void *sym = lib != nullptr ? dlsym(lib, "dnnl_sgemm") : dlsym(RTLD_DEFAULT, "dnnl_sgemm");
    return reinterpret_cast<SgemmFn>(sym);
  }();
  return fn;
}

}  // namespace mscompat
