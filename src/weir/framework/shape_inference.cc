#include "weir/framework/shape_inference.h"

#include "weir/base/checked_math.h"
#include "weir/framework/node_def.h"

namespace weir {

InferenceContext::InferenceContext(const NodeDef* node, std::vector<PartialShape> input_shapes,
                                   std::vector<const Tensor*> input_tensors, int num_outputs,
                                   std::vector<HandleData> input_handle_data)
    : node_(node),
      input_shapes_(std::move(input_shapes)),
      input_tensors_(std::move(input_tensors)),
      output_shapes_(num_outputs),
      input_handle_data_(std::move(input_handle_data)) {
  input_tensors_.resize(input_shapes_.size(), nullptr);
}

void InferenceContext::set_output_handle_data(int i, HandleData data) {
  if (output_handle_data_.empty()) output_handle_data_.resize(output_shapes_.size());
  output_handle_data_[i] = std::move(data);
}

const AttrMap& InferenceContext::attrs() const { return node_->attrs; }

Status InferenceContext::WithRank(int input, int rank, PartialShape* out) const {
  const PartialShape& shape = input_shapes_[input];
  if (!shape.known_rank()) {
    *out = PartialShape::UnknownDims(rank);
    return Status::OK();
  }
  if (shape.rank() != rank) {
    return errors::InvalidArgument("input ", input, " must have rank ", rank, " but has shape ",
                                   shape);
  }
  *out = shape;
  return Status::OK();
}

Status InferenceContext::WithRankAtLeast(int input, int rank, PartialShape* out) const {
  const PartialShape& shape = input_shapes_[input];
  if (shape.known_rank() && shape.rank() < rank) {
    return errors::InvalidArgument("input ", input, " must have rank at least ", rank,
                                   " but has shape ", shape);
  }
  *out = shape;
  return Status::OK();
}

Status InferenceContext::MergeDim(int64_t a, int64_t b, int64_t* out) {
  if (a >= 0 && b >= 0 && a != b) {
    return errors::InvalidArgument("dimensions ", a, " and ", b, " must be equal");
  }
  *out = a >= 0 ? a : b;
  return Status::OK();
}

Status InferenceContext::AddDims(int64_t a, int64_t b, std::string_view what, int64_t* out) {
  if (a < 0 || b < 0) {
    *out = PartialShape::kUnknown;
    return Status::OK();
  }
  return CheckedAdd(a, b, out, what);
}

Status InferenceContext::MultiplyDims(int64_t a, int64_t b, std::string_view what,
                                      int64_t* out) {
  if (a < 0 || b < 0) {
    *out = PartialShape::kUnknown;
    return Status::OK();
  }
  return CheckedMultiply(a, b, out, what);
}

StatusOr<int> InferenceContext::RankFromLength(int64_t length, std::string_view what) {
  if (length < 0) return -1;
  if (length > TensorShape::kMaxRank) {
    return errors::InvalidArgument(what, " has ", length, " values, one per dim, but a shape has ",
                                   "at most ", TensorShape::kMaxRank, " dims");
  }
  return static_cast<int>(length);
}

Status InferenceContext::CheckOutputs() const {
  for (size_t i = 0; i < output_shapes_.size(); ++i) {
    Status status = output_shapes_[i].Validate();
    if (!status.ok()) {
      return errors::InvalidArgument("output ", i, ": ", status.message());
    }
  }
  return Status::OK();
}

std::string InferenceContext::InputShapesString() const {
  return StrJoin(input_shapes_, ", ");
}

}  // namespace weir
