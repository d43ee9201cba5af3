#include "weir/runtime/local_rendezvous.h"

#include <gtest/gtest.h>

#include <thread>

#include "weir/base/cancellation.h"
#include "weir/base/notification.h"

namespace weir {
namespace {

Rendezvous::ParsedKey Key(const std::string& edge) {
  return *Rendezvous::ParseKey(Rendezvous::CreateKey("/device:CPU:0", 7, "/device:CPU:1", edge, {}));
}

TEST(LocalRendezvousTest, SendThenRecvAndRecvThenSend) {
  LocalRendezvous rendezvous;
  ASSERT_TRUE(rendezvous.Send(Key("a"), Tensor::Scalar<float>(1), false).ok());
  float got = 0;
  rendezvous.RecvAsync(Key("a"), nullptr, [&](const Status& s, const Tensor& t, bool dead) {
    EXPECT_TRUE(s.ok());
    EXPECT_FALSE(dead);
    got = t.scalar<float>();
  });
  EXPECT_EQ(got, 1.f);

  Notification received;
  rendezvous.RecvAsync(Key("b"), nullptr, [&](const Status& s, const Tensor& t, bool dead) {
    EXPECT_TRUE(s.ok());
    EXPECT_TRUE(dead);
    received.Notify();
  });
  EXPECT_FALSE(received.HasBeenNotified());
  std::thread sender([&] { ASSERT_TRUE(rendezvous.Send(Key("b"), Tensor(), true).ok()); });
  received.Wait();
  sender.join();
}

TEST(LocalRendezvousTest, SendingTwiceIsAnError) {
  LocalRendezvous rendezvous;
  ASSERT_TRUE(rendezvous.Send(Key("a"), Tensor::Scalar<float>(1), false).ok());
  EXPECT_EQ(rendezvous.Send(Key("a"), Tensor::Scalar<float>(2), false).code(), Code::kInternal);
}

TEST(LocalRendezvousTest, AbortFailsWaitersAndLaterCalls) {
  LocalRendezvous rendezvous;
  Status waiting;
  rendezvous.RecvAsync(Key("a"), nullptr, [&](const Status& s, const Tensor&, bool) { waiting = s; });
  rendezvous.StartAbort(errors::Aborted("peer died"));
  EXPECT_EQ(waiting.code(), Code::kAborted);
  EXPECT_EQ(rendezvous.Send(Key("b"), Tensor(), false).code(), Code::kAborted);
  Status later;
  rendezvous.RecvAsync(Key("c"), nullptr, [&](const Status& s, const Tensor&, bool) { later = s; });
  EXPECT_EQ(later.code(), Code::kAborted);
}

TEST(LocalRendezvousTest, CancellationWakesAWaitingRecvExactlyOnce) {
  LocalRendezvous rendezvous;
  CancellationManager cancellation;
  int calls = 0;
  Status status;
  rendezvous.RecvAsync(Key("a"), &cancellation, [&](const Status& s, const Tensor&, bool) {
    ++calls;
    status = s;
  });
  cancellation.StartCancel();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(status.code(), Code::kCancelled);
  // A Send after the cancellation finds no waiter and must not call it again.
  ASSERT_TRUE(rendezvous.Send(Key("a"), Tensor::Scalar<float>(1), false).ok());
  EXPECT_EQ(calls, 1);
  // A Recv registered after the cancellation fails at once.
  Status late;
  rendezvous.RecvAsync(Key("z"), &cancellation, [&](const Status& s, const Tensor&, bool) { late = s; });
  EXPECT_EQ(late.code(), Code::kCancelled);
}

TEST(LocalRendezvousTest, RacingSendAndCancelCallTheWaiterOnce) {
  for (int round = 0; round < 200; ++round) {
    LocalRendezvous rendezvous;
    CancellationManager cancellation;
    std::atomic<int> calls{0};
    rendezvous.RecvAsync(Key("a"), &cancellation,
                         [&](const Status&, const Tensor&, bool) { calls.fetch_add(1); });
    std::thread canceller([&] { cancellation.StartCancel(); });
    rendezvous.Send(Key("a"), Tensor::Scalar<float>(1), false).ok();
    canceller.join();
    EXPECT_EQ(calls.load(), 1);
  }
}

}  // namespace
}  // namespace weir
