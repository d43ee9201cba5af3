// The C++ graph builder: Scope, Output, Input and AddOp.
//
//   Scope root = Scope::NewRootScope();
//   auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
//   auto w = ops::Const(root, {{1.f, 2.f}, {3.f, 4.f}});
//   auto y = ops::Relu(root, ops::MatMul(root, x, w));
//   GraphDef def = root.ToGraphDef();   // check root.status() first
//
// A Scope carries the name prefix, device, control dependencies and
// colocation for the nodes built through it; copies are cheap and share one
// Graph. Errors do not throw: the first one is kept in the scope's status
// (with the source location of the offending call) and later builds become
// no-ops, so a model is built in straight lines and checked once.
#pragma once

#include <initializer_list>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "weir/framework/attr_value.h"
#include "weir/graph/graph.h"

namespace weir {

// One output of a node.
class Output {
 public:
  Output() = default;
  Output(Node* node, int index = 0) : node_(node), index_(index) {}  // NOLINT

  Node* node() const { return node_; }
  int index() const { return index_; }
  bool valid() const { return node_ != nullptr; }
  DType dtype() const { return node_ ? node_->output_type(index_) : DT_INVALID; }
  PartialShape shape() const { return node_ ? node_->output_shape(index_) : PartialShape(); }
  // "node" for output 0, else "node:index": what Session::Run accepts.
  std::string name() const;

 private:
  Node* node_ = nullptr;
  int index_ = 0;
};

// A node, for control dependencies, targets and multi-output ops.
class Operation {
 public:
  Operation() = default;
  explicit Operation(Node* node) : node_(node) {}
  Operation(const Output& output) : node_(output.node()) {}  // NOLINT

  Node* node() const { return node_; }
  bool valid() const { return node_ != nullptr; }
  Output output(int i) const { return Output(node_, i); }
  int num_outputs() const { return node_ ? node_->num_outputs() : 0; }
  std::string name() const { return node_ ? node_->name() : "<invalid>"; }

 private:
  Node* node_ = nullptr;
};

// What an op input accepts: a graph Output, or a literal that becomes a
// Const node. Numeric literals take the dtype the op needs (so
// `ops::Mul(s, x, 2.0)` works for float and double x).
class Input {
 public:
  Input(const Output& output) : output_(output) {}  // NOLINT
  Input(const Operation& op) : output_(op.output(0)) {}  // NOLINT
  Input(const Tensor& tensor) : tensor_(tensor), has_tensor_(true) {}  // NOLINT
  Input(float v) : Input(FloatLiteral({v}, {}, DT_FLOAT)) {}  // NOLINT
  Input(double v) : Input(FloatLiteral({v}, {}, DT_DOUBLE)) {}  // NOLINT
  Input(int v) : Input(IntLiteral({v}, {}, DT_INT32)) {}  // NOLINT
  Input(int64_t v) : Input(IntLiteral({v}, {}, DT_INT64)) {}  // NOLINT
  Input(std::initializer_list<float> v);
  Input(std::initializer_list<double> v);
  Input(std::initializer_list<int> v);
  Input(std::initializer_list<int64_t> v);
  // Rows of floats or doubles: {{1.f, 2.f}, {3.f, 4.f}}. One template
  // rather than two overloads, which clang finds ambiguous for such a list.
  template <typename T>
    requires std::is_same_v<T, float> || std::is_same_v<T, double>
  Input(std::initializer_list<std::initializer_list<T>> rows);  // NOLINT

  bool is_output() const { return !has_tensor_; }
  const Output& output() const { return output_; }
  const Tensor& tensor() const { return tensor_; }
  bool is_literal() const { return is_literal_; }
  // The literal as `dtype` (numeric dtypes); the tensor itself otherwise.
  // Integer literals convert exactly; a value the dtype cannot hold (300 as
  // uint8, 2^40 as int32) is an InvalidArgument, not a wrapped value.
  StatusOr<Tensor> TensorAs(DType dtype) const;

 private:
  // A literal of dtype `natural`. Integer literals keep their values as
  // int64, never through double, so values above 2^53 stay exact.
  static Input FloatLiteral(std::vector<double> values, std::vector<int64_t> dims, DType natural);
  static Input IntLiteral(std::vector<int64_t> values, std::vector<int64_t> dims, DType natural);

  Input() = default;
  Output output_;
  Tensor tensor_;
  bool has_tensor_ = false;
  bool is_literal_ = false;
  std::vector<double> literal_floats_;  // for a float or double literal
  std::vector<int64_t> literal_ints_;   // for an int or int64 literal
};

// For ops taking a list of tensors (`N * T` or a type list).
using InputList = std::vector<Input>;

class Scope {
 public:
  // A new, empty graph.
  static Scope NewRootScope();
  // A root scope that builds into `graph`, which it does not own: for
  // passes that add graph code to a graph they are given (the expansion of
  // SymbolicGradient). REQUIRES: `graph` outlives the scope and its copies.
  static Scope ForGraph(Graph* graph);

  // Names nodes "child/op" within "prefix/child".
  Scope NewSubScope(std::string_view child) const;
  // The next op built gets exactly this name (made unique if taken).
  Scope WithOpName(std::string_view name) const;
  // Requested device, e.g. "/device:CPU:1"; the placer may fill in the rest.
  Scope WithDevice(std::string_view device) const;
  // Nodes built through the result run after `deps`.
  Scope WithControlDependencies(const std::vector<Operation>& deps) const;
  // Nodes built through the result are placed with `op`.
  Scope ColocateWith(const Operation& op) const;

  Graph* graph() const { return shared_->graph; }
  const Status& status() const { return shared_->status; }
  bool ok() const { return shared_->status.ok(); }
  // Keeps the first error.
  void UpdateStatus(const Status& status) const { shared_->status.Update(status); }
  // Forgets the kept error: for a frontend that reports each call's error
  // on its own and keeps building (the Python binding).
  void ClearStatus() const { shared_->status = Status::OK(); }

  // The graph so far; check status() first.
  GraphDef ToGraphDef() const { return graph()->ToGraphDef(); }

  // A unique node name for an op of `op_type` built through this scope.
  std::string GetUniqueNameForOp(std::string_view op_type) const;
  const std::string& device() const { return device_; }
  const std::vector<Operation>& control_dependencies() const { return control_deps_; }
  const std::string& colocate_with() const { return colocate_with_; }

 private:
  struct Shared {
    std::unique_ptr<Graph> owned;  // null for ForGraph's scope
    Graph* graph = nullptr;
    Status status;
  };
  Scope() = default;

  std::shared_ptr<Shared> shared_;
  std::string prefix_;   // "outer/inner", no trailing slash
  std::string op_name_;  // exact name for the next op, if set
  std::string device_;
  std::vector<Operation> control_deps_;
  std::string colocate_with_;  // node name
};

// One input argument of an op: a single tensor, or a list for list args.
struct OpArg {
  OpArg(Input single) : values{std::move(single)}, is_list(false) {}  // NOLINT
  OpArg(const Output& single) : values{Input(single)}, is_list(false) {}  // NOLINT
  OpArg(InputList list) : values(std::move(list)), is_list(true) {}  // NOLINT
  std::vector<Input> values;
  bool is_list;
};

// Adds a node of `op_type` with `args` (one per input arg of the op) and
// `attrs`. Type attrs (T, N, type lists) are inferred from the inputs; the
// rest come from `attrs` or defaults. Shape inference runs now, so a shape
// error is reported here. On error, records it (with `location`) in the
// scope's status and returns an invalid Operation.
Operation AddOp(const Scope& scope, std::string_view op_type, std::vector<OpArg> args,
                AttrMap attrs = {},
                std::source_location location = std::source_location::current());

}  // namespace weir
