#include "weir/graph/cost_model.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "weir/framework/device_name.h"

namespace weir {
namespace {

enum class Family {
  kFree,          // metadata or aliasing: no work
  kMatMul,
  kBatchMatMul,
  kConv2D,
  kFusedConv2D,
  kConv2DBackpropInput,
  kConv2DBackpropFilter,
  kPool,          // per output element, the window
  kPoolGrad,      // per gradient element, the window
  kElementwise,   // 1 flop per output element
  kTranscendental,  // a few flops per output element
  kReduction,     // 1 flop per input element
  kSoftmax,
  kSoftmaxCrossEntropy,
  kBatchNorm,
  kBatchNormGrad,
  kAddN,
  kMoveBytes,     // copies, gathers, unknown ops: bytes only
};

const std::unordered_map<std::string_view, Family>& Families() {
  static const auto* families = [] {
    auto* map = new std::unordered_map<std::string_view, Family>;
    for (const char* op : {"Const",
                           "Placeholder",
                           "_Arg",
                           "_Retval",
                           "NoOp",
                           "Identity",
                           "IdentityN",
                           "StopGradient",
                           "PreventGradient",
                           "Reshape",
                           "ExpandDims",
                           "Squeeze",
                           "Shape",
                           "ShapeN",
                           "Size",
                           "Rank",
                           "VarHandleOp",
                           "ReadVariableOp",
                           "VarIsInitializedOp",
                           "DestroyResourceOp",
                           "BroadcastGradientArgs",
                           "BroadcastArgs",
                           "_Send",
                           "_Recv"}) {
      (*map)[op] = Family::kFree;
    }
    (*map)["MatMul"] = Family::kMatMul;
    (*map)["BatchMatMul"] = Family::kBatchMatMul;
    (*map)["BatchMatMulV2"] = Family::kBatchMatMul;
    (*map)["Conv2D"] = Family::kConv2D;
    (*map)["_FusedConv2D"] = Family::kFusedConv2D;
    (*map)["Conv2DBackpropInput"] = Family::kConv2DBackpropInput;
    (*map)["Conv2DBackpropFilter"] = Family::kConv2DBackpropFilter;
    for (const char* op : {"MaxPool", "AvgPool"}) (*map)[op] = Family::kPool;
    for (const char* op : {"MaxPoolGrad", "AvgPoolGrad", "_FusedMaxPoolGrad"}) {
      (*map)[op] = Family::kPoolGrad;
    }
    for (const char* op : {"Add",
                           "AddV2",
                           "Sub",
                           "Mul",
                           "RealDiv",
                           "Div",
                           "FloorDiv",
                           "FloorMod",
                           "Maximum",
                           "Minimum",
                           "SquaredDifference",
                           "Neg",
                           "Abs",
                           "Sign",
                           "Square",
                           "Reciprocal",
                           "Floor",
                           "Ceil",
                           "Round",
                           "IsNan",
                           "IsInf",
                           "IsFinite",
                           "Relu",
                           "Relu6",
                           "ReluGrad",
                           "Relu6Grad",
                           "Less",
                           "LessEqual",
                           "Greater",
                           "GreaterEqual",
                           "Equal",
                           "NotEqual",
                           "LogicalAnd",
                           "LogicalOr",
                           "LogicalNot",
                           "Select",
                           "SelectV2",
                           "Cast",
                           "BiasAdd",
                           "ZerosLike",
                           "OnesLike",
                           "Fill",
                           "ReciprocalGrad",
                           "SqrtGrad",
                           "RsqrtGrad",
                           "SigmoidGrad",
                           "TanhGrad",
                           "EluGrad",
                           "SeluGrad",
                           "SoftplusGrad"}) {
      (*map)[op] = Family::kElementwise;
    }
    for (const char* op : {"Exp", "Expm1", "Log", "Log1p", "Sqrt", "Rsqrt", "Sin", "Cos", "Tanh",
                           "Sigmoid", "Erf", "Pow", "Elu", "Selu", "Softplus"}) {
      (*map)[op] = Family::kTranscendental;
    }
    for (const char* op : {"Sum", "Mean", "Prod", "Max", "Min", "All", "Any", "ArgMax", "ArgMin",
                           "L2Loss", "BiasAddGrad"}) {
      (*map)[op] = Family::kReduction;
    }
    for (const char* op : {"Softmax", "LogSoftmax"}) (*map)[op] = Family::kSoftmax;
    for (const char* op :
         {"SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits"}) {
      (*map)[op] = Family::kSoftmaxCrossEntropy;
    }
    (*map)["FusedBatchNormV3"] = Family::kBatchNorm;
    (*map)["FusedBatchNormGradV3"] = Family::kBatchNormGrad;
    (*map)["AddN"] = Family::kAddN;
    return map;
  }();
  return *families;
}

double Saturate(double x) {
  if (!(x < CostModel::kMaxCost)) return CostModel::kMaxCost;  // also NaN
  return x;
}

double Elements(const PartialShape& shape) {
  const double unknown = static_cast<double>(CostModel::kUnknownDim);
  if (!shape.known_rank()) return unknown * unknown;
  double n = 1;
  for (int64_t d : shape.dim_sizes()) n = Saturate(n * (d < 0 ? unknown : static_cast<double>(d)));
  return n;
}

// Dim `i` (negative counts from the end); kUnknownDim when not known.
double Dim(const PartialShape& shape, int i) {
  if (!shape.known_rank()) return CostModel::kUnknownDim;
  if (i < 0) i += shape.rank();
  if (i < 0 || i >= shape.rank() || shape.dim(i) < 0) return CostModel::kUnknownDim;
  return static_cast<double>(shape.dim(i));
}

double ElementBytes(DType dtype) {
  if (dtype == DT_STRING) return 16;  // a guess: strings are small or rare in hot paths
  return static_cast<double>(DTypeSize(dtype));
}

const PartialShape& InputShape(const Node& node, int i) {
  static const PartialShape* unknown = new PartialShape();
  const Edge* edge = i < node.num_inputs() ? node.input_edge(i) : nullptr;
  if (edge == nullptr) return *unknown;
  return edge->src()->output_shape(edge->src_output());
}

bool BoolAttr(const Node& node, const char* name) {
  auto it = node.def().attrs.find(name);
  return it != node.def().attrs.end() && it->second.is_b() && it->second.b();
}

// Product of an int-list attr (a pooling window), 1 when absent.
double ListProduct(const Node& node, const char* name) {
  auto it = node.def().attrs.find(name);
  if (it == node.def().attrs.end() || !it->second.is_list()) return 1;
  double p = 1;
  for (int64_t v : it->second.list().i)
    p = Saturate(p * static_cast<double>(std::max<int64_t>(v, 1)));
  return p;
}

// The filter's Kh * Kw * Cin (HWIO).
double FilterWindow(const PartialShape& filter) {
  return Saturate(Dim(filter, 0) * Dim(filter, 1) * Dim(filter, 2));
}

double OutputElements(const Node& node) {
  double n = 0;
  for (int i = 0; i < node.num_outputs(); ++i) n = Saturate(n + Elements(node.output_shape(i)));
  return n;
}

}  // namespace

double CostModel::OutputBytes(const Node& node, int index) {
  return Saturate(Elements(node.output_shape(index)) * ElementBytes(node.output_type(index)));
}

OpCost CostModel::EstimateOp(const Node& node) {
  const auto& families = Families();
  auto it = families.find(node.type_string());
  Family family = Family::kMoveBytes;
  if (it != families.end()) family = it->second;
  else if (node.type_string().starts_with("_Fused")) family = Family::kElementwise;
  OpCost cost;
  if (family == Family::kFree) return cost;
  for (int i = 0; i < node.num_inputs(); ++i) {
    cost.bytes =
        Saturate(cost.bytes + Elements(InputShape(node, i)) * ElementBytes(node.input_type(i)));
  }
  for (int i = 0; i < node.num_outputs(); ++i)
    cost.bytes = Saturate(cost.bytes + OutputBytes(node, i));

  const double out = node.num_outputs() > 0 ? Elements(node.output_shape(0)) : 0;
  switch (family) {
    case Family::kMatMul: {
      double k =
          BoolAttr(node, "transpose_a") ? Dim(InputShape(node, 0), 0) : Dim(InputShape(node, 0), 1);
      cost.flops = 2 * out * k;
      break;
    }
    case Family::kBatchMatMul: {
      double k =
          BoolAttr(node, "adj_x") ? Dim(InputShape(node, 0), -2) : Dim(InputShape(node, 0), -1);
      cost.flops = 2 * out * k;
      break;
    }
    case Family::kConv2D: cost.flops = 2 * out * FilterWindow(InputShape(node, 1)); break;
    case Family::kFusedConv2D: {
      auto fused = node.def().attrs.find("fused_ops");
      double epilogue = fused != node.def().attrs.end() && fused->second.is_list()
                            ? static_cast<double>(fused->second.list().s.size())
                            : 1;
      cost.flops = 2 * out * FilterWindow(InputShape(node, 1)) + epilogue * out;
      break;
    }
    case Family::kConv2DBackpropInput:  // (input_sizes, filter, out_backprop)
    case Family::kConv2DBackpropFilter:  // (input, filter_sizes, out_backprop)
    {
      const PartialShape& filter =
          family == Family::kConv2DBackpropInput ? InputShape(node, 1) : node.output_shape(0);
      cost.flops = 2 * Elements(InputShape(node, 2)) * FilterWindow(filter);
      break;
    }
    case Family::kPool: cost.flops = out * ListProduct(node, "ksize"); break;
    case Family::kPoolGrad:
      cost.flops = Elements(InputShape(node, node.num_inputs() - 1)) * ListProduct(node, "ksize");
      break;
    case Family::kElementwise: cost.flops = OutputElements(node); break;
    case Family::kTranscendental: cost.flops = 8 * out; break;
    case Family::kReduction: cost.flops = Elements(InputShape(node, 0)); break;
    case Family::kSoftmax: cost.flops = 5 * out; break;
    case Family::kSoftmaxCrossEntropy: cost.flops = 8 * Elements(InputShape(node, 0)); break;
    case Family::kBatchNorm: cost.flops = 10 * out; break;
    case Family::kBatchNormGrad: cost.flops = 15 * out; break;
    case Family::kAddN: cost.flops = std::max(0, node.num_inputs() - 1) * out; break;
    case Family::kFree:
    case Family::kMoveBytes: break;
  }
  cost.flops = Saturate(cost.flops);
  return cost;
}

DeviceModel CostModel::ModelFor(const DeviceInfo& device) const {
  int threads = std::max(1, device.threads);
  DeviceModel model;
  model.peak_flops = device.peak_flops > 0 ? device.peak_flops : kCpuFlopsPerThread * threads;
  model.memory_bytes_per_second = device.memory_bytes_per_second > 0
                                      ? device.memory_bytes_per_second
                                      : kCpuBytesPerSecondPerThread * std::min(threads, 4);
  model.overhead_micros = kCpuOverheadMicros;
  return model;
}

double CostModel::ComputeMicros(const OpCost& cost, const DeviceModel& model) {
  double seconds =
      std::max(cost.flops / model.peak_flops, cost.bytes / model.memory_bytes_per_second);
  return Saturate(model.overhead_micros + seconds * 1e6);
}

void CostModel::SetLink(const std::string& from, const std::string& to, LinkModel link) {
  links_[{from, to}] = link;
}

LinkModel CostModel::Link(const std::string& from, const std::string& to) const {
  auto it = links_.find({from, to});
  return it == links_.end() ? default_link_ : it->second;
}

double CostModel::TransferMicros(const LinkModel& link, double bytes) {
  return Saturate(link.latency_micros + bytes / link.bytes_per_second * 1e6);
}

double CostModel::TransferMicros(const std::string& from, const std::string& to,
                                 double bytes) const {
  if (from == to) return 0;
  return TransferMicros(Link(from, to), bytes);
}

void CostModel::RecordMeasurement(const std::string& node_name, const std::string& device_name,
                                  double micros) {
  if (!(micros >= 0)) return;  // a clock glitch or NaN says nothing
  std::string type;
  StatusOr<DeviceName> parsed = DeviceName::Parse(device_name);
  if (parsed.ok() && parsed->has_type) type = parsed->type;
  std::unique_lock lock(mu_);
  std::vector<Measurement>& list = measurements_[node_name];
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const Measurement& m) { return m.device == device_name; });
  if (it == list.end()) {
    list.push_back({device_name, type, 0, 0});
    it = list.end() - 1;
  }
  it->total_micros = Saturate(it->total_micros + micros);
  ++it->count;
  has_measurements_.store(true, std::memory_order_release);
}

double CostModel::MeasuredMicros(std::string_view node_name, const DeviceInfo& device) const {
  if (!has_measurements()) return -1;
  std::shared_lock lock(mu_);
  auto it = measurements_.find(node_name);
  if (it == measurements_.end()) return -1;
  double same_type_total = 0;
  int64_t same_type_count = 0;
  for (const Measurement& m : it->second) {
    if (m.device == device.name) return m.total_micros / static_cast<double>(m.count);
    if (m.device_type == device.type) {
      same_type_total += m.total_micros;
      same_type_count += m.count;
    }
  }
  if (same_type_count == 0) return -1;
  return same_type_total / static_cast<double>(same_type_count);
}

double CostModel::NodeMicros(const Node& node, const DeviceInfo& device) const {
  double measured = MeasuredMicros(node.name(), device);
  if (measured >= 0) return measured;
  return ComputeMicros(EstimateOp(node), ModelFor(device));
}

}  // namespace weir
