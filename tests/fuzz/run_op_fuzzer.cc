// Runs one op of the registry on fuzzed attrs and inputs in a Session.
//
// The input starts with the op's name and a '\0' (any other string picks
// the first op sorted at or after it), so that saved inputs keep naming the
// same op as ops are added. The bytes after it choose, in order: each attr
// (type attrs first, since input dtypes follow them; a default may be kept),
// then for every input tensor how it enters the graph (Const, or a fed
// Placeholder with or without a shape), its shape and its values. Resource
// inputs are variables (VarHandleOp, optionally assigned a fuzzed value
// first).
//
// Each run stays cheap: at most kMaxInputs input tensors of kMaxElements
// elements in all. Scalars are not bounded: extreme values in shape-like
// inputs and int attrs are the point. An op may still ask for a huge output;
// past 128 MiB (MaxAllocationMb) it must fail cleanly (ResourceExhausted from
// the allocator, or InvalidArgument), never crash. A successful run's outputs
// must match the shapes and dtypes the op's shape function promised at import.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_support.h"
#include "weir/framework/op_def.h"
#include "weir/framework/resource_handle.h"
#include "weir/graph/graph.h"
#include "weir/graph/graph_constructor.h"
#include "weir/runtime/session.h"

namespace weir::fuzz {
namespace {

constexpr int kMaxInputs = 16;  // LSTMBlockCellGrad has 16
constexpr int64_t kMaxElements = 4096;
constexpr int kMaxRank = 5;
constexpr int64_t kRunTimeoutMs = 5000;

}  // namespace

// 128 MiB: an output that size (16M random doubles) still takes seconds
// under ASan; what asks for more must fail cleanly. It must exceed what a
// node with kMaxCountAttr (2^20) outputs legitimately costs the executor (a
// Tensor per output: 112 MiB).
int MaxAllocationMb() { return 128; }

namespace {

// Ops left out, each with why. Everything else in the registry is fuzzed.
const std::map<std::string, std::string>& ExcludedOps() {
  static const auto* excluded = new std::map<std::string, std::string>{
      {"SaveV2", "writes files at paths the fuzzer chooses"},
      {"MergeV2Checkpoints", "renames and deletes files at paths the fuzzer chooses"},
      {"RestoreV2",
       "reads files at paths the fuzzer chooses (/dev/zero never ends); "
       "checkpoint_fuzzer covers the reader"},
      {"_Recv", "waits for a _Send that never comes (and user graphs may not hold it)"},
      {"WriteFile", "writes files at paths the fuzzer chooses"},
      {"ReadFile", "reads files at paths the fuzzer chooses (/dev/zero never ends)"},
      {"MatchingFiles", "globs the file system at patterns the fuzzer chooses"},
      {"InitializeTableFromTextFileV2",
       "reads files at paths the fuzzer chooses (/dev/zero never ends)"},
  };
  return *excluded;
}

struct OpTable {
  std::vector<const OpDef*> ops;  // sorted by name
  std::map<std::string, const OpDef*, std::less<>> by_name;
};

const OpTable& Ops() {
  static const OpTable* table = [] {
    InitOnce();
    auto* t = new OpTable;
    for (const OpDef* op : OpRegistry::Global()->ListOps()) {
      if (ExcludedOps().count(op->name)) continue;
      t->ops.push_back(op);
      t->by_name[op->name] = op;
    }
    std::sort(t->ops.begin(), t->ops.end(),
              [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
    return t;
  }();
  return *table;
}

const std::vector<DType>& AllDTypes() {
  static const auto* all = new std::vector<DType>{
      DT_FLOAT, DT_INT32,      DT_INT64,  DT_DOUBLE, DT_BOOL,   DT_UINT8,  DT_INT8,
      DT_INT16, DT_UINT16,     DT_UINT32, DT_UINT64, DT_HALF,   DT_BFLOAT16,
      DT_STRING, DT_COMPLEX64, DT_COMPLEX128, DT_RESOURCE};
  return *all;
}

DType PickDType(FuzzInput& in, const std::vector<DType>& allowed) {
  return in.Pick(allowed.empty() ? AllDTypes() : allowed);
}

PartialShape PickShape(FuzzInput& in) {
  const uint8_t kind = in.Byte();
  if (kind % 8 == 7) return PartialShape::UnknownRank();
  std::vector<int64_t> dims(kind % 8 % (kMaxRank + 1));
  for (int64_t& d : dims) d = in.Bool() ? -1 : in.InterestingInt();
  return PartialShape(std::move(dims));
}

// A list length: mostly 4 (strides, ksize), else 0 .. 7.
size_t PickListLength(FuzzInput& in) {
  const uint8_t b = in.Byte();
  return b < 128 ? 4 : b % 8;
}

std::string PickString(FuzzInput& in, const AttrDef& attr) {
  if (!attr.allowed_strings.empty() && in.Byte() < 240) return in.Pick(attr.allowed_strings);
  return in.String(16);
}

// Fills `tensor` (of a shape already bounded) with fuzzed values.
void FillValues(FuzzInput& in, Tensor* tensor) {
  const int64_t n = tensor->NumElements();
  auto fill = [&]<typename T>(auto&& make) {
    T* data = tensor->data<T>();
    for (int64_t i = 0; i < n; ++i) data[i] = make();
  };
  switch (tensor->dtype()) {
    case DT_FLOAT: fill.operator()<float>([&] { return static_cast<float>(in.InterestingDouble()); }); break;
    case DT_DOUBLE: fill.operator()<double>([&] { return in.InterestingDouble(); }); break;
    case DT_HALF:
      fill.operator()<Eigen::half>([&] { return Eigen::half(static_cast<float>(in.InterestingDouble())); });
      break;
    case DT_BFLOAT16:
      fill.operator()<Eigen::bfloat16>(
          [&] { return Eigen::bfloat16(static_cast<float>(in.InterestingDouble())); });
      break;
    case DT_COMPLEX64:
      fill.operator()<complex64>([&] {
        const float re = static_cast<float>(in.InterestingDouble());
        return complex64(re, static_cast<float>(in.InterestingDouble()));
      });
      break;
    case DT_COMPLEX128:
      fill.operator()<complex128>([&] {
        const double re = in.InterestingDouble();
        return complex128(re, in.InterestingDouble());
      });
      break;
    case DT_INT8: fill.operator()<int8_t>([&] { return static_cast<int8_t>(in.InterestingInt()); }); break;
    case DT_UINT8: fill.operator()<uint8_t>([&] { return static_cast<uint8_t>(in.InterestingInt()); }); break;
    case DT_INT16: fill.operator()<int16_t>([&] { return static_cast<int16_t>(in.InterestingInt()); }); break;
    case DT_UINT16: fill.operator()<uint16_t>([&] { return static_cast<uint16_t>(in.InterestingInt()); }); break;
    case DT_INT32: fill.operator()<int32_t>([&] { return static_cast<int32_t>(in.InterestingInt()); }); break;
    case DT_UINT32: fill.operator()<uint32_t>([&] { return static_cast<uint32_t>(in.InterestingInt()); }); break;
    case DT_INT64: fill.operator()<int64_t>([&] { return in.InterestingInt(); }); break;
    case DT_UINT64: fill.operator()<uint64_t>([&] { return static_cast<uint64_t>(in.InterestingInt()); }); break;
    case DT_BOOL: fill.operator()<bool>([&] { return in.Bool(); }); break;
    case DT_STRING: fill.operator()<std::string>([&] { return in.String(8); }); break;
    case DT_RESOURCE:
      fill.operator()<ResourceHandle>([&] {
        return ResourceHandle(in.String(8), in.String(4), in.String(4), in.String(8));
      });
      break;
    default: break;
  }
}

// Builds the single-op graph and the feeds for it.
class GraphBuilder {
 public:
  explicit GraphBuilder(FuzzInput& in) : in_(in) {}

  // A small tensor of `dtype`, shape and values fuzzed, within the budget.
  // Often the previous tensor's shape: elementwise and matrix ops want
  // matching operands.
  Tensor MakeTensor(DType dtype) {
    const uint8_t kind = in_.Byte();
    std::vector<int64_t> dims;
    if (kind >= 192 && last_dims_.has_value()) {
      dims = *last_dims_;
    } else {
      dims.resize(kind % (kMaxRank + 1));
      for (int64_t& d : dims) d = in_.Byte() % 8;
    }
    int64_t count = 1;
    for (int64_t& d : dims) {
      if (count * d > budget_) d = budget_ / std::max<int64_t>(count, 1) > 0 ? 1 : 0;
      count *= d;
    }
    budget_ -= count;
    last_dims_ = dims;
    Tensor tensor(dtype, TensorShape::FromDims(dims).value());
    FillValues(in_, &tensor);
    return tensor;
  }

  AttrValue MakeAttr(const AttrDef& attr, const AttrMap& chosen) {
    const std::string& type = attr.type;
    if (type == "type") return PickDType(in_, attr.allowed_types);
    if (type == "int") return in_.InterestingInt();
    if (type == "float") return static_cast<float>(in_.InterestingDouble());
    if (type == "bool") return in_.Bool();
    if (type == "string") return PickString(in_, attr);
    if (type == "shape") return PickShape(in_);
    if (type == "tensor") {
      DType dtype = DT_FLOAT;
      auto it = chosen.find("dtype");
      if (it != chosen.end() && it->second.is_type()) dtype = it->second.type();
      if (in_.Byte() >= 224) dtype = PickDType(in_, {});
      if (dtype == DT_RESOURCE || dtype == DT_INVALID) dtype = DT_FLOAT;
      return MakeTensor(dtype);
    }
    AttrValue value{AttrValue::List()};
    AttrValue::List* list = value.mutable_list();
    const size_t n = PickListLength(in_);
    for (size_t i = 0; i < n; ++i) {
      if (type == "list(int)") list->i.push_back(in_.InterestingInt());
      else if (type == "list(type)") list->type.push_back(PickDType(in_, attr.allowed_types));
      else if (type == "list(string)") list->s.push_back(PickString(in_, attr));
      else if (type == "list(float)") list->f.push_back(static_cast<float>(in_.InterestingDouble()));
      else if (type == "list(bool)") list->b.push_back(in_.Bool());
      else if (type == "list(shape)") list->shape.push_back(PickShape(in_));
      else return AttrValue();  // func and others: left unset
    }
    return value;
  }

  // The dtypes of one input arg under the chosen attrs; the count of a
  // number attr outside [0, 8] is replaced by a small one, so the import's
  // count check sees the mismatch.
  std::vector<DType> ArgTypes(const ArgDef& arg, const AttrMap& attrs) {
    auto attr = [&](const std::string& name) -> const AttrValue* {
      auto it = attrs.find(name);
      return it == attrs.end() ? nullptr : &it->second;
    };
    std::vector<DType> types;
    if (!arg.type_list_attr.empty()) {
      const AttrValue* list = attr(arg.type_list_attr);
      if (list != nullptr && list->is_list()) types = list->list().type;
      return types;
    }
    DType dtype = arg.type;
    if (!arg.type_attr.empty()) {
      const AttrValue* t = attr(arg.type_attr);
      dtype = t != nullptr && t->is_type() ? t->type() : DT_FLOAT;
    }
    int64_t count = 1;
    if (!arg.number_attr.empty()) {
      const AttrValue* n = attr(arg.number_attr);
      count = n != nullptr && n->is_i() ? n->i() : 1;
      if (count < 0 || count > 8) count = in_.Byte() % 4;
    }
    types.assign(static_cast<size_t>(count), dtype);
    return types;
  }

  // Adds the nodes that produce one input of `dtype`; returns its name.
  std::string AddInput(DType dtype, const std::string& value_dtype_hint) {
    const std::string name = "in" + std::to_string(def_.nodes.size());
    if (dtype == DT_RESOURCE) {
      DType var_dtype = DT_FLOAT;
      DTypeFromName(value_dtype_hint, &var_dtype);
      if (in_.Byte() >= 192) var_dtype = PickDType(in_, {});
      if (var_dtype == DT_RESOURCE || var_dtype == DT_INVALID) var_dtype = DT_FLOAT;
      const uint8_t how = in_.Byte();
      Tensor initial = MakeTensor(var_dtype);
      NodeDef var;
      var.name = name;
      var.op = "VarHandleOp";
      var.attrs["dtype"] = var_dtype;
      var.attrs["shape"] = how % 4 == 0   ? PickShape(in_)
                           : how % 4 == 1 ? PartialShape::UnknownRank()
                                          : PartialShape(initial.shape());
      var.attrs["shared_name"] = name;
      def_.nodes.push_back(std::move(var));
      if (how < 224) {  // initialize it first
        NodeDef value;
        value.name = name + "/value";
        value.op = "Const";
        value.attrs["dtype"] = var_dtype;
        value.attrs["value"] = initial;
        NodeDef assign;
        assign.name = name + "/assign";
        assign.op = "AssignVariableOp";
        assign.inputs = {name, value.name};
        assign.attrs["dtype"] = var_dtype;
        def_.nodes.push_back(std::move(value));
        def_.nodes.push_back(std::move(assign));
        control_inputs_.push_back("^" + name + "/assign");
      }
      return name;
    }
    const uint8_t how = in_.Byte();
    Tensor value = MakeTensor(dtype);
    NodeDef node;
    node.name = name;
    node.attrs["dtype"] = dtype;
    if (how % 3 == 0) {
      node.op = "Const";
      node.attrs["value"] = value;
    } else {
      node.op = "Placeholder";
      if (how % 3 == 2) node.attrs["shape"] = PartialShape(value.shape());
      feeds_.emplace_back(name, value);
    }
    def_.nodes.push_back(std::move(node));
    return name;
  }

  // Builds the graph around `op`; false when nothing is worth running.
  bool Build(const OpDef& op) {
    NodeDef node;
    node.name = "op";
    node.op = op.name;
    // Type attrs first: input dtypes and tensor attrs depend on them.
    for (int pass = 0; pass < 2; ++pass) {
      for (const AttrDef& attr : op.attrs) {
        const bool is_type = attr.type == "type" || attr.type == "list(type)";
        if (is_type != (pass == 0)) continue;
        const uint8_t keep = in_.Byte();
        if (attr.has_default && keep % 4 == 3) {
          node.attrs[attr.name] = attr.default_value;
          continue;
        }
        AttrValue value = MakeAttr(attr, node.attrs);
        if (value.has_value()) node.attrs[attr.name] = std::move(value);
      }
    }
    std::string value_dtype;  // for variables: the op's dtype (or T) attr
    for (const char* attr : {"T", "dtype"}) {
      if (auto it = node.attrs.find(attr); it != node.attrs.end() && it->second.is_type()) {
        value_dtype = std::string(DTypeName(it->second.type()));
      }
    }
    int inputs = 0;
    for (const ArgDef& arg : op.inputs) {
      for (DType dtype : ArgTypes(arg, node.attrs)) {
        if (++inputs > kMaxInputs) return false;
        node.inputs.push_back(AddInput(dtype, value_dtype));
      }
    }
    for (const std::string& control : control_inputs_) node.inputs.push_back(control);
    def_.nodes.push_back(std::move(node));
    return true;
  }

  const GraphDef& def() const { return def_; }
  const std::vector<std::pair<std::string, Tensor>>& feeds() const { return feeds_; }

 private:
  FuzzInput& in_;
  int64_t budget_ = kMaxElements;
  GraphDef def_;
  std::vector<std::pair<std::string, Tensor>> feeds_;
  std::vector<std::string> control_inputs_;
  std::optional<std::vector<int64_t>> last_dims_;
};

const OpDef* ChooseOp(FuzzInput& in, std::string_view bytes) {
  const OpTable& table = Ops();
  const size_t end = bytes.find('\0');
  const std::string_view name = bytes.substr(0, std::min(end, bytes.size()));
  for (size_t i = 0; i <= name.size(); ++i) in.Byte();  // the name and its '\0'
  // Not a name: the first op at or after it, so that an op added later
  // changes what few other names pick.
  auto it = table.by_name.lower_bound(name);
  return it != table.by_name.end() ? it->second : table.ops.front();
}

}  // namespace
}  // namespace weir::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir;
  using namespace weir::fuzz;
  FuzzInput in(data, size);
  const OpDef* op = ChooseOp(in, std::string_view(reinterpret_cast<const char*>(data), size));
  GraphBuilder builder(in);
  if (!builder.Build(*op)) return 0;

  // WEIR_FUZZ_VERBOSE=1: say what each input became (to see what a saved
  // input does, or how deep the fuzzer gets).
  static const bool verbose = std::getenv("WEIR_FUZZ_VERBOSE") != nullptr;
  auto report = [&](const char* stage, const Status& status) {
    if (verbose) std::fprintf(stderr, "run_op %s: %s: %s\n", op->name.c_str(), stage, status.ToString().c_str());
  };

  // Our own import, for the node's outputs and the shapes it promises.
  Graph graph;
  if (Status s = ImportGraphDef(builder.def(), &graph); !s.ok()) {
    report("import", s);
    return 0;
  }
  const Node* node = graph.FindNode("op");
  Require(node != nullptr, "the imported graph lost the op's node");
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  for (int i = 0; i < node->num_outputs() && i < 64; ++i) fetches.push_back("op:" + std::to_string(i));
  if (fetches.empty()) targets.push_back("op");

  SessionOptions options;
  options.intra_op_threads = 1;
  options.inter_op_threads = 1;
  StatusOr<std::unique_ptr<Session>> session = Session::New(options);
  Require(session.ok(), "Session::New failed");
  if (!(*session)->Create(builder.def()).ok()) return 0;
  RunOptions run_options;
  run_options.timeout_ms = kRunTimeoutMs;
  std::vector<Tensor> outputs;
  Status status = (*session)->Run(builder.feeds(), fetches, targets, &outputs, run_options);
  report("run", status);
  if (!status.ok()) return 0;
  if (verbose) {
    for (const Tensor& out : outputs) std::fprintf(stderr, "  output %s\n", out.shape().DebugString().c_str());
  }
  Require(outputs.size() == fetches.size(), "Run returned the wrong number of outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    Require(out.IsInitialized(), "Run succeeded with an uninitialized output");
    Require(out.dtype() == node->output_type(static_cast<int>(i)),
            "an output's dtype differs from the op's declaration");
    if (!node->output_shape(static_cast<int>(i)).IsCompatibleWith(out.shape())) {
      std::fprintf(stderr, "%s output %zu: shape %s, but its shape function said %s\n",
                   op->name.c_str(), i, out.shape().DebugString().c_str(),
                   node->output_shape(static_cast<int>(i)).DebugString().c_str());
      Require(false, "an output's shape contradicts the op's shape function");
    }
  }
  return 0;
}
