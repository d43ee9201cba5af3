#include "weir/runtime/run_signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace weir {
namespace {

using ::testing::ElementsAre;

TEST(RunSignatureTest, SortsEachListAndKeepsTheWayBack) {
  CanonicalRun run =
      CanonicalizeRun({"y", "x:1", "a"}, {"out:1", "loss", "out"}, {"train", "init"});
  EXPECT_THAT(run.signature.feeds, ElementsAre("a", "x:1", "y"));
  EXPECT_THAT(run.signature.fetches, ElementsAre("loss", "out", "out:1"));
  EXPECT_THAT(run.signature.targets, ElementsAre("init", "train"));
  // signature.feeds[k] is the caller's feed feed_order[k].
  EXPECT_THAT(run.feed_order, ElementsAre(2, 1, 0));
  EXPECT_THAT(run.fetch_order, ElementsAre(1, 2, 0));
}

TEST(RunSignatureTest, OrderDoesNotChangeTheKeyButNamesDo) {
  std::string key = SignatureKey(CanonicalizeRun({"a", "b"}, {"c", "d"}, {"t"}).signature);
  EXPECT_EQ(key, SignatureKey(CanonicalizeRun({"b", "a"}, {"d", "c"}, {"t"}).signature));
  // A name moved from feeds to fetches, or split differently, is another step.
  EXPECT_NE(key, SignatureKey(CanonicalizeRun({"a"}, {"b", "c", "d"}, {"t"}).signature));
  EXPECT_NE(key, SignatureKey(CanonicalizeRun({"a", "b"}, {"c", "d"}, {}).signature));
  EXPECT_NE(SignatureKey(CanonicalizeRun({}, {"ab"}, {}).signature),
            SignatureKey(CanonicalizeRun({}, {"a", "b"}, {}).signature));
}

TEST(RunSignatureTest, RepeatedFetchesStayRepeated) {
  CanonicalRun run = CanonicalizeRun({}, {"x", "x"}, {});
  EXPECT_THAT(run.signature.fetches, ElementsAre("x", "x"));
  EXPECT_THAT(run.fetch_order, ElementsAre(0, 1));
}

}  // namespace
}  // namespace weir
