// Splitting a kernel's work over threads, shared by the CPU kernels.
//
// ParallelFor(n, work, min_work, grain, body) calls body(begin, end) over [0, n) in disjoint
// chunks: one thread below `min_work` units of work, else up to one thread per `grain` units
// (ParallelFor(n, work, body): 2^16 and 2^15),
// at most the hardware's thread count (MSCOMPAT_NUM_THREADS caps it); the calling thread is
// one of them, and each thread takes the next chunk when it is done with one.
//
// The helper threads are started once per process and sleep between kernels: starting and
// joining threads per call costs as much as a small kernel itself (figures on the kernels
// page). After a kernel they stay awake for MSCOMPAT_SPIN_US microseconds (default 200), yielding
// the core to any thread that wants it, as OpenMP's threads do: a kernel that follows soon finds
// them without a wake-up (figures on the kernels page). A call that finds the pool in use
// (another kernel on another thread, or a nested call) runs on its own thread instead; a forked
// child starts a pool of its own.

#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mscompat {

// How long a helper stays awake after a kernel (MSCOMPAT_SPIN_US, default 200 us; 0: sleeps at
// once).
inline std::chrono::microseconds SpinTime() {
  const char *env = std::getenv("MSCOMPAT_SPIN_US");
  const long us = env ? std::atol(env) : 200;
  return std::chrono::microseconds(std::max(0L, us));
}

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

// Sleeping helper threads that run one job at a time next to the caller.
class HelperPool {
 public:
  // The process's pool (never destroyed: its threads sleep until the process exits).
  static HelperPool *Get() {
    static std::mutex guard;
    static HelperPool *pool = nullptr;
    std::lock_guard<std::mutex> lock(guard);
    if (pool == nullptr || pool->pid_ != getpid()) pool = new HelperPool();
    return pool;
  }

  // Runs `job` on the caller and on `helpers` helper threads and returns when all are done;
  // false (nothing run) when the pool is busy.
  bool Run(int helpers, const std::function<void()> &job) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(m_);
      while (static_cast<int>(started_) < helpers) {
        std::thread(&HelperPool::Loop, this).detach();
        ++started_;
      }
      job_ = &job;
      waiting_ = helpers;
      running_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    job();
    std::unique_lock<std::mutex> lock(m_);
    // Helpers that have not woken yet have nothing left to do (chunks are taken on demand).
    running_ -= waiting_;
    waiting_ = 0;
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  HelperPool() : pid_(getpid()), spin_(SpinTime()) {}

  void Loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + spin_;
      while (generation_.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      lock.lock();
      wake_.wait(lock, [&] { return generation_ != seen && waiting_ > 0; });
      seen = generation_;
      --waiting_;
      const std::function<void()> *job = job_;
      lock.unlock();
      (*job)();
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  const pid_t pid_;
  const std::chrono::microseconds spin_;
  std::mutex busy_, m_;
  std::condition_variable wake_, done_;
  const std::function<void()> *job_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // read unlocked while spinning
  int waiting_ = 0, running_ = 0;
  unsigned started_ = 0;
};

template <typename F>
void ParallelFor(int64_t n, int64_t work, int64_t min_work, int64_t grain, F body);

// ParallelFor with the thresholds most kernels use: one thread below 2^16 units of work, one per
// 2^15 above.
template <typename F>
void ParallelFor(int64_t n, int64_t work, F body) {
  ParallelFor(n, work, 1 << 16, 1 << 15, body);
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
  const std::function<void()> worker = [&] {
    for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1))
      body(c * n / chunks, (c + 1) * n / chunks);
  };
  if (!HelperPool::Get()->Run(threads - 1, worker)) worker();
}

// Rows of `cols` elements: one thread below 2^15 elements, one per 2^14 above.
template <typename F>
void ParallelRows(int64_t rows, int64_t cols, F body) {
  ParallelFor(rows, rows * cols, 1 << 15, 1 << 14, body);
}

}  // namespace mscompat
