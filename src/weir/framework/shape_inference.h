// InferenceContext: what an op's shape function sees and sets. Shape
// functions run when a node is added to a graph (builder or import), so shape
// errors are reported at graph-construction time, naming the node.
#pragma once

#include <string_view>
#include <vector>

#include "weir/framework/attr_value.h"
#include "weir/framework/tensor_shape.h"
#include "weir/framework/types.h"

namespace weir {

struct NodeDef;

// What a handle (a TensorList variant, a resource) refers to, as far as shape
// inference knows: TensorFlow's "handle shapes and types". A TensorList's is
// one entry, its element shape and dtype, set by the op that makes the list
// and passed on by the ops that change it, so the ops that read elements get
// a static shape even when their own element_shape input is -1.
struct ShapeAndType {
  PartialShape shape;
  DType dtype = DT_INVALID;
};
// Empty: nothing known.
using HandleData = std::vector<ShapeAndType>;

class InferenceContext {
 public:
  // `input_tensors[i]` is the constant value of input i when known (a Const
  // input), else null. `input_handle_data[i]` is what input i's producer
  // said of the handle (empty or missing: nothing). Pointers are borrowed
  // for the call.
  InferenceContext(const NodeDef* node, std::vector<PartialShape> input_shapes,
                   std::vector<const Tensor*> input_tensors, int num_outputs,
                   std::vector<HandleData> input_handle_data = {});

  const NodeDef& node() const { return *node_; }
  const AttrMap& attrs() const;
  int num_inputs() const { return static_cast<int>(input_shapes_.size()); }
  int num_outputs() const { return static_cast<int>(output_shapes_.size()); }
  const PartialShape& input(int i) const { return input_shapes_[i]; }
  const Tensor* input_tensor(int i) const { return input_tensors_[i]; }
  void set_output(int i, PartialShape shape) { output_shapes_[i] = std::move(shape); }
  const PartialShape& output(int i) const { return output_shapes_[i]; }
  std::vector<PartialShape> TakeOutputs() { return std::move(output_shapes_); }

  // Handle data of input i; null when nothing is known of it.
  const HandleData* input_handle_data(int i) const {
    return i < static_cast<int>(input_handle_data_.size()) && !input_handle_data_[i].empty()
               ? &input_handle_data_[i]
               : nullptr;
  }
  // What output i, a handle, refers to (unset: nothing is known).
  void set_output_handle_data(int i, HandleData data);
  // One entry per output (empty where nothing was set), or an empty vector
  // when no output has any.
  std::vector<HandleData> TakeOutputHandleData() { return std::move(output_handle_data_); }

  template <typename T>
  Status GetAttr(const std::string& name, T* value) const {
    return ::weir::GetAttr(attrs(), name, value);
  }

  // Error helpers: a shape function reports "what is wrong"; the caller adds
  // the node name, op and input shapes.
  Status WithRank(int input, int rank, PartialShape* out) const;
  Status WithRankAtLeast(int input, int rank, PartialShape* out) const;
  // Merges two dims where -1 is unknown; error if both known and different.
  static Status MergeDim(int64_t a, int64_t b, int64_t* out);

  // a + b and a * b of dims where -1 is unknown (then so is the result).
  // InvalidArgument naming `what` and both dims when the result does not
  // fit int64. REQUIRES: a, b >= -1.
  static Status AddDims(int64_t a, int64_t b, std::string_view what, int64_t* out);
  static Status MultiplyDims(int64_t a, int64_t b, std::string_view what, int64_t* out);

  // The rank given by a vector of `length` values, one per dim (Reshape's
  // shape, Tile's multiples): -1 when unknown (length -1), InvalidArgument
  // naming `what` when above TensorShape::kMaxRank.
  static StatusOr<int> RankFromLength(int64_t length, std::string_view what);

  // Every output must be a valid shape (PartialShape::Validate): the
  // registry runs this after every shape function, so a wrapped or
  // negative dim never reaches the graph. InvalidArgument naming the output.
  Status CheckOutputs() const;

  // "[2,3], [?,4]": the input shapes, for error messages.
  std::string InputShapesString() const;

 private:
  const NodeDef* node_;
  std::vector<PartialShape> input_shapes_;
  std::vector<const Tensor*> input_tensors_;
  std::vector<PartialShape> output_shapes_;
  std::vector<HandleData> input_handle_data_;
  std::vector<HandleData> output_handle_data_;  // empty until one is set
};

}  // namespace weir
