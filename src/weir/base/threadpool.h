// ThreadPool: a fixed set of worker threads (Eigen's non-blocking pool
// underneath). Used as each device's intra-op pool and as the inter-op pool
// that runs expensive kernels.
//
// A device's intra-op pool stands for its cores. Threads that run kernels
// on those cores (the executor's threads, which are not the pool's) say so
// with a ScopedBusy, and ParallelFor recruits pool workers only for cores
// nobody is using: two kernels running side by side each keep to their own
// thread instead of queueing shards behind each other's on two cores.
//
// A worker that finished its shards spins for a few tens of microseconds
// before it sleeps, and the next ParallelFor in that time hands it work
// directly: a kernel that follows another does not pay a thread wake-up
// (10-20 us here) per call. A spinning worker gives its core up as soon as
// every core is counted busy.
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

  // Splits [0, total) into shards of roughly `cost_per_unit` cycles per
  // unit and runs fn(begin, end) on each; returns when all are done. The
  // caller runs shards itself and is joined by as many workers as there
  // are idle cores (checked again after each shard, so a core freed midway
  // still helps). With no core free it all runs on the caller, in order.
  void ParallelFor(int64_t total, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  // Counts one of the pool's cores busy from now on, for work another
  // thread will start soon (an executor's node waiting in the inter-op
  // queue), so that ParallelFor calls meanwhile leave that core to it. The
  // thread that runs the work takes the claim over with
  // ScopedBusy(pool, ScopedBusy::kClaimed), which releases it.
  void ClaimCore();
  // How many of the pool's cores are counted busy now (ScopedBusy holders,
  // claims, and cores reserved for ParallelFor helpers): a snapshot.
  int BusyCores() const;

  // Marks the calling thread as running work on this pool's cores for its
  // lifetime. Nests; any thread may use it. kClaimed: the core was counted
  // by ClaimCore() already.
  class ScopedBusy {
   public:
    enum Claim { kNew, kClaimed };
    explicit ScopedBusy(ThreadPool* pool, Claim claim = kNew);
    ~ScopedBusy();
    ScopedBusy(const ScopedBusy&) = delete;
    ScopedBusy& operator=(const ScopedBusy&) = delete;

   private:
    ThreadPool* pool_;
    const ThreadPool* previous_;  // the thread's pool before this scope
  };

  Eigen::ThreadPoolInterface* AsEigenThreadPool();

 private:
  struct Impl;
  // Reserves up to `wanted` idle cores; returns how many it got.
  int ReserveIdle(int wanted);

  std::unique_ptr<Impl> impl_;
};

// Number of hardware threads this process may use (affinity-aware).
int NumSchedulableCpus();

}  // namespace weir
