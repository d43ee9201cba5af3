#include "weir/distributed/cluster_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "proto/cluster.pb.h"
#include "proto/server.pb.h"
#include "weir/framework/device_name.h"

namespace weir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Expects an InvalidArgument whose message contains every one of `parts`.
template <typename T>
void ExpectInvalid(const StatusOr<T>& result, std::vector<std::string> parts) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument) << result.status();
  for (const std::string& part : parts) {
    EXPECT_THAT(result.status().message(), HasSubstr(part));
  }
}

TEST(ClusterSpecTest, ParseFlags) {
  auto spec = ClusterSpec::ParseFlags("worker=localhost:2222,localhost:2223;ps=localhost:2224");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->job_names(), ElementsAre("ps", "worker"));
  EXPECT_EQ(spec->num_tasks("worker"), 2);
  EXPECT_EQ(spec->num_tasks("ps"), 1);
  EXPECT_EQ(spec->num_tasks("chief"), 0);
  EXPECT_EQ(*spec->task_address("worker", 1), "localhost:2223");
  EXPECT_EQ(*spec->task_address("ps", 0), "localhost:2224");
  // Spaces and a trailing ';' are tolerated.
  auto spaced =
      ClusterSpec::ParseFlags(" worker = localhost:2222 , localhost:2223 ; ps=localhost:2224;");
  ASSERT_TRUE(spaced.ok()) << spaced.status();
  EXPECT_EQ(*spaced, *spec);
}

TEST(ClusterSpecTest, ParseFlagsErrors) {
  ExpectInvalid(ClusterSpec::ParseFlags(""), {"--cluster", "empty"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker"), {"--cluster", "'worker'", "JOB=ADDRESS"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker="), {"job 'worker' has no tasks"});
  ExpectInvalid(ClusterSpec::ParseFlags("=localhost:1"), {"empty job name"});
  ExpectInvalid(ClusterSpec::ParseFlags("w/x=localhost:1"), {"job name 'w/x'"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost:1;worker=localhost:2"),
                {"job 'worker' given twice"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost"), {"task 0", "'localhost'", "no port"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost:1,:2"), {"task 1", "empty host"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost:1,"), {"task 1", "no port"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost:65536"), {"port '65536'"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost:-1"), {"port '-1'"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost:22x"), {"port '22x'"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=::1:22"), {"IPv6", "brackets"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=[::1:22"), {"[IPv6]"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=ho st:22"), {"character ' '"});
  ExpectInvalid(ClusterSpec::ParseFlags("worker=localhost:2222;ps=localhost:2222"),
                {"job 'worker' task 0", "job 'ps' task 0", "'localhost:2222'"});
}

TEST(ClusterSpecTest, AddressForms) {
  auto spec =
      ClusterSpec::ParseFlags("worker=[::1]:2222,10.0.0.1:0,10.0.0.2:0,my-host_1.example.com:80");
  ASSERT_TRUE(spec.ok()) << spec.status();  // port 0 may repeat: each picks its own
  EXPECT_EQ(*spec->task_address("worker", 0), "[::1]:2222");
}

TEST(ClusterSpecTest, LookupErrors) {
  auto spec = ClusterSpec::ParseFlags("worker=localhost:1,localhost:2");
  ASSERT_TRUE(spec.ok());
  auto missing_job = spec->task_address("ps", 0);
  ASSERT_FALSE(missing_job.ok());
  EXPECT_EQ(missing_job.status().code(), Code::kNotFound);
  EXPECT_THAT(missing_job.status().message(), HasSubstr("no job 'ps'"));
  EXPECT_THAT(missing_job.status().message(), HasSubstr("jobs: worker"));
  auto missing_task = spec->task_address("worker", 2);
  ASSERT_FALSE(missing_task.ok());
  EXPECT_THAT(missing_task.status().message(), HasSubstr("no task 2 (its tasks: 0, 1)"));
}

TEST(ClusterSpecTest, ParseJsonListAndSparseDict) {
  auto spec = ClusterSpec::ParseJson(
      R"({"worker": ["h1:1", "h2:2"], "ps": {"1": "p1:3", "4": "p4:4"}, "chief": ["c:5"]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->num_tasks("ps"), 2);
  EXPECT_EQ(*spec->task_address("ps", 4), "p4:4");
  EXPECT_FALSE(spec->task_address("ps", 0).ok());
  EXPECT_EQ(*spec->task_address("chief", 0), "c:5");
  // The sparse job stays a dict and the dense ones lists, and the text reads
  // back to the same spec.
  std::string json = spec->ToJson();
  EXPECT_THAT(json, HasSubstr(R"("ps":{"1":"p1:3","4":"p4:4"})"));
  EXPECT_THAT(json, HasSubstr(R"("worker":["h1:1","h2:2"])"));
  auto again = ClusterSpec::ParseJson(json);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *spec);
}

TEST(ClusterSpecTest, ParseJsonErrors) {
  ExpectInvalid(ClusterSpec::ParseJson("{"), {"not valid JSON"});
  ExpectInvalid(ClusterSpec::ParseJson("[]"), {"JSON object", "array"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": "h:1"})"), {"job 'worker'", "list"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": []})"), {"job 'worker' has no tasks"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": {}})"), {"job 'worker' has no tasks"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": [1]})"), {"job 'worker' task 0", "string"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": {"x": "h:1"}})"), {"task key 'x'"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": {"-1": "h:1"}})"), {"task key '-1'"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": {"99999999999": "h:1"}})"),
                {"task key '99999999999'"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"worker": {"0": null}})"), {"task 0", "string"});
  ExpectInvalid(ClusterSpec::ParseJson(R"({"": ["h:1"]})"), {"empty job name"});
}

TEST(TfConfigTest, ParsesAndRoundTrips) {
  const char* text = R"({
      "cluster": {"chief": ["c:2220"], "worker": ["w0:2222", "w1:2223"], "ps": ["p:2224"]},
      "task": {"type": "worker", "index": 1},
      "rpc_layer": "grpc", "environment": "cloud"})";
  auto config = ParseTfConfig(text);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->job, "worker");
  EXPECT_EQ(config->task, 1);
  EXPECT_EQ(*config->cluster.task_address("chief", 0), "c:2220");
  auto again = ParseTfConfig(ToTfConfig(*config));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->cluster, config->cluster);
  EXPECT_EQ(again->job, "worker");
  EXPECT_EQ(again->task, 1);
}

TEST(TfConfigTest, SparseTask) {
  auto config = ParseTfConfig(
      R"({"cluster": {"worker": {"3": "h:1"}}, "task": {"type": "worker", "index": 3}})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task, 3);
  EXPECT_EQ(ParseTfConfig(ToTfConfig(*config))->cluster, config->cluster);
}

TEST(TfConfigTest, Errors) {
  ExpectInvalid(ParseTfConfig("not json"), {"TF_CONFIG", "not valid JSON"});
  ExpectInvalid(ParseTfConfig("[1]"), {"TF_CONFIG", "object"});
  ExpectInvalid(ParseTfConfig(R"({"task": {"type": "worker", "index": 0}})"),
                {"TF_CONFIG", "missing 'cluster'"});
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}})"),
                {"TF_CONFIG", "missing 'task'"});
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": 3})"),
                {"TF_CONFIG", "'task' must be an object"});
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"index": 0}})"),
                {"TF_CONFIG", "'task.type'"});
  ExpectInvalid(ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker"}})"),
                {"TF_CONFIG", "missing 'task.index'"});
  ExpectInvalid(
      ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": -1}})"),
      {"TF_CONFIG", "'task.index' is -1"});
  ExpectInvalid(
      ParseTfConfig(
          R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": 0.5}})"),
      {"TF_CONFIG", "'task.index' is 0.5"});
  ExpectInvalid(
      ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": 1}})"),
      {"TF_CONFIG", "job 'worker' has no task 1"});
  ExpectInvalid(
      ParseTfConfig(R"({"cluster": {"worker": ["h:1"]}, "task": {"type": "ps", "index": 0}})"),
      {"TF_CONFIG", "no job 'ps'"});
  ExpectInvalid(
      ParseTfConfig(
          R"({"cluster": {"worker": ["h:1", "h:1"]}, "task": {"type": "worker", "index": 0}})"),
      {"TF_CONFIG: cluster", "job 'worker' task 1", "'h:1'"});
  ExpectInvalid(
      ParseTfConfig(R"({"cluster": {"worker": ["h"]}, "task": {"type": "worker", "index": 0}})"),
      {"TF_CONFIG: cluster", "job 'worker' task 0", "no port"});
}

TEST(ClusterConfigTest, FromFlags) {
  auto config =
      ClusterConfigFromFlags("worker=localhost:1,localhost:2;ps=localhost:3", "worker", 1);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->job, "worker");
  EXPECT_EQ(config->task, 1);
  ExpectInvalid(ClusterConfigFromFlags("worker=localhost:1", "", 0), {"--job"});
  ExpectInvalid(ClusterConfigFromFlags("worker=localhost:1", "worker", -1), {"--task", "negative"});
  auto out_of_range = ClusterConfigFromFlags("worker=localhost:1", "worker", 1);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(out_of_range.status().message(), HasSubstr("--job/--task"));
  EXPECT_THAT(out_of_range.status().message(), HasSubstr("no task 1"));
}

TEST(ClusterSpecTest, DeviceNamesParse) {
  auto spec = ClusterSpec::ParseFlags("worker=localhost:1,localhost:2;ps=localhost:3");
  ASSERT_TRUE(spec.ok());
  std::vector<std::string> names = spec->DeviceNames("CPU", 2);
  EXPECT_THAT(names, ElementsAre("/job:ps/replica:0/task:0/device:CPU:0",
                                 "/job:ps/replica:0/task:0/device:CPU:1",
                                 "/job:worker/replica:0/task:0/device:CPU:0",
                                 "/job:worker/replica:0/task:0/device:CPU:1",
                                 "/job:worker/replica:0/task:1/device:CPU:0",
                                 "/job:worker/replica:0/task:1/device:CPU:1"));
  auto parsed = DeviceName::Parse(names[4]);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->job, "worker");
  EXPECT_EQ(parsed->task, 1);
  EXPECT_EQ(parsed->type, "CPU");
  EXPECT_EQ(parsed->id, 0);
  EXPECT_EQ(ClusterSpec::TaskName("ps", 3), "/job:ps/replica:0/task:3");
  auto task = DeviceName::Parse(ClusterSpec::TaskName("ps", 3));
  ASSERT_TRUE(task.ok());
  EXPECT_TRUE(task->Matches(*DeviceName::Parse("/job:ps/replica:0/task:3/device:CPU:0")));
}

TEST(ClusterSpecTest, ProtoRoundTrip) {
  auto spec = ClusterSpec::ParseJson(R"({"worker": ["h:1", "h:2"], "ps": {"2": "p:3"}})");
  ASSERT_TRUE(spec.ok());
  wire::ClusterDef proto;
  spec->ToProto(&proto);
  ASSERT_EQ(proto.job_size(), 2);
  EXPECT_EQ(proto.job(0).name(), "ps");
  EXPECT_EQ(proto.job(0).tasks().at(2), "p:3");
  // Field numbers are TensorFlow's: JobDef.name = 1, JobDef.tasks = 2
  // (a map<int32, string>: key 1, value 2), ClusterDef.job = 1. The bytes of
  // one job written by hand parse as the same message.
  std::string job_bytes;
  job_bytes +=
      "\x0a\x01"
      "a";  // name (1, length-delimited) = "a"
  job_bytes +=
      "\x12\x07"
      "\x08\x05"
      "\x12\x03"
      "x:9";  // tasks (2) entry {key 5, value "x:9"}
  std::string cluster_bytes =
      "\x0a" + std::string(1, static_cast<char>(job_bytes.size())) + job_bytes;
  wire::ClusterDef parsed;
  ASSERT_TRUE(parsed.ParseFromString(cluster_bytes));
  auto from_bytes = ClusterSpec::FromProto(parsed);
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status();
  EXPECT_EQ(*from_bytes->task_address("a", 5), "x:9");
  auto again = ClusterSpec::FromProto(proto);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *spec);

  wire::ClusterDef twice;
  twice.add_job()->set_name("w");
  (*twice.mutable_job(0)->mutable_tasks())[0] = "h:1";
  *twice.add_job() = twice.job(0);
  ExpectInvalid(ClusterSpec::FromProto(twice), {"ClusterDef", "job 'w' appears twice"});
  wire::ClusterDef negative;
  negative.add_job()->set_name("w");
  (*negative.mutable_job(0)->mutable_tasks())[-1] = "h:1";
  ExpectInvalid(ClusterSpec::FromProto(negative), {"ClusterDef", "job 'w' task -1", "negative"});
}

TEST(ClusterConfigTest, ServerDefRoundTrip) {
  auto config = ClusterConfigFromFlags("worker=localhost:1;ps=localhost:2", "ps", 0);
  ASSERT_TRUE(config.ok());
  wire::ServerDef server_def;
  ToServerDef(*config, &server_def);
  EXPECT_EQ(server_def.protocol(), "grpc");
  EXPECT_EQ(server_def.job_name(), "ps");
  // ServerDef's field numbers (TensorFlow's): cluster 1, job_name 2,
  // task_index 3, protocol 5.
  std::string bytes = server_def.SerializeAsString();
  EXPECT_NE(bytes.find("\x12\x02ps"), std::string::npos);
  EXPECT_NE(bytes.find("\x2a\x04grpc"), std::string::npos);
  auto again = ClusterConfigFromServerDef(server_def);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->cluster, config->cluster);
  EXPECT_EQ(again->job, "ps");
  EXPECT_EQ(again->task, 0);

  server_def.set_protocol("grpc+verbs");
  ExpectInvalid(ClusterConfigFromServerDef(server_def), {"protocol 'grpc+verbs'"});
  server_def.set_protocol("");
  server_def.set_task_index(7);
  ExpectInvalid(ClusterConfigFromServerDef(server_def),
                {"ServerDef job_name/task_index", "no task 7"});
}

TEST(SlurmTest, ExpandNodeList) {
  auto hosts = ExpandSlurmNodeList("node[01-03,07],gpu5");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_THAT(*hosts, ElementsAre("node01", "node02", "node03", "node07", "gpu5"));
  auto two_groups = ExpandSlurmNodeList("r[1-2]-n[8-9]");
  ASSERT_TRUE(two_groups.ok()) << two_groups.status();
  EXPECT_THAT(*two_groups, ElementsAre("r1-n8", "r1-n9", "r2-n8", "r2-n9"));
  EXPECT_THAT(*ExpandSlurmNodeList("n[9-11]"), ElementsAre("n9", "n10", "n11"));
  EXPECT_THAT(*ExpandSlurmNodeList("single"), ElementsAre("single"));
}

TEST(SlurmTest, NodeListErrors) {
  ExpectInvalid(ExpandSlurmNodeList(""), {"empty host name"});
  ExpectInvalid(ExpandSlurmNodeList("a,,b"), {"empty host name"});
  ExpectInvalid(ExpandSlurmNodeList("node[1-3"), {"unclosed '['"});
  ExpectInvalid(ExpandSlurmNodeList("node1-3]"), {"']' without '['"});
  ExpectInvalid(ExpandSlurmNodeList("node[[1]]"), {"nested"});
  ExpectInvalid(ExpandSlurmNodeList("node[]"), {"empty range"});
  ExpectInvalid(ExpandSlurmNodeList("node[3-1]"), {"'3-1'", "below its start"});
  ExpectInvalid(ExpandSlurmNodeList("node[a-b]"), {"'a-b'"});
  ExpectInvalid(ExpandSlurmNodeList("node[0-999999999]"), {"more than 65536 hosts"});
  ExpectInvalid(ExpandSlurmNodeList("a[0-300]b[0-300]"), {"more than 65536 hosts"});
}

TEST(SlurmTest, ClusterFromEnvironment) {
  std::map<std::string, std::string> env = {
      {"SLURM_JOB_NODELIST", "node[01-02]"}, {"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "3"}};
  auto getenv = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  SlurmOptions options;
  options.base_port = 7000;
  auto config = ClusterConfigFromSlurm(getenv, options);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->job, "worker");
  EXPECT_EQ(config->task, 3);
  // Block distribution: two tasks on each node, ports 7000 and 7001.
  EXPECT_EQ(*config->cluster.task_address("worker", 0), "node01:7000");
  EXPECT_EQ(*config->cluster.task_address("worker", 1), "node01:7001");
  EXPECT_EQ(*config->cluster.task_address("worker", 3), "node02:7001");

  env["SLURM_STEP_NODELIST"] = "a,b,c,d";  // the step's nodes win over the job's
  auto step = ClusterConfigFromSlurm(getenv, options);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(*step->cluster.task_address("worker", 3), "d:7000");
  env.erase("SLURM_STEP_NODELIST");

  env["SLURM_NTASKS_PER_NODE"] = "4";
  EXPECT_EQ(*ClusterConfigFromSlurm(getenv, options)->cluster.task_address("worker", 3),
            "node01:7003");
  env.erase("SLURM_NTASKS_PER_NODE");

  env["SLURM_PROCID"] = "4";
  ExpectInvalid(ClusterConfigFromSlurm(getenv, options), {"SLURM_PROCID=4", "SLURM_NTASKS=4"});
  env["SLURM_PROCID"] = "x";
  ExpectInvalid(ClusterConfigFromSlurm(getenv, options), {"SLURM_PROCID='x'"});
  env.erase("SLURM_PROCID");
  ExpectInvalid(ClusterConfigFromSlurm(getenv, options), {"SLURM_PROCID is not set"});
  env["SLURM_PROCID"] = "0";
  options.tasks_per_node = 1;
  ExpectInvalid(ClusterConfigFromSlurm(getenv, options), {"do not fit on 2 nodes"});
  options.tasks_per_node = 2;
  options.base_port = 65535;
  ExpectInvalid(ClusterConfigFromSlurm(getenv, options), {"base port 65535"});
  env.erase("SLURM_JOB_NODELIST");
  ExpectInvalid(ClusterConfigFromSlurm(getenv, options), {"nor SLURM_JOB_NODELIST is set"});
}

}  // namespace
}  // namespace weir
