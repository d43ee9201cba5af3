#include "weir/base/threadpool.h"

#define EIGEN_USE_THREADS
#include <sched.h>

#include <thread>
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

}  // namespace

struct ThreadPool::Impl {
  Impl(int num_threads) : pool(num_threads), device(&pool, num_threads) {}
  Eigen::ThreadPoolTempl<FlushDenormalsEnvironment> pool;
  Eigen::ThreadPoolDevice device;
};

ThreadPool::ThreadPool(std::string name, int num_threads) {
  CHECK_GE(num_threads, 1) << "thread pool " << name;
  impl_ = std::make_unique<Impl>(num_threads);
}

ThreadPool::~ThreadPool() = default;

void ThreadPool::Schedule(std::function<void()> fn) { impl_->pool.Schedule(std::move(fn)); }

int ThreadPool::NumThreads() const { return impl_->pool.NumThreads(); }

int ThreadPool::CurrentThreadId() const { return impl_->pool.CurrentThreadId(); }

void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  // Eigen's cost model: bytes loaded/stored and compute cycles per unit.
  Eigen::TensorOpCost cost(0, 0, static_cast<double>(cost_per_unit));
  impl_->device.parallelFor(total, cost, [&fn](Eigen::Index begin, Eigen::Index end) {
    fn(begin, end);
  });
}

Eigen::ThreadPoolInterface* ThreadPool::AsEigenThreadPool() { return &impl_->pool; }

int NumSchedulableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace weir
