// Step statistics from another process (issue 16): the bytes of a
// proto/step_stats.proto StepStats, as a worker answers a traced RunGraph
// (and a master a traced RunStep), into StepStatsFromWire, and what it
// accepts into the Chrome trace a client writes (RunMetadata::ChromeTrace).
//
// Invariants beyond "no crash, no sanitizer report, no hang":
// - accepted: one NodeExecStats per node on the wire, each with the
//   wire's names, start, allocation and frame, end >= start and a
//   non-negative thread id; StepStatsToProto and StepStatsFromWire again
//   give the same nodes (devices grouped); the trace is valid JSON with one
//   complete ("X") event per node;
// - cut (past the limits, small here): a prefix of the wire's nodes within
//   them, then one node of op kStepStatsTruncatedOp that counts the rest;
// - refused: InvalidArgument naming the caller's context, nothing else.
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "proto/step_stats.pb.h"
#include "tests/fuzz/fuzz_support.h"
#include "weir/distributed/step_stats_wire.h"
#include "weir/runtime/session.h"

namespace weir::fuzz {

int MaxAllocationMb() { return 256; }

namespace {

auto Key(const NodeExecStats& n) {
  return std::tie(n.device, n.node_name, n.op, n.thread_id, n.start_micros, n.end_micros,
                  n.bytes_allocated, n.frame_name, n.iteration);
}

std::vector<NodeExecStats> Sorted(std::vector<NodeExecStats> nodes) {
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const NodeExecStats& a, const NodeExecStats& b) { return Key(a) < Key(b); });
  return nodes;
}

void Fuzz(const uint8_t* data, size_t size) {
  wire::StepStats proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return;
  StepStats stats;
  // Small limits, so that inputs reach the cut (the defaults keep 1 << 20
  // nodes and 256 MiB).
  StepStatsWireLimits limits;
  limits.max_nodes = 64;
  limits.max_bytes = 64 << 10;
  const Status status = StepStatsFromWire(proto, "fuzzed task", &stats, limits);
  if (!status.ok()) {
    Require(status.code() == Code::kInvalidArgument, "StepStatsFromWire refused with a bad code");
    Require(status.message().find("fuzzed task") != std::string::npos,
            "StepStatsFromWire's error does not name its context");
    return;
  }
  size_t wire_nodes = 0;
  for (const wire::DeviceStepStats& device : proto.dev_stats())
    wire_nodes += device.node_stats_size();
  // Cut: a prefix of the wire's nodes within the limits, then one note
  // saying how many more there were.
  const bool cut =
      !stats.nodes.empty() && stats.nodes.back().op == kStepStatsTruncatedOp &&
      stats.nodes.size() <= wire_nodes &&
      stats.nodes.back().node_name.find(" more nodes of fuzzed task not kept") != std::string::npos;
  const size_t kept = cut ? stats.nodes.size() - 1 : stats.nodes.size();
  Require(kept <= static_cast<size_t>(limits.max_nodes), "StepStatsFromWire kept too many nodes");
  int64_t kept_bytes = 0;
  for (size_t i = 0; i < kept; ++i) {
    const NodeExecStats& n = stats.nodes[i];
    kept_bytes += static_cast<int64_t>(sizeof(NodeExecStats) + n.node_name.size() + n.op.size() +
                                       n.device.size() + n.frame_name.size());
  }
  Require(kept_bytes <= limits.max_bytes, "StepStatsFromWire kept too many bytes");
  if (cut) {
    Require(stats.nodes.back().node_name.find(StrCat("(", wire_nodes - kept, " more nodes")) == 0,
            "StepStatsFromWire's note miscounts the nodes it dropped");
  }
  size_t k = 0;
  for (const wire::DeviceStepStats& device : proto.dev_stats()) {
    for (const wire::NodeExecStats& node : device.node_stats()) {
      if (cut && k == kept) break;
      Require(k < stats.nodes.size(), "StepStatsFromWire dropped nodes");
      const NodeExecStats& got = stats.nodes[k++];
      Require(got.device == device.device() && got.node_name == node.node_name() &&
                  got.op == node.op() && got.frame_name == node.frame_name(),
              "StepStatsFromWire changed a name");
      Require(got.start_micros == node.all_start_micros() && got.end_micros >= got.start_micros &&
                  got.bytes_allocated == node.bytes_allocated() &&
                  got.iteration == node.iteration() && got.thread_id >= 0,
              "StepStatsFromWire changed a number");
    }
  }
  Require(k == kept, "StepStatsFromWire added nodes");

  wire::StepStats again;
  StepStatsToProto(stats, &again);
  StepStats back;
  Require(StepStatsFromWire(again, "round trip", &back).ok(),
          "StepStatsFromWire refused what StepStatsToProto wrote");
  const std::vector<NodeExecStats> a = Sorted(stats.nodes), b = Sorted(back.nodes);
  Require(a.size() == b.size(), "the round trip changed the number of nodes");
  for (size_t i = 0; i < a.size(); ++i) {
    Require(Key(a[i]) == Key(b[i]), "the round trip changed a node");
  }

  RunMetadata metadata;
  metadata.step_stats = std::move(stats);
  const std::string trace = metadata.ChromeTrace();
  const nlohmann::json parsed = nlohmann::json::parse(trace, nullptr, /*allow_exceptions=*/false);
  Require(!parsed.is_discarded(), "ChromeTrace wrote invalid JSON");
  size_t complete = 0;
  for (const auto& event : parsed["traceEvents"]) complete += event["ph"] == "X";
  Require(complete == metadata.step_stats.nodes.size(), "ChromeTrace lost a node's event");
}

}  // namespace
}  // namespace weir::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weir::fuzz::InitOnce();
  weir::fuzz::Fuzz(data, size);
  return 0;
}
