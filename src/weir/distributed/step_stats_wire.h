// Step statistics on the distributed runtime's wire (proto/step_stats.proto).
// Internal to the layer's .cc files that speak gRPC (it names generated
// protobuf types), like wire_tensor.h.
#pragma once

#include <string_view>

#include "proto/step_stats.pb.h"
#include "weir/base/status.h"
#include "weir/framework/step_stats.h"

namespace weir {

// Appends `stats` to `proto`, one DeviceStepStats per device in the order
// the devices first appear.
void StepStatsToProto(const StepStats& stats, wire::StepStats* proto);

// Appends the nodes of a StepStats from another process to `out`. Refused
// (InvalidArgument naming `what`, the device and the node) when a node has a
// negative duration or an end past the int64 range.
Status StepStatsFromWire(const wire::StepStats& proto, std::string_view what, StepStats* out);

}  // namespace weir
