#include "weir/graph/scope.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <Eigen/Core>

#include "weir/graph/graph_constructor.h"

namespace weir {

std::string Output::name() const {
  if (node_ == nullptr) return "<invalid>";
  return index_ == 0 ? node_->name() : StrCat(node_->name(), ":", index_);
}

namespace {

// Whether `v` converts to T without wrapping or undefined behaviour (a
// fractional part truncates, as static_cast does). Bool and floating-point
// dtypes take any value.
template <typename T, typename S>
bool Representable(S v) {
  if constexpr (!std::is_integral_v<T> || std::is_same_v<T, bool>) {
    return true;
  } else if constexpr (std::is_integral_v<S>) {
    return std::in_range<T>(v);
  } else {
    // [lo, hi) with hi = 2^digits, exact in double (max() is not).
    const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);
    const double lo = std::is_signed_v<T> ? -hi : 0.0;
    const double whole = std::trunc(static_cast<double>(v));
    return whole >= lo && whole < hi;  // false for NaN
  }
}

// `values` (of a `from` literal) as a tensor of `dtype` and `dims`.
template <typename S>
StatusOr<Tensor> ConvertLiteral(const std::vector<S>& values, DType from, DType dtype,
                                const TensorShape& shape) {
  Tensor t;
  Status status = errors::InvalidArgument("cannot convert a ", from, " literal to ", dtype);
  // 16-bit floats (the scalars gradient code builds for half graphs): via
  // float, rounding to nearest even; too large a value becomes infinity.
  auto narrow = [&]<typename T>() {
    t = Tensor(dtype, shape);
    for (size_t i = 0; i < values.size(); ++i) {
      t.data<T>()[i] = static_cast<T>(static_cast<float>(values[i]));
    }
    status = Status::OK();
  };
  if (dtype == DT_HALF) narrow.template operator()<Eigen::half>();
  if (dtype == DT_BFLOAT16) narrow.template operator()<Eigen::bfloat16>();
  DispatchNumericDType(dtype, [&]<typename T>() {
    if constexpr (std::is_arithmetic_v<T>) {
      t = Tensor(dtype, shape);
      for (size_t i = 0; i < values.size(); ++i) {
        if (!Representable<T>(values[i])) {
          status = errors::InvalidArgument("literal ", values[i], " does not fit in ", dtype);
          return;
        }
        t.data<T>()[i] = static_cast<T>(values[i]);
      }
      status = Status::OK();
    }
  });
  if (!status.ok()) return status;
  return t;
}

}  // namespace

Input Input::FloatLiteral(std::vector<double> values, std::vector<int64_t> dims, DType natural) {
  Input in;
  in.has_tensor_ = true;
  in.is_literal_ = true;
  in.literal_floats_ = std::move(values);
  in.tensor_ = ConvertLiteral(in.literal_floats_, natural, natural, TensorShape(dims)).value();
  return in;
}

Input Input::IntLiteral(std::vector<int64_t> values, std::vector<int64_t> dims, DType natural) {
  Input in;
  in.has_tensor_ = true;
  in.is_literal_ = true;
  in.literal_ints_ = std::move(values);
  in.tensor_ = ConvertLiteral(in.literal_ints_, natural, natural, TensorShape(dims)).value();
  return in;
}

namespace {
template <typename T>
std::pair<std::vector<double>, std::vector<int64_t>> Flatten(
    std::initializer_list<std::initializer_list<T>> rows) {
  std::vector<double> values;
  int64_t cols = rows.size() ? static_cast<int64_t>(rows.begin()->size()) : 0;
  for (const auto& row : rows) {
    CHECK_EQ(static_cast<int64_t>(row.size()), cols) << "ragged literal matrix";
    values.insert(values.end(), row.begin(), row.end());
  }
  return {values, {static_cast<int64_t>(rows.size()), cols}};
}
int64_t Length(size_t n) { return static_cast<int64_t>(n); }
}  // namespace

Input::Input(std::initializer_list<float> v)
    : Input(FloatLiteral(std::vector<double>(v.begin(), v.end()), {Length(v.size())}, DT_FLOAT)) {}
Input::Input(std::initializer_list<double> v)
    : Input(FloatLiteral(std::vector<double>(v), {Length(v.size())}, DT_DOUBLE)) {}
Input::Input(std::initializer_list<int> v)
    : Input(IntLiteral(std::vector<int64_t>(v.begin(), v.end()), {Length(v.size())}, DT_INT32)) {}
Input::Input(std::initializer_list<int64_t> v)
    : Input(IntLiteral(std::vector<int64_t>(v), {Length(v.size())}, DT_INT64)) {}
template <typename T>
  requires std::is_same_v<T, float> || std::is_same_v<T, double>
Input::Input(std::initializer_list<std::initializer_list<T>> rows) {
  auto [values, dims] = Flatten(rows);
  *this = FloatLiteral(std::move(values), std::move(dims), DTypeOf<T>::value);
}
template Input::Input(std::initializer_list<std::initializer_list<float>> rows);
template Input::Input(std::initializer_list<std::initializer_list<double>> rows);

StatusOr<Tensor> Input::TensorAs(DType dtype) const {
  if (!is_literal_ || tensor_.dtype() == dtype) return tensor_;
  if (tensor_.dtype() == DT_INT32 || tensor_.dtype() == DT_INT64) {
    return ConvertLiteral(literal_ints_, tensor_.dtype(), dtype, tensor_.shape());
  }
  return ConvertLiteral(literal_floats_, tensor_.dtype(), dtype, tensor_.shape());
}

Scope Scope::NewRootScope() {
  Scope scope;
  scope.shared_ = std::make_shared<Shared>();
  scope.shared_->owned = std::make_unique<Graph>();
  scope.shared_->graph = scope.shared_->owned.get();
  return scope;
}

Scope Scope::ForGraph(Graph* graph) {
  Scope scope;
  scope.shared_ = std::make_shared<Shared>();
  scope.shared_->graph = graph;
  return scope;
}

Scope Scope::NewSubScope(std::string_view child) const {
  Scope scope = *this;
  scope.op_name_.clear();
  if (child.empty()) return scope;
  std::string full = prefix_.empty() ? std::string(child) : StrCat(prefix_, "/", child);
  // A second sub-scope of the same name gets a fresh prefix ("layer_1").
  scope.prefix_ = graph()->NewName(full);
  return scope;
}

Scope Scope::WithOpName(std::string_view name) const {
  Scope scope = *this;
  scope.op_name_ = prefix_.empty() ? std::string(name) : StrCat(prefix_, "/", name);
  return scope;
}

Scope Scope::WithDevice(std::string_view device) const {
  Scope scope = *this;
  scope.device_ = std::string(device);
  return scope;
}

Scope Scope::WithControlDependencies(const std::vector<Operation>& deps) const {
  Scope scope = *this;
  scope.control_deps_.insert(scope.control_deps_.end(), deps.begin(), deps.end());
  return scope;
}

Scope Scope::ColocateWith(const Operation& op) const {
  Scope scope = *this;
  scope.colocate_with_ = op.name();
  return scope;
}

std::string Scope::GetUniqueNameForOp(std::string_view op_type) const {
  if (!op_name_.empty()) return graph()->NewName(op_name_);
  return graph()->NewName(prefix_.empty() ? std::string(op_type) : StrCat(prefix_, "/", op_type));
}

namespace {

std::string FormatLocation(const std::source_location& location) {
  // Keep the last two path components: "examples/mlp.cc:42" reads better
  // than an absolute build path.
  std::string_view file = location.file_name();
  size_t last = file.rfind('/');
  if (last != std::string_view::npos && last > 0) {
    size_t before = file.rfind('/', last - 1);
    if (before != std::string_view::npos) file.remove_prefix(before + 1);
  }
  return StrCat(file, ":", location.line());
}

// Works out type attrs from the inputs, then turns literals into Consts.
Status ResolveInputs(const Scope& scope, const OpDef& op, std::vector<OpArg>& args, AttrMap& attrs,
                     std::vector<Output>* flat) {
  if (args.size() != op.inputs.size()) {
    return errors::InvalidArgument("op ", op.name, " takes ", op.inputs.size(),
                                   " input arguments but ", args.size(), " were given");
  }
  // Pass 1: type attrs from graph outputs, then from literals' natural types.
  for (int literal_pass = 0; literal_pass < 2; ++literal_pass) {
    for (size_t a = 0; a < args.size(); ++a) {
      const ArgDef& arg = op.inputs[a];
      for (const Input& in : args[a].values) {
        if (in.is_output() == (literal_pass == 1)) continue;
        DType dtype = in.is_output() ? in.output().dtype() : in.tensor().dtype();
        if (!arg.type_attr.empty() && !attrs.count(arg.type_attr)) attrs[arg.type_attr] = dtype;
      }
      if (!arg.number_attr.empty() && !attrs.count(arg.number_attr)) {
        attrs[arg.number_attr] = static_cast<int64_t>(args[a].values.size());
      }
      if (!arg.type_list_attr.empty() && !attrs.count(arg.type_list_attr) && literal_pass == 1) {
        std::vector<DType> types;
        for (const Input& in : args[a].values) {
          types.push_back(in.is_output() ? in.output().dtype() : in.tensor().dtype());
        }
        attrs[arg.type_list_attr] = types;
      }
    }
  }
  for (size_t a = 0; a < args.size(); ++a) {
    const ArgDef& arg = op.inputs[a];
    bool list_arg = !arg.number_attr.empty() || !arg.type_list_attr.empty();
    if (list_arg != args[a].is_list && !(list_arg && args[a].values.size() == 1)) {
      return errors::InvalidArgument("input '", arg.name, "' of op ", op.name, " takes ",
                                     list_arg ? "a list of tensors" : "one tensor");
    }
    for (size_t k = 0; k < args[a].values.size(); ++k) {
      const Input& in = args[a].values[k];
      if (in.is_output()) {
        if (!in.output().valid()) {
          return errors::InvalidArgument("input '", arg.name, "' of op ", op.name,
                                         " is an invalid Output (from an earlier error?)");
        }
        flat->push_back(in.output());
        continue;
      }
      DType want = arg.type;
      if (!arg.type_attr.empty()) want = attrs[arg.type_attr].type();
      if (!arg.type_list_attr.empty()) want = attrs[arg.type_list_attr].list().type[k];
      StatusOr<Tensor> converted = in.TensorAs(want);
      if (!converted.ok()) {
        return converted.status().WithContext(StrCat("input '", arg.name, "' of op ", op.name));
      }
      const Tensor& value = *converted;
      Operation constant = AddOp(scope.WithOpName("Const"), "Const", {},
                                 {{"value", value}, {"dtype", value.dtype()}});
      if (!scope.ok()) return scope.status();
      flat->push_back(constant.output(0));
    }
  }
  return Status::OK();
}

}  // namespace

Operation AddOp(const Scope& scope, std::string_view op_type, std::vector<OpArg> args,
                AttrMap attrs, std::source_location location) {
  if (!scope.ok()) return Operation();
  std::string where = FormatLocation(location);
  auto fail = [&](const Status& status) {
    scope.UpdateStatus(Status(status.code(), StrCat(where, ": ", status.message())));
    return Operation();
  };
  StatusOr<const OpDef*> op = OpRegistry::Global()->LookUp(std::string(op_type));
  if (!op.ok()) return fail(op.status());
  std::vector<Output> inputs;
  Status resolved = ResolveInputs(scope, **op, args, attrs, &inputs);
  if (!resolved.ok()) return fail(resolved);

  NodeDef def;
  def.name = scope.GetUniqueNameForOp(op_type);
  def.op = std::string(op_type);
  def.device = scope.device();
  def.attrs = std::move(attrs);
  def.source_location = where;
  if (!scope.colocate_with().empty()) {
    def.attrs["_class"] = std::vector<std::string>{"loc:@" + scope.colocate_with()};
  }
  StatusOr<Node*> added = scope.graph()->AddNode(def);
  if (!added.ok()) return fail(added.status());
  Node* node = *added;
  if (static_cast<int>(inputs.size()) != node->num_inputs()) {
    scope.graph()->RemoveNode(node);
    return fail(errors::InvalidArgument("node ", def.Describe(), " got ", inputs.size(),
                                        " inputs but expects ", node->num_inputs()));
  }
  for (int i = 0; i < node->num_inputs(); ++i) {
    if (inputs[i].dtype() != node->input_type(i)) {
      // Read everything the message needs before the node is freed.
      const std::string name = inputs[i].name();
      const DType expected = node->input_type(i);
      scope.graph()->RemoveNode(node);
      return fail(errors::InvalidArgument("input ", i, " of node ", def.Describe(), " expects ",
                                          expected, " but '", name, "' is ", inputs[i].dtype()));
    }
    scope.graph()->AddEdge(inputs[i].node(), inputs[i].index(), node, i);
  }
  for (const Operation& dep : scope.control_dependencies()) {
    if (dep.valid()) scope.graph()->AddControlEdge(dep.node(), node);
  }
  Status shapes = InferShapes(node);
  if (!shapes.ok()) {
    scope.graph()->RemoveNode(node);
    return fail(shapes);
  }
  return Operation(node);
}

}  // namespace weir
