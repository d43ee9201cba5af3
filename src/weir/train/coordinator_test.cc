// Coordinator: stop requests wake waiters, the first real error is kept,
// Join waits for threads and names the ones that do not end.
#include "weir/train/coordinator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "weir/base/notification.h"

namespace weir {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

TEST(CoordinatorTest, RequestStopWakesWaiters) {
  Coordinator coordinator;
  EXPECT_FALSE(coordinator.ShouldStop());
  EXPECT_FALSE(coordinator.WaitForStop(milliseconds(1)));
  std::atomic<int> woken{0};
  for (int i = 0; i < 3; ++i) {
    coordinator.StartThread("waiter", [&] {
      if (coordinator.WaitForStop(hours(1))) woken.fetch_add(1);
    });
  }
  coordinator.RequestStop();
  coordinator.RequestStop();  // idempotent
  EXPECT_TRUE(coordinator.ShouldStop());
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(woken.load(), 3);
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
}

TEST(CoordinatorTest, KeepsTheFirstRealError) {
  Coordinator coordinator;
  coordinator.ReportError(Status::OK());
  EXPECT_FALSE(coordinator.ShouldStop());
  coordinator.ReportError(errors::OutOfRange("end of input"));
  EXPECT_TRUE(coordinator.ShouldStop());
  EXPECT_TRUE(coordinator.error().ok());
  coordinator.ReportError(errors::Cancelled("woken by the stop"));
  EXPECT_TRUE(coordinator.error().ok());
  coordinator.ReportError(errors::InvalidArgument("first"));
  coordinator.ReportError(errors::Internal("second"));
  EXPECT_EQ(coordinator.error(), errors::InvalidArgument("first"));
  EXPECT_EQ(coordinator.Join(), errors::InvalidArgument("first"));
}

TEST(CoordinatorTest, CancelledBeforeAnyStopIsAnError) {
  Coordinator coordinator;
  coordinator.ReportError(errors::Cancelled("session closed"));
  EXPECT_TRUE(coordinator.ShouldStop());
  EXPECT_EQ(coordinator.error().code(), Code::kCancelled);
}

TEST(CoordinatorTest, JoinReturnsAThreadsError) {
  Coordinator coordinator;
  coordinator.StartThread("failing",
                          [&] { coordinator.ReportError(errors::DataLoss("bad record")); });
  coordinator.StartThread("stopping", [&] { coordinator.WaitForStop(hours(1)); });
  EXPECT_EQ(coordinator.Join(), errors::DataLoss("bad record"));
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
}

TEST(CoordinatorTest, JoinWaitsForThreadsThatEndWithoutAStop) {
  Coordinator coordinator;
  std::atomic<int> ran{0};
  for (int i = 0; i < 4; ++i) coordinator.StartThread("worker", [&] { ran.fetch_add(1); });
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(ran.load(), 4);
  EXPECT_FALSE(coordinator.ShouldStop());
}

TEST(CoordinatorTest, ThreadStartedByAThreadIsJoined) {
  Coordinator coordinator;
  std::atomic<bool> inner_ran{false};
  coordinator.StartThread("outer",
                          [&] { coordinator.StartThread("inner", [&] { inner_ran = true; }); });
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_TRUE(inner_ran.load());
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
}

TEST(CoordinatorTest, JoinNamesThreadsThatDoNotEnd) {
  Coordinator coordinator;
  Notification release;
  coordinator.StartThread("quick", [] {});
  coordinator.StartThread("stuck reader", [&] { release.Wait(); });
  coordinator.RequestStop();
  // The stuck thread cannot end in any grace; the quick one ends at once
  // (a generous grace, so a loaded machine does not make it look stuck).
  Status joined = coordinator.Join(milliseconds(1000));
  EXPECT_EQ(joined.code(), Code::kDeadlineExceeded);
  EXPECT_NE(joined.message().find("'stuck reader'"), std::string::npos) << joined;
  EXPECT_EQ(joined.message().find("quick"), std::string::npos) << joined;
  EXPECT_EQ(coordinator.num_unjoined_threads(), 1);
  release.Notify();
  EXPECT_TRUE(coordinator.Join().ok());
  EXPECT_EQ(coordinator.num_unjoined_threads(), 0);
}

// A thread a Join gave up on may outlive the coordinator: it is detached
// and keeps the shared state alive, so it ends later without a crash.
TEST(CoordinatorTest, AbandonedThreadOutlivesTheCoordinator) {
  auto release = std::make_shared<Notification>();
  auto finished = std::make_shared<Notification>();
  {
    Coordinator coordinator;
    coordinator.StartThread("never ends in time", [release, finished] {
      release->Wait();
      finished->Notify();
    });
    coordinator.RequestStop();
    EXPECT_EQ(coordinator.Join(milliseconds(1)).code(), Code::kDeadlineExceeded);
  }  // destroyed: the thread is detached, not waited for again
  release->Notify();
  finished->Wait();
}

TEST(CoordinatorTest, CallOnStopRunsOnceAtTheStop) {
  Coordinator coordinator;
  int before = 0, after = 0;
  coordinator.CallOnStop([&] { ++before; });
  EXPECT_EQ(before, 0);
  coordinator.RequestStop();
  coordinator.RequestStop();
  EXPECT_EQ(before, 1);
  coordinator.CallOnStop([&] { ++after; });  // already stopped: runs now
  EXPECT_EQ(after, 1);
}

TEST(CoordinatorTest, DestructorStopsAndJoinsRunningThreads) {
  std::atomic<bool> saw_stop{false};
  {
    Coordinator coordinator;
    coordinator.StartThread("waiter", [&] { saw_stop = coordinator.WaitForStop(hours(1)); });
  }
  EXPECT_TRUE(saw_stop.load());
}

}  // namespace
}  // namespace weir
