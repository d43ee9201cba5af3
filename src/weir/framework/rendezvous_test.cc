#include "weir/framework/rendezvous.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace weir {
namespace {

constexpr char kSrc[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kDst[] = "/job:localhost/replica:0/task:0/device:CPU:1";

TEST(RendezvousKeyTest, CreateKeyFormat) {
  EXPECT_EQ(Rendezvous::CreateKey(kSrc, 7, kDst, "edge_3_x:0", {0, 0}),
            std::string(kSrc) + ";7;" + kDst + ";edge_3_x:0;0:0");
}

TEST(RendezvousKeyTest, RoundTrip) {
  struct Case {
    uint64_t incarnation;
    FrameAndIter frame_iter;
  };
  const Case cases[] = {
      {0, {0, 0}},
      {123456789, {5, 17}},
      {(uint64_t{1} << 62) | 12345, {1, 0}},
      // Incarnations are random 64-bit numbers: the high bit may be set.
      {std::numeric_limits<uint64_t>::max(), {0, 0}},
      {uint64_t{1} << 63, {std::numeric_limits<uint64_t>::max(), 3}},
      {42, {0, std::numeric_limits<int64_t>::max()}},
  };
  for (const Case& c : cases) {
    std::string key = Rendezvous::CreateKey(kSrc, c.incarnation, kDst, "x:0", c.frame_iter);
    StatusOr<Rendezvous::ParsedKey> parsed = Rendezvous::ParseKey(key);
    ASSERT_TRUE(parsed.ok()) << key << ": " << parsed.status();
    EXPECT_EQ(parsed->src_device, kSrc);
    EXPECT_EQ(parsed->src_incarnation, c.incarnation) << key;
    EXPECT_EQ(parsed->dst_device, kDst);
    EXPECT_EQ(parsed->edge_name, "x:0");
    EXPECT_EQ(parsed->frame_iter.frame_id, c.frame_iter.frame_id) << key;
    EXPECT_EQ(parsed->frame_iter.iter_id, c.frame_iter.iter_id) << key;
    EXPECT_EQ(parsed->full_key, key);
    // Recreating the key from the parsed fields gives the same string.
    EXPECT_EQ(Rendezvous::CreateKey(parsed->src_device, parsed->src_incarnation,
                                    parsed->dst_device, parsed->edge_name, parsed->frame_iter),
              key);
  }
}

TEST(RendezvousKeyTest, MalformedKeys) {
  const std::string good_prefix = std::string(kSrc) + ";1;" + kDst + ";e;";
  for (const std::string& bad : {
           std::string(""),
           std::string("a;b;c"),
           good_prefix,                    // no frame:iter
           good_prefix + "0:0;extra",      // six parts
           good_prefix + "0",              // frame without iter
           good_prefix + "0:0:0",
           good_prefix + "x:0",
           good_prefix + "0:y",
           good_prefix + ":",
           std::string(kSrc) + ";;" + kDst + ";e;0:0",        // empty incarnation
           std::string(kSrc) + ";inc;" + kDst + ";e;0:0",     // not a number
           std::string(kSrc) + ";-1;" + kDst + ";e;0:0",      // negative incarnation
           std::string(kSrc) + ";18446744073709551616;" + kDst + ";e;0:0",  // 2^64
       }) {
    StatusOr<Rendezvous::ParsedKey> parsed = Rendezvous::ParseKey(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find(StrCat("'", bad, "'")), std::string::npos)
        << parsed.status();
  }
}

}  // namespace
}  // namespace weir
