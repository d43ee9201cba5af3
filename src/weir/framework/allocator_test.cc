#include "weir/framework/allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "weir/base/sanitizers.h"
#include "weir/framework/tensor.h"

#ifdef WEIR_ADDRESS_SANITIZER
// The out-of-memory tests ask for up to 2^64 bytes. Under ASan, malloc must
// return null for them as glibc does, instead of aborting the test binary.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace weir {
namespace {

bool Aligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(CpuAllocatorTest, NameAndDefault) {
  EXPECT_EQ(CpuAllocator().Name(), "cpu");
  EXPECT_EQ(CpuAllocator("mine").Name(), "mine");
  EXPECT_EQ(DefaultCpuAllocator(), DefaultCpuAllocator());
  EXPECT_EQ(DefaultCpuAllocator()->Name(), "default_cpu");
}

TEST(CpuAllocatorTest, AlignsToAtLeast64Bytes) {
  CpuAllocator allocator;
  for (size_t alignment : {size_t{1}, size_t{16}, size_t{64}, size_t{256}, size_t{4096}}) {
    for (size_t bytes : {size_t{1}, size_t{63}, size_t{65}, size_t{1000}}) {
      void* p = allocator.AllocateRaw(alignment, bytes);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(Aligned(p, std::max(alignment, kTensorAlignment)))
          << "alignment " << alignment << " bytes " << bytes;
      std::memset(p, 0xab, bytes);  // the whole request is writable
      allocator.DeallocateRaw(p, bytes);
    }
  }
}

TEST(CpuAllocatorTest, LargeBlocksAreReusedAndStatsStayExact) {
  CpuAllocator allocator;
  const size_t big = (1 << 20) + 100;  // cached sizes start at 256 KiB
  void* first = allocator.AllocateRaw(64, big);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, big);
  allocator.DeallocateRaw(first, big);
  EXPECT_EQ(allocator.GetStats().bytes_in_use, 0);
  void* second = allocator.AllocateRaw(64, big);
#if !defined(WEIR_ADDRESS_SANITIZER)
  EXPECT_EQ(second, first);  // the cached block, without a fresh mmap
#endif
  EXPECT_EQ(reinterpret_cast<uintptr_t>(second) % 64, 0u);
  std::memset(second, 2, big);  // the whole request is writable
  // A block of another size class is a different block, and a larger
  // alignment than a page is honoured.
  void* other = allocator.AllocateRaw(64, 2 * big);
  EXPECT_NE(other, second);
  void* aligned = allocator.AllocateRaw(8192, big);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 8192, 0u);
  EXPECT_EQ(allocator.GetStats().bytes_in_use, static_cast<int64_t>(4 * big));
  allocator.DeallocateRaw(second, big);
  allocator.DeallocateRaw(other, 2 * big);
  allocator.DeallocateRaw(aligned, big);
  EXPECT_EQ(allocator.GetStats().bytes_in_use, 0);
}

TEST(CpuAllocatorTest, ZeroBytesGivesUniquePointers) {
  CpuAllocator allocator;
  void* a = allocator.AllocateRaw(64, 0);
  void* b = allocator.AllocateRaw(64, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_EQ(allocator.GetStats().bytes_in_use, 0);
  allocator.DeallocateRaw(a, 0);
  allocator.DeallocateRaw(b, 0);
  allocator.DeallocateRaw(nullptr, 0);  // harmless
}

TEST(CpuAllocatorTest, StatsTrackTensors) {
  CpuAllocator allocator;
  AllocatorStats stats = allocator.GetStats();
  EXPECT_EQ(stats.num_allocs, 0);
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.peak_bytes_in_use, 0);
  {
    Tensor a(&allocator, DT_FLOAT, TensorShape({10}));  // 40 bytes
    Tensor b(&allocator, DT_DOUBLE, TensorShape({2, 50}));  // 800 bytes
    stats = allocator.GetStats();
    EXPECT_EQ(stats.num_allocs, 2);
    EXPECT_EQ(stats.bytes_in_use, 840);
    EXPECT_EQ(stats.peak_bytes_in_use, 840);
    EXPECT_EQ(stats.largest_alloc_size, 800);
    Tensor copy = b;  // a copy allocates nothing
    Tensor slice = b.Slice(0, 1);
    EXPECT_EQ(allocator.GetStats().num_allocs, 2);
    EXPECT_EQ(allocator.GetStats().bytes_in_use, 840);
  }
  stats = allocator.GetStats();
  EXPECT_EQ(stats.bytes_in_use, 0);  // both buffers returned
  EXPECT_EQ(stats.peak_bytes_in_use, 840);
  EXPECT_EQ(stats.num_allocs, 2);

  {
    Tensor c(&allocator, DT_INT8, TensorShape({100}));
    EXPECT_EQ(allocator.GetStats().peak_bytes_in_use, 840);  // peak is a high-water mark
    allocator.ResetPeak();
    EXPECT_EQ(allocator.GetStats().peak_bytes_in_use, 100);
    Tensor d(&allocator, DT_INT8, TensorShape({20}));
    EXPECT_EQ(allocator.GetStats().peak_bytes_in_use, 120);
  }
  allocator.ResetPeak();
  stats = allocator.GetStats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.peak_bytes_in_use, 0);
  EXPECT_EQ(stats.num_allocs, 4);
  EXPECT_EQ(stats.largest_alloc_size, 800);
}

TEST(CpuAllocatorTest, StringTensorsReturnTheirBytes) {
  CpuAllocator allocator;
  {
    Tensor t(&allocator, DT_STRING, TensorShape({3}));
    EXPECT_EQ(allocator.GetStats().bytes_in_use,
              static_cast<int64_t>(3 * sizeof(std::string)));
  }
  EXPECT_EQ(allocator.GetStats().bytes_in_use, 0);
}

TEST(CpuAllocatorTest, ConcurrentStatsAreExact) {
  CpuAllocator allocator;
  constexpr int kThreads = 8, kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&allocator, t] {
      for (int i = 0; i < kPerThread; ++i) {
        size_t bytes = 8 * (1 + (i + t) % 7);
        void* p = allocator.AllocateRaw(64, bytes);
        allocator.DeallocateRaw(p, bytes);
      }
    });
  }
  for (auto& t : threads) t.join();
  AllocatorStats stats = allocator.GetStats();
  EXPECT_EQ(stats.num_allocs, kThreads * kPerThread);
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_GE(stats.peak_bytes_in_use, 56);
  EXPECT_LE(stats.peak_bytes_in_use, kThreads * 56);
  EXPECT_EQ(stats.largest_alloc_size, 56);
}

TEST(CpuAllocatorTest, ImpossibleRequestsReturnNull) {
  CpuAllocator allocator;
  // Rounding these up to the alignment must not wrap around to a small block.
  for (size_t bytes : {std::numeric_limits<size_t>::max(),
                       std::numeric_limits<size_t>::max() - 10,
                       std::numeric_limits<size_t>::max() / 2 + 1}) {
    EXPECT_EQ(allocator.AllocateRaw(64, bytes), nullptr) << bytes;
  }
  AllocatorStats stats = allocator.GetStats();
  EXPECT_EQ(stats.num_allocs, 0);
  EXPECT_EQ(stats.bytes_in_use, 0);
}

// A tensor whose byte size is unrepresentable or unallocatable is a
// ResourceExhausted Status from Tensor::Allocate, never a crash or a buffer
// smaller than the shape.
void ExpectExhausted(DType dtype, std::vector<int64_t> dims) {
  CpuAllocator allocator("huge_test");
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  ASSERT_TRUE(shape.ok()) << shape.status();
  StatusOr<Tensor> t = Tensor::Allocate(&allocator, dtype, *shape);
  ASSERT_FALSE(t.ok()) << DTypeName(dtype) << " " << *shape << " was allocated";
  EXPECT_EQ(t.status().code(), Code::kResourceExhausted);
  EXPECT_NE(t.status().message().find("huge_test"), std::string::npos) << t.status();
  EXPECT_NE(t.status().message().find(shape->DebugString()), std::string::npos) << t.status();
  EXPECT_EQ(allocator.GetStats().num_allocs, 0);
  EXPECT_EQ(allocator.GetStats().bytes_in_use, 0);
}

TEST(TensorAllocateTest, ImpossibleSizeIsResourceExhausted) {
  ExpectExhausted(DT_FLOAT, {int64_t{1} << 61});  // 2^63 bytes
}

TEST(TensorAllocateTest, ByteCountOverflowIsResourceExhausted) {
  // Element counts FromDims accepts, whose byte counts do not fit in 64 bits.
  ExpectExhausted(DT_FLOAT, {int64_t{1} << 62});        // 2^64 bytes
  ExpectExhausted(DT_DOUBLE, {int64_t{1} << 61});       // 2^64 bytes
  ExpectExhausted(DT_COMPLEX128, {int64_t{1} << 60, 3});
  ExpectExhausted(DT_STRING, {int64_t{1} << 60});
}

TEST(TensorAllocateTest, SmallSizeSucceeds) {
  CpuAllocator allocator;
  StatusOr<Tensor> t = Tensor::Allocate(&allocator, DT_INT16, TensorShape({3, 5}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), TensorShape({3, 5}));
  EXPECT_EQ(t->dtype(), DT_INT16);
  EXPECT_EQ(allocator.GetStats().bytes_in_use, 30);
}

}  // namespace
}  // namespace weir
