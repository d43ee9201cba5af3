// ThreadPool: a fixed set of worker threads (Eigen's non-blocking pool
// underneath). Used as each device's intra-op pool and as the inter-op pool
// that runs expensive kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace Eigen {
class ThreadPoolInterface;
}

namespace weir {

class ThreadPool {
 public:
  // REQUIRES: num_threads >= 1.
  ThreadPool(std::string name, int num_threads);
  ~ThreadPool();  // waits for scheduled work to finish
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int NumThreads() const;
  // Index of the calling thread in this pool, or -1 if it is not one of ours.
  int CurrentThreadId() const;

  // Splits [0, total) into shards of roughly `cost_per_unit`-weighted work
  // and runs fn(begin, end) on them, the caller included; returns when all
  // shards are done.
  void ParallelFor(int64_t total, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  Eigen::ThreadPoolInterface* AsEigenThreadPool();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Number of hardware threads this process may use (affinity-aware).
int NumSchedulableCpus();

}  // namespace weir
