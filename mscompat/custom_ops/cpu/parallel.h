// Splitting a kernel's work over threads, shared by the CPU kernels.
//
// ParallelFor(n, work, min_work, grain, body) calls body(begin, end) over [0, n) in disjoint
// chunks: one thread below `min_work` units of work, else up to one thread per `grain` units,
// at most the hardware's thread count (MSCOMPAT_NUM_THREADS caps it); the calling thread is
// one of them, and each thread takes the next chunk when it is done with one.

#pragma once

#include <algorithm>
#include <atomic>
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
  // Chunks are handed out on demand, several per thread: a thread the OS deschedules (on a
  // small machine the caller's Python thread competes for the cores) delays one chunk, not
  // its fixed share. Chunks are disjoint, so results do not depend on who runs which.
  const int64_t chunks = std::min<int64_t>(n, static_cast<int64_t>(threads) * 8);
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1))
      body(c * n / chunks, (c + 1) * n / chunks);
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto &th : pool) th.join();
}

}  // namespace mscompat
