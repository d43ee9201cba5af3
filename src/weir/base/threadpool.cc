#include "weir/base/threadpool.h"

#define EIGEN_USE_THREADS
#include <sched.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>
#include <unsupported/Eigen/CXX11/Tensor>

#include "weir/base/denormal.h"
#include "weir/base/logging.h"

namespace weir {
namespace {

// Eigen's standard thread environment, except that each worker flushes
// denormals before it runs anything (see denormal.h for why).
struct FlushDenormalsEnvironment : Eigen::StlThreadEnvironment {
  EnvThread* CreateThread(std::function<void()> fn) {
    return Eigen::StlThreadEnvironment::CreateThread([fn = std::move(fn)] {
      EnableFlushDenormals();
      fn();
    });
  }
};

// Below this many cycles a shard costs more to hand to another thread than
// to run (a wake-up and two cache-line transfers).
constexpr double kMinShardCycles = 100000;
// Shards per thread: a few, so a worker that joins late still finds work.
constexpr int64_t kShardsPerThread = 4;
// How long a worker that ran out of shards, or a caller whose last shards
// run elsewhere, spins before it sleeps: a few thread wake-ups' worth.
constexpr auto kSpin = std::chrono::microseconds(50);

// The pool whose cores the calling thread is counted on, if any.
thread_local const ThreadPool* counted_on = nullptr;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// One ParallelFor call, shared with the workers it recruits; a worker that
// starts after the last shard was claimed finds nothing to do, so the
// state outlives the call.
struct ParallelForState {
  const std::function<void(int64_t, int64_t)>* fn;  // valid while shards remain
  int64_t total = 0, shard_size = 0, shards = 0;
  std::atomic<int64_t> next{0};  // the next unclaimed shard
  std::atomic<int64_t> done{0};
  // Cores reserved for helpers that have not started yet. A helper woken
  // from sleep can take longer to start than the caller takes to run every
  // shard itself; once every shard is claimed the caller hands their cores
  // back rather than leave them counted busy until they wake, which kept
  // the next ParallelFor from recruiting anyone.
  std::atomic<int> unstarted{0};
  std::mutex mu;
  std::condition_variable all_done;

  bool Finished() const { return done.load(std::memory_order_acquire) == shards; }
  // A helper starting: true if its core is still reserved (it then
  // releases it when done), false if the caller took it back.
  bool TakeReservation() {
    int n = unstarted.load(std::memory_order_relaxed);
    while (n > 0) {
      if (unstarted.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) return true;
    }
    return false;
  }
};

// Claims and runs shards until none is left, calling after_shard() after
// each one it ran.
template <typename AfterShard>
void RunShards(ParallelForState* state, const AfterShard& after_shard) {
  for (;;) {
    const int64_t i = state->next.fetch_add(1, std::memory_order_relaxed);
    if (i >= state->shards) return;
    const int64_t begin = i * state->shard_size;
    (*state->fn)(begin, std::min(state->total, begin + state->shard_size));
    if (state->done.fetch_add(1, std::memory_order_acq_rel) + 1 == state->shards) {
      std::lock_guard<std::mutex> lock(state->mu);
      state->all_done.notify_all();
    }
    after_shard();
  }
}

}  // namespace

struct ThreadPool::Impl {
  explicit Impl(int num_threads) : pool(num_threads) {}

  // Hands `state` to a spinning worker, if one is free; the caller has
  // reserved the core it runs on.
  bool Offer(const std::shared_ptr<ParallelForState>& state) {
    std::lock_guard<std::mutex> lock(offer_mu);
    if (offers.size() >= static_cast<size_t>(spinners)) return false;
    offers.push_back(state);
    has_offers.store(true, std::memory_order_release);
    return true;
  }

  // Spins up to kSpin for an offer (its core already reserved); null when
  // none came or every core became busy.
  std::shared_ptr<ParallelForState> WaitForOffer() {
    {
      std::lock_guard<std::mutex> lock(offer_mu);
      ++spinners;
    }
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1;; ++i) {
      // Every core busy: this thread would only slow down whoever runs there.
      const bool give_up = i % 64 == 0 && (busy.load(std::memory_order_relaxed) >= NumThreads() ||
                                           std::chrono::steady_clock::now() >= deadline);
      if (give_up || has_offers.load(std::memory_order_acquire)) {
        // Offers are only made while spinners outnumber them, so one that
        // came is taken here before this thread stops spinning.
        std::lock_guard<std::mutex> lock(offer_mu);
        if (!offers.empty()) {
          std::shared_ptr<ParallelForState> state = std::move(offers.back());
          offers.pop_back();
          has_offers.store(!offers.empty(), std::memory_order_release);
          --spinners;
          return state;
        }
        if (give_up) {
          --spinners;
          return nullptr;
        }
      }
      CpuRelax();
    }
  }

  int NumThreads() { return pool.NumThreads(); }

  // Declared before `pool`, so they outlive the workers that use them.
  std::atomic<int> busy{0};  // threads running work on the pool's cores
  std::mutex offer_mu;
  int spinners = 0;  // guarded by offer_mu
  std::vector<std::shared_ptr<ParallelForState>> offers;  // guarded by offer_mu
  std::atomic<bool> has_offers{false};
  Eigen::ThreadPoolTempl<FlushDenormalsEnvironment> pool;
};

ThreadPool::ScopedBusy::ScopedBusy(ThreadPool* pool, Claim claim)
    : pool_(pool), previous_(counted_on) {
  const bool counted = previous_ == pool_;
  if (!counted && claim == kNew) pool_->impl_->busy.fetch_add(1, std::memory_order_relaxed);
  // Counted already: the claim is one too many.
  if (counted && claim == kClaimed) pool_->impl_->busy.fetch_sub(1, std::memory_order_relaxed);
  counted_on = pool_;
}

ThreadPool::ScopedBusy::~ScopedBusy() {
  counted_on = previous_;
  if (previous_ != pool_) pool_->impl_->busy.fetch_sub(1, std::memory_order_relaxed);
}

void ThreadPool::ClaimCore() { impl_->busy.fetch_add(1, std::memory_order_relaxed); }

int ThreadPool::BusyCores() const { return impl_->busy.load(std::memory_order_relaxed); }

ThreadPool::ThreadPool(std::string name, int num_threads) {
  CHECK_GE(num_threads, 1) << "thread pool " << name;
  impl_ = std::make_unique<Impl>(num_threads);
}

ThreadPool::~ThreadPool() = default;

void ThreadPool::Schedule(std::function<void()> fn) { impl_->pool.Schedule(std::move(fn)); }

int ThreadPool::NumThreads() const { return impl_->pool.NumThreads(); }

int ThreadPool::CurrentThreadId() const { return impl_->pool.CurrentThreadId(); }

int ThreadPool::ReserveIdle(int wanted) {
  int busy = impl_->busy.load(std::memory_order_relaxed);
  for (;;) {
    const int take = std::min(wanted, NumThreads() - busy);
    if (take <= 0) return 0;
    if (impl_->busy.compare_exchange_weak(busy, busy + take, std::memory_order_relaxed)) {
      return take;
    }
  }
}

void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  const double cycles = static_cast<double>(total) * static_cast<double>(cost_per_unit);
  const int64_t most_shards = static_cast<int64_t>(
      std::min<double>({static_cast<double>(total), cycles / kMinShardCycles,
                        static_cast<double>(NumThreads()) * kShardsPerThread}));
  if (most_shards <= 1) {
    fn(0, total);
    return;
  }
  auto state = std::make_shared<ParallelForState>();
  state->fn = &fn;
  state->total = total;
  state->shard_size = (total + most_shards - 1) / most_shards;
  state->shards = (total + state->shard_size - 1) / state->shard_size;

  // The caller counts as busy while it runs shards (once: an executor
  // thread running a kernel is counted already).
  std::optional<ScopedBusy> caller_busy(std::in_place, this);
  // A recruited worker runs shards on the core reserved for it, then
  // spins for the next call's offer before going back to the pool.
  auto help = [this](std::shared_ptr<ParallelForState> work) {
    const ThreadPool* previous = counted_on;
    counted_on = this;
    do {
      if (work->TakeReservation()) {
        RunShards(work.get(), [] {});
        impl_->busy.fetch_sub(1, std::memory_order_relaxed);
      }
      work = impl_->WaitForOffer();
    } while (work != nullptr);
    counted_on = previous;
  };
  auto recruit = [&](int64_t wanted) {
    const int helpers = ReserveIdle(static_cast<int>(std::min<int64_t>(wanted, NumThreads())));
    state->unstarted.fetch_add(helpers, std::memory_order_relaxed);
    for (int h = 0; h < helpers; ++h) {
      if (!impl_->Offer(state)) Schedule([help, state] { help(state); });
    }
  };
  recruit(state->shards - 1);
  // Between shards, the caller looks for newly idle cores.
  RunShards(state.get(), [&] {
    const int64_t unclaimed = state->shards - state->next.load(std::memory_order_relaxed);
    if (unclaimed > 1) recruit(unclaimed - 1);
  });
  // Every shard is claimed: helpers that have not started get nothing.
  if (const int late = state->unstarted.exchange(0, std::memory_order_relaxed); late > 0) {
    impl_->busy.fetch_sub(late, std::memory_order_relaxed);
  }
  // The last shards run elsewhere and are usually nearly done: spin
  // (still counted busy) before sleeping.
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1; !state->Finished(); ++i) {
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) break;
    CpuRelax();
  }
  caller_busy.reset();
  std::unique_lock<std::mutex> lock(state->mu);
  state->all_done.wait(lock, [&] { return state->Finished(); });
}

Eigen::ThreadPoolInterface* ThreadPool::AsEigenThreadPool() { return &impl_->pool; }

int NumSchedulableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace weir
