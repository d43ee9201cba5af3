#include "weir/framework/allocator.h"

#include <cstdlib>
#include <limits>

namespace weir {
namespace {

void UpdateMax(std::atomic<int64_t>& target, int64_t value) {
  int64_t current = target.load(std::memory_order_relaxed);
  while (value > current &&
         !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

void* CpuAllocator::AllocateRaw(size_t alignment, size_t bytes) {
  if (alignment < kTensorAlignment) alignment = kTensorAlignment;
  // Rounding up would wrap around to a small block.
  if (bytes > std::numeric_limits<size_t>::max() - alignment) return nullptr;
  // aligned_alloc needs a size that is a multiple of the alignment.
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  if (rounded == 0) rounded = alignment;
  void* ptr = std::aligned_alloc(alignment, rounded);
  if (ptr == nullptr) return nullptr;
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
  int64_t in_use = bytes_in_use_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  UpdateMax(peak_bytes_in_use_, in_use);
  UpdateMax(largest_alloc_size_, static_cast<int64_t>(bytes));
  return ptr;
}

void CpuAllocator::DeallocateRaw(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  bytes_in_use_.fetch_sub(bytes, std::memory_order_relaxed);
  std::free(ptr);
}

AllocatorStats CpuAllocator::GetStats() const {
  AllocatorStats stats;
  stats.num_allocs = num_allocs_.load(std::memory_order_relaxed);
  stats.bytes_in_use = bytes_in_use_.load(std::memory_order_relaxed);
  stats.peak_bytes_in_use = peak_bytes_in_use_.load(std::memory_order_relaxed);
  stats.largest_alloc_size = largest_alloc_size_.load(std::memory_order_relaxed);
  return stats;
}

void CpuAllocator::ResetPeak() {
  peak_bytes_in_use_.store(bytes_in_use_.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
}

Allocator* DefaultCpuAllocator() {
  static CpuAllocator* const allocator = new CpuAllocator("default_cpu");
  return allocator;
}

}  // namespace weir
