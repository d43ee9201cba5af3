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

Status StepStatsFromWire(const wire::StepStats& proto, std::string_view what, StepStats* out,
                         const StepStatsWireLimits& limits) {
  int64_t kept = 0;
  int64_t bytes = 0;
  for (int d = 0; d < proto.dev_stats_size(); ++d) {
    const wire::DeviceStepStats& device = proto.dev_stats(d);
    for (int k = 0; k < device.node_stats_size(); ++k) {
      const wire::NodeExecStats& node = device.node_stats(k);
      const int64_t node_bytes =
          static_cast<int64_t>(sizeof(NodeExecStats) + node.node_name().size() + node.op().size() +
                               device.device().size() + node.frame_name().size());
      if (kept >= limits.max_nodes || node_bytes > limits.max_bytes - bytes) {
        // Counted, not read: the rest of this device and the devices after.
        int64_t dropped = device.node_stats_size() - k;
        for (int rest = d + 1; rest < proto.dev_stats_size(); ++rest) {
          dropped += proto.dev_stats(rest).node_stats_size();
        }
        NodeExecStats note;
        note.node_name = StrCat("(", dropped, " more nodes of ", what,
                                " not kept: one answer's step statistics keep at most ",
                                limits.max_nodes, " nodes and ", limits.max_bytes, " bytes)");
        note.op = std::string(kStepStatsTruncatedOp);
        note.device = device.device().substr(0, 256);
        if (!out->nodes.empty() && kept > 0) {
          note.start_micros = note.end_micros = out->nodes.back().end_micros;
        }
        out->nodes.push_back(std::move(note));
        return Status::OK();
      }
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
      ++kept;
      bytes += node_bytes;
    }
  }
  return Status::OK();
}

}  // namespace weir
