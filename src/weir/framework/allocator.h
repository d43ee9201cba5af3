// Allocator: where tensor memory comes from. Each device owns one; it hands
// out 64-byte aligned blocks and keeps statistics that benchmarks, step stats
// and memory tests read.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace weir {

inline constexpr size_t kTensorAlignment = 64;

struct AllocatorStats {
  int64_t num_allocs = 0;       // allocations since creation
  int64_t bytes_in_use = 0;     // live bytes now
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string Name() const = 0;
  // Returns an `alignment`-aligned block of `bytes`, or nullptr when memory
  // is exhausted. A zero-byte request returns a valid unique pointer.
  virtual void* AllocateRaw(size_t alignment, size_t bytes) = 0;
  // REQUIRES: `ptr` came from AllocateRaw(_, bytes) on this allocator.
  virtual void DeallocateRaw(void* ptr, size_t bytes) = 0;
  virtual AllocatorStats GetStats() const = 0;
  // Resets peak_bytes_in_use to bytes_in_use (for measuring one phase).
  virtual void ResetPeak() = 0;
};

// Host memory from aligned_alloc, with statistics kept by atomics.
//
// Freed blocks of 256 KiB or more go to a process-wide cache (1 GiB at
// most) and serve later requests of the same page-rounded size: a training
// step allocates the same large tensors every step, and glibc serves blocks
// that large with fresh mmaps whose page faults (the kernel zeroing every
// page) cost more than the kernels that fill them. Not under ASan, so that
// use-after-free of a tensor's memory stays detectable.
class CpuAllocator final : public Allocator {
 public:
  explicit CpuAllocator(std::string name = "cpu") : name_(std::move(name)) {}
  std::string Name() const override { return name_; }
  void* AllocateRaw(size_t alignment, size_t bytes) override;
  void DeallocateRaw(void* ptr, size_t bytes) override;
  AllocatorStats GetStats() const override;
  void ResetPeak() override;

 private:
  std::string name_;
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> bytes_in_use_{0};
  std::atomic<int64_t> peak_bytes_in_use_{0};
  std::atomic<int64_t> largest_alloc_size_{0};
};

// The process-wide allocator used by tensors created outside any device
// (tests, feeds built by the client).
Allocator* DefaultCpuAllocator();

}  // namespace weir
