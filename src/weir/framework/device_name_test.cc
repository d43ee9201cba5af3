#include "weir/framework/device_name.h"

#include <gtest/gtest.h>

#include <string>

namespace weir {
namespace {

DeviceName ParseOk(std::string_view spec) {
  StatusOr<DeviceName> name = DeviceName::Parse(spec);
  EXPECT_TRUE(name.ok()) << spec << ": " << name.status();
  return name.ok() ? *name : DeviceName();
}

TEST(DeviceNameTest, FullName) {
  DeviceName n = ParseOk("/job:localhost/replica:0/task:2/device:CPU:1");
  EXPECT_TRUE(n.has_job);
  EXPECT_EQ(n.job, "localhost");
  EXPECT_TRUE(n.has_replica);
  EXPECT_EQ(n.replica, 0);
  EXPECT_TRUE(n.has_task);
  EXPECT_EQ(n.task, 2);
  EXPECT_TRUE(n.has_type);
  EXPECT_EQ(n.type, "CPU");
  EXPECT_TRUE(n.has_id);
  EXPECT_EQ(n.id, 1);
  EXPECT_EQ(n.ToString(), "/job:localhost/replica:0/task:2/device:CPU:1");
}

TEST(DeviceNameTest, PartialSpecs) {
  DeviceName n = ParseOk("/device:CPU:1");
  EXPECT_FALSE(n.has_job);
  EXPECT_FALSE(n.has_replica);
  EXPECT_FALSE(n.has_task);
  EXPECT_EQ(n.type, "CPU");
  EXPECT_TRUE(n.has_id);
  EXPECT_EQ(n.id, 1);

  n = ParseOk("/cpu:0");  // the legacy spelling, upper-cased
  EXPECT_TRUE(n.has_type);
  EXPECT_EQ(n.type, "CPU");
  EXPECT_TRUE(n.has_id);
  EXPECT_EQ(n.id, 0);
  EXPECT_EQ(n.ToString(), "/device:CPU:0");

  n = ParseOk("CPU:1");  // bare
  EXPECT_EQ(n.type, "CPU");
  EXPECT_EQ(n.id, 1);
  EXPECT_FALSE(n.has_job);

  n = ParseOk("/job:worker/task:3");
  EXPECT_TRUE(n.has_job);
  EXPECT_EQ(n.job, "worker");
  EXPECT_TRUE(n.has_task);
  EXPECT_EQ(n.task, 3);
  EXPECT_FALSE(n.has_type);
  EXPECT_FALSE(n.has_id);
  EXPECT_EQ(n.ToString(), "/job:worker/task:3");

  n = ParseOk("/device:CPU:*");  // any id
  EXPECT_TRUE(n.has_type);
  EXPECT_FALSE(n.has_id);
  EXPECT_EQ(n.ToString(), "/device:CPU:*");

  n = ParseOk("/job:ps/gpu:2");
  EXPECT_EQ(n.job, "ps");
  EXPECT_EQ(n.type, "GPU");
  EXPECT_EQ(n.id, 2);

  n = ParseOk("/device:gpu");
  EXPECT_EQ(n.type, "GPU");
  EXPECT_FALSE(n.has_id);

  n = ParseOk("");  // no constraint at all
  EXPECT_FALSE(n.has_job || n.has_replica || n.has_task || n.has_type || n.has_id);
  EXPECT_EQ(n.ToString(), "");
}

TEST(DeviceNameTest, MalformedSpecsQuoteTheSpec) {
  for (const char* bad :
       {"/", "//", "/job:", "/job:worker/", "/replica:x", "/replica:-1", "/task:", "/task:1.5",
        "/device:", "/device:CPU:x", "/device:CPU:-1", "/device:CPU:1:2", "/device:C1:0",
        "/cpu:x", "/job:w/bo-gus:1", "CPU:", ":1", "job:worker", "/task:99999999999",
        "/cpu:0/gpu:1"}) {
    StatusOr<DeviceName> name = DeviceName::Parse(bad);
    ASSERT_FALSE(name.ok()) << "'" << bad << "' parsed as " << name->ToString();
    EXPECT_EQ(name.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(name.status().message().find(StrCat("'", bad, "'")), std::string::npos)
        << name.status();
  }
}

TEST(DeviceNameTest, Matches) {
  DeviceName full = ParseOk("/job:localhost/replica:0/task:0/device:CPU:1");
  EXPECT_TRUE(ParseOk("").Matches(full));
  EXPECT_TRUE(ParseOk("/device:CPU:1").Matches(full));
  EXPECT_TRUE(ParseOk("/cpu:1").Matches(full));
  EXPECT_TRUE(ParseOk("/device:CPU:*").Matches(full));
  EXPECT_TRUE(ParseOk("/job:localhost").Matches(full));
  EXPECT_TRUE(ParseOk("/job:localhost/task:0").Matches(full));
  EXPECT_TRUE(full.Matches(full));
  EXPECT_FALSE(ParseOk("/device:CPU:0").Matches(full));
  EXPECT_FALSE(ParseOk("/device:GPU:1").Matches(full));
  EXPECT_FALSE(ParseOk("/job:worker").Matches(full));
  EXPECT_FALSE(ParseOk("/task:1").Matches(full));
  EXPECT_FALSE(ParseOk("/replica:1").Matches(full));
  // A spec that sets a field does not match a name that leaves it unset.
  EXPECT_FALSE(ParseOk("/job:localhost").Matches(ParseOk("/device:CPU:1")));
  EXPECT_FALSE(ParseOk("/device:CPU:1").Matches(ParseOk("/device:CPU:*")));
}

TEST(DeviceNameTest, FullDeviceNameRoundTrips) {
  std::string full = FullDeviceName("worker", 1, 3, "CPU", 2);
  EXPECT_EQ(full, "/job:worker/replica:1/task:3/device:CPU:2");
  DeviceName n = ParseOk(full);
  EXPECT_EQ(n.ToString(), full);
  EXPECT_EQ(n.job, "worker");
  EXPECT_EQ(n.replica, 1);
  EXPECT_EQ(n.task, 3);
  EXPECT_EQ(n.id, 2);
}

}  // namespace
}  // namespace weir
