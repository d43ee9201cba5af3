#include "weir/distributed/step_stats_wire.h"

#include <map>

#include "weir/base/checked_math.h"

namespace weir {

void StepStatsToProto(const StepStats& stats, wire::StepStats* proto) {
  std::map<std::string_view, wire::DeviceStepStats*> by_device;
  for (const NodeExecStats& node : stats.nodes) {
    wire::DeviceStepStats*& device = by_device[node.device];
    if (device == nullptr) {
      device = proto->add_dev_stats();
      device->set_device(node.device);
    }
    wire::NodeExecStats* out = device->add_node_stats();
    out->set_node_name(node.node_name);
    out->set_all_start_micros(node.start_micros);
    out->set_all_end_rel_micros(node.end_micros - node.start_micros);
    out->set_timeline_label(StrCat(node.node_name, " = ", node.op, "()"));
    out->set_thread_id(static_cast<uint32_t>(node.thread_id));
    out->set_op(node.op);
    out->set_bytes_allocated(node.bytes_allocated);
    out->set_frame_name(node.frame_name);
    out->set_iteration(node.iteration);
  }
}

Status StepStatsFromWire(const wire::StepStats& proto, std::string_view what, StepStats* out) {
  for (const wire::DeviceStepStats& device : proto.dev_stats()) {
    for (const wire::NodeExecStats& node : device.node_stats()) {
      NodeExecStats stats;
      stats.node_name = node.node_name();
      stats.op = node.op();
      stats.device = device.device();
      // Thread ids are small on the sender; keep them non-negative here.
      stats.thread_id = static_cast<int>(node.thread_id() & 0x7fffffff);
      stats.start_micros = node.all_start_micros();
      const std::string context =
          StrCat(what, ": step statistics of node '", node.node_name().substr(0, 256),
                 "' on device '", device.device().substr(0, 256), "'");
      if (node.all_end_rel_micros() < 0) {
        return errors::InvalidArgument(context, " have a negative duration (",
                                       node.all_end_rel_micros(), " us)");
      }
      WEIR_RETURN_IF_ERROR(CheckedAdd(node.all_start_micros(), node.all_end_rel_micros(),
                                      &stats.end_micros, context));
      stats.bytes_allocated = node.bytes_allocated();
      stats.frame_name = node.frame_name();
      stats.iteration = node.iteration();
      out->nodes.push_back(std::move(stats));
    }
  }
  return Status::OK();
}

}  // namespace weir
