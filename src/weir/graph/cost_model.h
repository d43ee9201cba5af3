// The placement cost model: how long a node takes on a device, and how long a
// tensor takes to cross between two devices (white paper §3.2.1).
//
//   node time  = overhead + max(flops / peak FLOP/s, bytes / memory bandwidth)
//   transfer   = 0 on the same device, else latency + bytes / link bandwidth
//
// Flops and bytes come from the node's inferred shapes, by op family (MatMul
// 2mnk, Conv2D and its backprops, elementwise, reductions, softmax, fused
// ops; data movement costs nothing; unknown ops cost the bytes they move).
// A dim that is not known counts as kUnknownDim; an unknown rank as a
// kUnknownDim x kUnknownDim matrix. All arithmetic is in double and
// saturates at kMaxCost, so no shape overflows it.
//
// A time measured in an earlier step (RecordMeasurement, thread-safe)
// replaces the estimate for that node: the mean of its measurements on that
// device, else on other devices of the same type, else the estimate.
#pragma once

#include <atomic>
#include <map>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "weir/graph/graph.h"

namespace weir {

// A device as placement sees it: its name and, optionally, its speed.
struct DeviceInfo {
  std::string name;  // full name
  std::string type;  // "CPU"
  int threads = 1;   // intra-op threads
  double peak_flops = 0;              // FLOP/s; 0: the default for `type` and `threads`
  double memory_bytes_per_second = 0;  // 0: the default for `type` and `threads`
};

// The speed of one device, resolved from a DeviceInfo.
struct DeviceModel {
  double peak_flops = 0;
  double memory_bytes_per_second = 0;
  double overhead_micros = 0;  // per node: dispatch, allocation
};

// A link between two devices.
struct LinkModel {
  double latency_micros = 0;
  double bytes_per_second = 0;
};

// What a node does, independent of where it runs.
struct OpCost {
  double flops = 0;
  double bytes = 0;  // read + written
};

class CostModel {
 public:
  static constexpr int64_t kUnknownDim = 32;
  static constexpr double kMaxCost = 1e30;
  // CPU defaults, per intra-op thread: one AVX-512 core of the machine in
  // docs/performance.md runs a 1024-wide GEMM at ~250 GFLOP/s, an AVX2 core
  // at ~50-100; streaming ~8 GB/s per thread, capped at 4 threads.
  static constexpr double kCpuFlopsPerThread = 100e9;
  static constexpr double kCpuBytesPerSecondPerThread = 8e9;
  static constexpr double kCpuOverheadMicros = 1.0;
  // Between two devices of one process: a rendezvous hand-off and a copy.
  static constexpr LinkModel kDefaultLink = {5.0, 10e9};

  CostModel() = default;
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Flops and bytes of `node` from its inferred input and output shapes.
  static OpCost EstimateOp(const Node& node);
  // Bytes of output `index` of `node` (unknown dims as above).
  static double OutputBytes(const Node& node, int index);

  // The device's model: its own fields where set, else the defaults.
  DeviceModel ModelFor(const DeviceInfo& device) const;
  // Micros to run `cost` on a device of `model`.
  static double ComputeMicros(const OpCost& cost, const DeviceModel& model);

  // The link used between `from` and `to` (names), default unless set.
  void SetLink(const std::string& from, const std::string& to, LinkModel link);
  void SetDefaultLink(LinkModel link) { default_link_ = link; }
  LinkModel Link(const std::string& from, const std::string& to) const;
  // 0 when from == to.
  double TransferMicros(const std::string& from, const std::string& to, double bytes) const;
  static double TransferMicros(const LinkModel& link, double bytes);

  // Thread-safe. Times measured for `node_name` on `device_name`.
  void RecordMeasurement(const std::string& node_name, const std::string& device_name,
                         double micros);
  bool has_measurements() const { return has_measurements_.load(std::memory_order_acquire); }
  // The measured mean for the node on the device (or on a device of the
  // same type), or a negative number when none was recorded.
  double MeasuredMicros(std::string_view node_name, const DeviceInfo& device) const;
  // Measured if recorded, else estimated.
  double NodeMicros(const Node& node, const DeviceInfo& device) const;

 private:
  struct Measurement {
    std::string device;
    std::string device_type;
    double total_micros = 0;
    int64_t count = 0;
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>()(name); }
  };

  LinkModel default_link_ = kDefaultLink;
  std::map<std::pair<std::string, std::string>, LinkModel> links_;
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::vector<Measurement>, NameHash, std::equal_to<>>
      measurements_;
  std::atomic<bool> has_measurements_{false};
};

}  // namespace weir
