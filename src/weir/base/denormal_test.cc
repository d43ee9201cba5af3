#include "weir/base/denormal.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>

#include "weir/base/notification.h"
#include "weir/base/threadpool.h"

namespace weir {
namespace {

// The smallest normal float halved: a denormal, unless flushed to zero.
float HalfOfSmallestNormal() {
  volatile float smallest = std::numeric_limits<float>::min();
  volatile float half = 0.5f;
  return smallest * half;
}

#if defined(__SSE__)
TEST(DenormalTest, ScopedFlushSetsAndRestores) {
  EXPECT_NE(HalfOfSmallestNormal(), 0.0f);
  {
    ScopedFlushDenormals flush;
    EXPECT_EQ(HalfOfSmallestNormal(), 0.0f);
  }
  EXPECT_NE(HalfOfSmallestNormal(), 0.0f);
}

TEST(DenormalTest, PoolThreadsFlush) {
  ThreadPool pool("test", 2);
  std::atomic<float> result{1.0f};
  Notification done;
  pool.Schedule([&] {
    result = HalfOfSmallestNormal();
    done.Notify();
  });
  done.Wait();
  EXPECT_EQ(result.load(), 0.0f);
}
#endif

}  // namespace
}  // namespace weir
