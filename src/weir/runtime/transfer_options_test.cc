// Cross-device transfers through a Session: Recv scheduling never changes a
// result nor hangs a step; lossy transfers round float32 to bfloat16 to
// nearest even (checked bit for bit against integer arithmetic) and leave
// other dtypes alone; the Chrome trace shows each device as a process and
// each transfer as a flow arrow.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "weir/graph/random_dag_test_util.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

using testing_dag::CpuName;

NodeDef Op(const std::string& name, const std::string& op, std::vector<std::string> inputs,
           int device, DType dtype = DT_FLOAT) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.device = StrCat("/device:CPU:", device);
  if (op == "Placeholder") {
    def.attrs["dtype"] = dtype;
  } else if (op == "Const") {
    def.attrs["dtype"] = dtype;
    def.attrs["value"] = Tensor::Scalar<float>(1.5f);
  } else if (op != "NoOp") {
    def.attrs["T"] = dtype;
  }
  return def;
}

// Compile options that keep every node: the DAGs are all constants, which
// folding would otherwise turn into one Const per fetch.
std::unique_ptr<Session> NewSession(const GraphDef& graph, int devices, bool schedule, bool lossy) {
  SessionOptions options;
  options.num_cpu_devices = devices;
  options.intra_op_threads = 1;
  options.inter_op_threads = 2;
  options.compile.cse = false;
  options.compile.fold_constants = false;
  options.compile.schedule_recvs = schedule;
  options.compile.lossy_transfers = lossy;
  auto session = Session::New(options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return nullptr;
  Status created = (*session)->Create(graph);
  EXPECT_TRUE(created.ok()) << created;
  return std::move(*session);
}

RunOptions WithTimeout() {
  RunOptions options;
  options.timeout_ms = 20000;  // a scheduling mistake fails instead of hanging
  return options;
}

TEST(RecvSchedulingTest, RandomDagsGiveTheSameValuesWithAndWithout) {
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    const int devices = 2 + static_cast<int>(seed % 3);
    testing_dag::RandomDag dag = testing_dag::MakeRandomDag(seed, devices, 12 + seed % 30, 1024);
    std::vector<Tensor> expected, actual;
    auto plain = NewSession(dag.graph, devices, false, false);
    auto scheduled = NewSession(dag.graph, devices, true, false);
    ASSERT_TRUE(plain && scheduled);
    for (int step = 0; step < 2; ++step) {
      Status a = plain->Run({}, dag.fetches, dag.targets, &expected, WithTimeout());
      Status b = scheduled->Run({}, dag.fetches, dag.targets, &actual, WithTimeout());
      ASSERT_TRUE(a.ok()) << "seed " << seed << ": " << a;
      ASSERT_TRUE(b.ok()) << "seed " << seed << ": " << b;
      ASSERT_EQ(expected.size(), actual.size());
      for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_TRUE(expected[i].ContentEquals(actual[i]))
            << "seed " << seed << " " << dag.fetches[i];
      }
    }
  }
}

// The graph of recv_schedule_test's cross-device cycle case, run: it must
// finish, with the right value.
TEST(RecvSchedulingTest, CrossDeviceChainRuns) {
  GraphDef graph;
  graph.nodes = {Op("x", "Const", {}, 0), Op("u", "Neg", {"x"}, 1), Op("w", "Neg", {"u"}, 0),
                 Op("c", "Neg", {"w"}, 1), Op("l0", "Const", {}, 0)};
  for (int i = 1; i <= 20; ++i)
    graph.nodes.push_back(Op(StrCat("l", i), "Neg", {StrCat("l", i - 1)}, 0));
  graph.nodes.push_back(Op("end", "Add", {"c", "l20"}, 1));
  auto session = NewSession(graph, 2, true, false);
  ASSERT_TRUE(session);
  std::vector<Tensor> out;
  Status s = session->Run({}, {"end"}, {}, &out, WithTimeout());
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<float>(), -1.5f + 1.5f);
}

// float32 -> bfloat16 by round to nearest, ties to even, in integers. NaNs
// are checked apart (any quiet NaN of the same sign will do).
uint16_t ReferenceBfloat16(uint32_t bits) {
  const uint32_t lsb = (bits >> 16) & 1;
  return static_cast<uint16_t>((bits + 0x7FFF + lsb) >> 16);
}

bool IsNan(uint32_t bits) { return (bits & 0x7FFFFFFF) > 0x7F800000; }

std::vector<uint32_t> InterestingFloats() {
  std::vector<uint32_t> bits = {
      0x00000000, 0x80000000,              // +-0
      0x3F800000, 0x3F808000, 0x3F818000,  // 1, ties to even (down, up)
      0x3F808001, 0x3F807FFF,              // just above and below a tie
      0xBF808000, 0xBF818000,              // negative ties
      0x7F7FFFFF, 0xFF7FFFFF,              // largest finite: rounds to infinity
      0x7F7F7FFF,                          // largest that stays finite
      0x7F800000, 0xFF800000,              // infinities
      0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0xFF800001,  // NaNs, signalling too
      0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x80008001,  // subnormals
      0x00800000, 0x33800000,                                      // smallest normal, 2^-24
  };
  std::mt19937 rng(7);
  for (int i = 0; i < 4000; ++i) bits.push_back(rng());
  return bits;
}

TEST(LossyTransferTest, Float32CrossesAsBfloat16RoundedToNearestEven) {
  GraphDef graph;
  graph.nodes = {Op("x", "Placeholder", {}, 0), Op("y", "Identity", {"x"}, 1)};
  auto lossy = NewSession(graph, 2, true, true);
  auto exact = NewSession(graph, 2, true, false);
  ASSERT_TRUE(lossy && exact);
  const std::vector<uint32_t> bits = InterestingFloats();
  Tensor x(DT_FLOAT, TensorShape({static_cast<int64_t>(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i) x.data<float>()[i] = std::bit_cast<float>(bits[i]);

  std::vector<Tensor> out;
  ASSERT_TRUE(lossy->Run({{"x", x}}, {"y"}, {}, &out, WithTimeout()).ok());
  ASSERT_EQ(out[0].NumElements(), x.NumElements());
  for (size_t i = 0; i < bits.size(); ++i) {
    const uint32_t got = std::bit_cast<uint32_t>(out[0].data<float>()[i]);
    if (IsNan(bits[i])) {
      EXPECT_TRUE(IsNan(got)) << std::hex << bits[i] << " -> " << got;
      EXPECT_EQ(got >> 31, bits[i] >> 31) << std::hex << bits[i];
    } else {
      EXPECT_EQ(got, static_cast<uint32_t>(ReferenceBfloat16(bits[i])) << 16)
          << std::hex << bits[i] << " -> " << got;
    }
  }
  // Off, the same bits arrive.
  ASSERT_TRUE(exact->Run({{"x", x}}, {"y"}, {}, &out, WithTimeout()).ok());
  EXPECT_TRUE(out[0].ContentEquals(x));
}

TEST(LossyTransferTest, OtherDtypesTravelExactly) {
  GraphDef graph;
  graph.nodes = {Op("i", "Placeholder", {}, 0, DT_INT32), Op("j", "Identity", {"i"}, 1, DT_INT32),
                 Op("d", "Placeholder", {}, 0, DT_DOUBLE),
                 Op("e", "Identity", {"d"}, 1, DT_DOUBLE)};
  auto session = NewSession(graph, 2, true, true);
  ASSERT_TRUE(session);
  Tensor i = Tensor::FromVector<int32_t>({16777217, -2147483647, 3});
  Tensor d = Tensor::FromVector<double>({1.0 + 1e-12, -3.25, 1e300});
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"i", i}, {"d", d}}, {"j", "e"}, {}, &out, WithTimeout()).ok());
  EXPECT_TRUE(out[0].ContentEquals(i));
  EXPECT_TRUE(out[1].ContentEquals(d));
}

// a (CPU:0) -> b (CPU:1) -> c (CPU:0), and a control edge a -> d (CPU:1):
// three transfers, each one arrow from its _Send's slice to its _Recv's.
TEST(ChromeTraceTest, OneProcessPerDeviceAndAFlowPerTransfer) {
  GraphDef graph;
  graph.nodes = {Op("a", "Const", {}, 0), Op("b", "Neg", {"a"}, 1), Op("c", "Neg", {"b"}, 0),
                 Op("d", "NoOp", {"^a"}, 1)};
  auto session = NewSession(graph, 2, true, false);
  ASSERT_TRUE(session);
  RunOptions options = WithTimeout();
  options.trace = true;
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"c"}, {"d"}, &out, options, &metadata).ok());
  nlohmann::json trace = nlohmann::json::parse(metadata.ChromeTrace());

  std::map<int, std::string> process_names;
  std::set<std::pair<int, int>> named_threads;
  struct Slice {
    std::string name, op;
    int pid, tid;
    int64_t begin, end;
  };
  std::vector<Slice> slices;
  std::map<int64_t, nlohmann::json> flow_starts, flow_ends;
  for (const auto& event : trace["traceEvents"]) {
    const std::string ph = event["ph"];
    if (ph == "M" && event["name"] == "process_name") {
      EXPECT_TRUE(process_names.emplace(event["pid"].get<int>(), event["args"]["name"]).second);
    } else if (ph == "M" && event["name"] == "thread_name") {
      named_threads.insert({event["pid"].get<int>(), event["tid"].get<int>()});
    } else if (ph == "X") {
      int64_t ts = event["ts"];
      slices.push_back({event["name"].get<std::string>(), event["cat"].get<std::string>(),
                        event["pid"].get<int>(), event["tid"].get<int>(), ts,
                        ts + event["dur"].get<int64_t>()});
    } else if (ph == "s") {
      EXPECT_TRUE(flow_starts.emplace(event["id"].get<int64_t>(), event).second);
    } else if (ph == "f") {
      EXPECT_EQ(event["bp"], "e");
      EXPECT_TRUE(flow_ends.emplace(event["id"].get<int64_t>(), event).second);
    }
  }
  // One process per device, named by the device.
  ASSERT_EQ(process_names.size(), 2u);
  std::map<std::string, int> pid_of;
  for (const auto& [pid, name] : process_names) pid_of[name] = pid;
  ASSERT_TRUE(pid_of.count(CpuName(0)) && pid_of.count(CpuName(1)));
  std::map<std::string, int> device_of_node;
  for (const NodeExecStats& node : metadata.step_stats.nodes) {
    device_of_node[node.node_name] = pid_of.at(node.device);
  }
  int sends = 0;
  for (const Slice& s : slices) {
    EXPECT_EQ(s.pid, device_of_node.at(s.name)) << s.name;
    EXPECT_TRUE(named_threads.count({s.pid, s.tid})) << s.name;
    sends += s.op == "_Send";
  }
  EXPECT_EQ(device_of_node.at("a"), pid_of.at(CpuName(0)));
  EXPECT_EQ(device_of_node.at("b"), pid_of.at(CpuName(1)));
  // Flows: one per transfer, each start inside a _Send slice and each end
  // inside a _Recv slice of another device, ids matched.
  EXPECT_EQ(sends, 3);
  ASSERT_EQ(flow_starts.size(), 3u);
  ASSERT_EQ(flow_ends.size(), 3u);
  // Transfers on one thread can share a microsecond, so the enclosing slice
  // is also matched by the transfer's name (the flow's name).
  auto enclosing = [&](const nlohmann::json& event) -> const Slice* {
    const std::string pair = event["name"];
    for (const Slice& s : slices) {
      int64_t ts = event["ts"];
      if (s.pid == event["pid"].get<int>() && s.tid == event["tid"].get<int>() && s.begin <= ts &&
          ts <= s.end && (s.op == "_Send" || s.op == "_Recv") && s.name.size() > 6 &&
          s.name.substr(6) == pair) {
        return &s;
      }
    }
    return nullptr;
  };
  for (const auto& [id, start] : flow_starts) {
    ASSERT_TRUE(flow_ends.count(id)) << id;
    const nlohmann::json& end = flow_ends.at(id);
    EXPECT_EQ(start["name"], end["name"]);
    const Slice* send = enclosing(start);
    const Slice* recv = enclosing(end);
    ASSERT_TRUE(send != nullptr && recv != nullptr) << start << " " << end;
    EXPECT_EQ(send->op, "_Send");
    EXPECT_EQ(recv->op, "_Recv");
    EXPECT_NE(send->pid, recv->pid);
    EXPECT_EQ(send->name.substr(6), recv->name.substr(6));  // past "_send/", "_recv/"
  }
}

}  // namespace
}  // namespace weir
