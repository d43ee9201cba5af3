// Step statistics on the distributed runtime's wire (proto/step_stats.proto).
// Internal to the layer's .cc files that speak gRPC (it names generated
// protobuf types), like wire_tensor.h.
#pragma once

#include <cstdint>
#include <string_view>

#include "proto/step_stats.pb.h"
#include "weir/base/status.h"
#include "weir/framework/step_stats.h"

namespace weir {

// Appends `stats` to `proto`, one DeviceStepStats per device in the order
// the devices first appear.
void StepStatsToProto(const StepStats& stats, wire::StepStats* proto);

// How much of one answer's StepStats StepStatsFromWire keeps. A node costs
// two bytes on the wire and about 170 here (and each copies its device's
// name), so a hostile or huge answer is cut, not trusted.
struct StepStatsWireLimits {
  int64_t max_nodes = int64_t{1} << 20;
  // The nodes' memory here: sizeof(NodeExecStats) and their strings.
  int64_t max_bytes = int64_t{256} << 20;
};

// The op of the node that StepStatsFromWire appends in place of the nodes
// it dropped (its name says how many, whose, and the limits).
inline constexpr std::string_view kStepStatsTruncatedOp = "_StepStatsTruncated";

// Appends the nodes of a StepStats from another process to `out`. Refused
// (InvalidArgument naming `what`, the device and the node) when a node has a
// negative duration or an end past the int64 range. Past `limits` the rest
// is dropped, unread: one last node of op kStepStatsTruncatedOp, on the
// device where the cut fell, says so (a trace shows it; the step is fine).
Status StepStatsFromWire(const wire::StepStats& proto, std::string_view what, StepStats* out,
                         const StepStatsWireLimits& limits = StepStatsWireLimits());

}  // namespace weir
