// Drives mscompat's kernel thread pool (mscompat/custom_ops/cpu/parallel.h) for
// tests/test_thread_pool.py. Prints one line of key=value results.
//
//   driver cover    every index of every call visited once, the caller pinned to each CPU in
//                   turn and pauses that put the helpers to sleep; counts helper chunks that ran
//                   on the caller's CPU
//   driver threads  the thread count the pool would use for a large kernel

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "parallel.h"

namespace {

void PinTo(int cpu) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  CPU_SET(cpu, &mask);
  sched_setaffinity(0, sizeof(mask), &mask);
}

int Cover() {
  cpu_set_t allowed;
  sched_getaffinity(0, sizeof(allowed), &allowed);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  long bad = 0, helper_chunks = 0, on_caller_cpu = 0;
  const auto caller = std::this_thread::get_id();
  // The pool starts on the first call, with the process's CPUs (helpers inherit the mask of the
  // thread that starts them): before the caller pins itself.
  mscompat::ParallelFor(4096, int64_t{1} << 20, [](int64_t, int64_t) {});
  for (int call = 0; call < 600; ++call) {
    if (call % 50 == 0) PinTo(cpus[(call / 50) % cpus.size()]);
    if (call % 50 == 25) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const int64_t n = 1000 + (call * 7919) % 5000;
    const int caller_cpu = sched_getcpu();
    std::vector<std::atomic<int>> seen(n);
    for (auto &s : seen) s = 0;
    std::atomic<long> chunks{0}, shared{0};
    mscompat::ParallelFor(n, int64_t{1} << 20, [&](int64_t begin, int64_t end) {
      if (std::this_thread::get_id() != caller) {
        ++chunks;
        if (sched_getcpu() == caller_cpu) ++shared;
      }
      for (int64_t i = begin; i < end; ++i) ++seen[i];
      // Some work per chunk, so that helpers get a share.
      volatile double x = 0;
      for (int64_t i = begin; i < end; ++i) x = x + static_cast<double>(i) * 1e-9;
    });
    for (auto &s : seen) bad += s != 1;
    helper_chunks += chunks;
    on_caller_cpu += shared;
  }
  std::printf("cpus=%zu bad=%ld helper_chunks=%ld on_caller_cpu=%ld\n", cpus.size(), bad,
              helper_chunks, on_caller_cpu);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "cover") == 0) return Cover();
  if (argc > 1 && std::strcmp(argv[1], "threads") == 0) {
    std::printf("threads=%d\n", mscompat::NumThreads(int64_t{1} << 40, 1, 1));
    return 0;
  }
  return 2;
}
