// Splitting a kernel's work over threads, shared by the CPU kernels.
//
// ParallelFor(n, work, min_work, grain, body) calls body(begin, end) over [0, n) in equal
// chunks, one per thread: one thread below `min_work` units of work, else up to one thread per
// `grain` units, at most the hardware's thread count (MSCOMPAT_NUM_THREADS caps it). The
// calling thread takes the first chunk.

#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace mscompat {

inline int NumThreads(int64_t work, int64_t min_work, int64_t grain) {
  if (work < min_work) return 1;
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw <= 0) hw = 1;
  if (const char *env = std::getenv("MSCOMPAT_NUM_THREADS")) {
    int cap = std::atoi(env);
    if (cap > 0) hw = std::min(hw, cap);
  }
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(hw, work / grain)));
}

template <typename F>
void ParallelFor(int64_t n, int64_t work, int64_t min_work, int64_t grain, F body) {
  const int threads = static_cast<int>(std::min<int64_t>(NumThreads(work, min_work, grain), n));
  if (threads <= 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t chunk = (n + threads - 1) / threads;
  for (int i = 1; i < threads; ++i) {
    const int64_t begin = std::min(n, i * chunk), end = std::min(n, begin + chunk);
    pool.emplace_back([=] { body(begin, end); });
  }
  body(0, std::min(n, chunk));
  for (auto &th : pool) th.join();
}

}  // namespace mscompat
