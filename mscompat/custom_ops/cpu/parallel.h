// Splitting a kernel's work over threads, shared by the CPU kernels.
//
// ParallelFor(n, work, min_work, grain, body) calls body(begin, end) over [0, n) in disjoint
// chunks: one thread below `min_work` units of work, else up to one thread per `grain` units
// (ParallelFor(n, work, body): 2^16 and 2^15),
// at most the number of CPUs the process may run on (MSCOMPAT_NUM_THREADS caps it); the calling
// thread is one of them, and each thread takes the next chunk when it is done with one.
//
// The helper threads are started once per process and sleep between kernels: starting and
// joining threads per call costs as much as a small kernel itself (figures on the kernels
// page). After a kernel they stay awake for MSCOMPAT_SPIN_US microseconds (default 200), yielding
// the core to any thread that wants it, as OpenMP's threads do: a kernel that follows soon finds
// them without a wake-up (figures on the kernels page). A call that finds the pool in use
// (another kernel on another thread, or a nested call) runs on its own thread instead; a forked
// child starts a pool of its own.
//
// Linux may wake a sleeping helper on its waker's CPU (and a waiting caller on its helper's), and
// a helper that then spins there shares that CPU with the caller, taking a chunk now and then,
// until the load balancer moves it (many milliseconds: figures on the kernels page): the kernel
// runs at one thread's speed. So a helper that finds itself on the last caller's CPU, when a job
// starts or while it spins, moves to the others (sched_setaffinity), and the caller waits for
// the helpers awake.

#pragma once

#include <sched.h>
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

// The CPUs this process may run on (a container's or taskset's limit; hardware_concurrency()
// counts the machine's).
inline int AllowedCpus() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) return std::max(1, CPU_COUNT(&mask));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

inline int NumThreads(int64_t work, int64_t min_work, int64_t grain) {
  if (work < min_work) return 1;
  static const int allowed = AllowedCpus();
  int hw = allowed;
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
      caller_cpu_ = sched_getcpu();
      waiting_ = helpers;
      running_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    job();
    {
      std::lock_guard<std::mutex> lock(m_);
      // Helpers that have not woken yet have nothing left to do (chunks are taken on demand).
      running_ -= waiting_;
      waiting_ = 0;
    }
    // A helper's last chunk ends soon: wait awake first, as a caller woken by a helper may be
    // moved onto the helper's CPU.
    const auto until = std::chrono::steady_clock::now() + spin_;
    while (running_.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  HelperPool() : pid_(getpid()), spin_(SpinTime()) {
    if (sched_getaffinity(0, sizeof(allowed_), &allowed_) != 0) CPU_ZERO(&allowed_);
  }

  // Moves the calling helper onto the process's CPUs less `cpu` (the caller's). From the pool's
  // mask, not the helper's own: each move excludes only the caller's current CPU.
  void MoveOff(int cpu) const {
    cpu_set_t mask = allowed_;
    CPU_CLR(cpu, &mask);
    if (CPU_COUNT(&mask) > 0) sched_setaffinity(0, sizeof(mask), &mask);
  }

  // Moves the calling helper off the CPU the last job's caller ran on, if it is there.
  void KeepOffCaller() const {
    const int cpu = caller_cpu_.load(std::memory_order_relaxed);
    if (cpu >= 0 && sched_getcpu() == cpu) MoveOff(cpu);
  }

  void Loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      lock.unlock();
      // While spinning too: a helper that shares the caller's CPU may get no time until the
      // caller's job is done, and so never see one.
      const auto until = std::chrono::steady_clock::now() + spin_;
      while (generation_.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() < until) {
        KeepOffCaller();
        std::this_thread::yield();
      }
      lock.lock();
      wake_.wait(lock, [&] { return generation_ != seen && waiting_ > 0; });
      seen = generation_;
      --waiting_;
      const std::function<void()> *job = job_;
      lock.unlock();
      KeepOffCaller();
      (*job)();
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  const pid_t pid_;
  const std::chrono::microseconds spin_;
  cpu_set_t allowed_;                // the process's CPUs when the pool started
  std::atomic<int> caller_cpu_{-1};  // the CPU the last job's caller ran on
  std::mutex busy_, m_;
  std::condition_variable wake_, done_;
  const std::function<void()> *job_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // read unlocked while spinning
  int waiting_ = 0;
  std::atomic<int> running_{0};  // changed under m_, read unlocked by the waiting caller
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
