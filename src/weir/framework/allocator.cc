#include "weir/framework/allocator.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "weir/base/sanitizers.h"

namespace weir {
namespace {

void UpdateMax(std::atomic<int64_t>& target, int64_t value) {
  int64_t current = target.load(std::memory_order_relaxed);
  while (value > current &&
         !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

#if defined(WEIR_ADDRESS_SANITIZER)
constexpr bool kCacheBlocks = false;
#else
constexpr bool kCacheBlocks = true;
#endif
constexpr size_t kMinCachedBytes = 256 << 10;
constexpr size_t kMaxCachedBytes = size_t{1} << 30;
constexpr size_t kPage = 4096;

bool Cacheable(size_t bytes) { return kCacheBlocks && bytes >= kMinCachedBytes; }

// aligned_alloc needs a size that is a multiple of the alignment; cacheable
// blocks are rounded to whole pages so that near sizes share a class.
size_t RoundedSize(size_t alignment, size_t bytes) {
  const size_t unit = Cacheable(bytes) ? kPage : alignment;
  const size_t rounded = (bytes + unit - 1) / unit * unit;
  return rounded == 0 ? alignment : rounded;
}

// Freed large blocks by rounded size, shared by every CpuAllocator (they
// all draw on the same heap). Never destroyed: tensors may be freed during
// static destruction.
class BlockCache {
 public:
  static BlockCache& Global() {
    static BlockCache* const cache = new BlockCache;
    return *cache;
  }

  void* Take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(rounded);
    if (it == blocks_.end() || it->second.empty()) return nullptr;
    void* block = it->second.back();
    it->second.pop_back();
    bytes_ -= rounded;
    return block;
  }

  // False when the cache is full: the caller frees the block.
  bool Put(void* block, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes_ + rounded > kMaxCachedBytes) return false;
    blocks_[rounded].push_back(block);
    bytes_ += rounded;
    return true;
  }

 private:
  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> blocks_;
  size_t bytes_ = 0;
};

// Freed one-line blocks (scalars and tiny tensors, kTensorAlignment bytes),
// per thread: a loop allocates one or two per iteration, and aligned_alloc
// with its free costs more than the node that asks. A few per thread,
// freed when the thread ends; none after that (a block freed during
// thread or static destruction goes back to the heap).
class TinyBlockCache {
 public:
  static constexpr int kMaxBlocks = 32;
  static TinyBlockCache* ForThisThread() {
    thread_local TinyBlockCache cache;
    return alive_ ? &cache : nullptr;
  }
  TinyBlockCache() { alive_ = true; }
  ~TinyBlockCache() {
    alive_ = false;
    for (int i = 0; i < count_; ++i) std::free(blocks_[i]);
  }
  void* Take() { return count_ > 0 ? blocks_[--count_] : nullptr; }
  bool Put(void* block) {
    if (count_ == kMaxBlocks) return false;
    blocks_[count_++] = block;
    return true;
  }

 private:
  static thread_local bool alive_;
  int count_ = 0;
  void* blocks_[kMaxBlocks];
};
thread_local bool TinyBlockCache::alive_ = false;

bool IsTinyBlock(size_t alignment, size_t rounded) {
  return kCacheBlocks && alignment == kTensorAlignment && rounded == kTensorAlignment;
}

}  // namespace

void* CpuAllocator::AllocateRaw(size_t alignment, size_t bytes) {
  if (alignment < kTensorAlignment) alignment = kTensorAlignment;
  // Rounding up would wrap around to a small block.
  if (bytes > std::numeric_limits<size_t>::max() - kPage - alignment) return nullptr;
  const size_t rounded = RoundedSize(alignment, bytes);
  // Cached blocks are page-aligned: enough for any alignment up to a page.
  void* ptr = nullptr;
  if (IsTinyBlock(alignment, rounded)) {
    if (TinyBlockCache* tiny = TinyBlockCache::ForThisThread()) ptr = tiny->Take();
  } else if (Cacheable(bytes) && alignment <= kPage) {
    ptr = BlockCache::Global().Take(rounded);
  }
  if (ptr == nullptr) {
    ptr = std::aligned_alloc(Cacheable(bytes) ? std::max(alignment, kPage) : alignment, rounded);
  }
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
  // (A block of another alignment, which Deallocate cannot tell, must not
  // be handed out as a tensor's.)
  if (IsTinyBlock(kTensorAlignment, RoundedSize(kTensorAlignment, bytes)) &&
      reinterpret_cast<uintptr_t>(ptr) % kTensorAlignment == 0) {
    TinyBlockCache* tiny = TinyBlockCache::ForThisThread();
    if (tiny != nullptr && tiny->Put(ptr)) return;
  }
  if (Cacheable(bytes) && BlockCache::Global().Put(ptr, RoundedSize(kTensorAlignment, bytes))) {
    return;
  }
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
