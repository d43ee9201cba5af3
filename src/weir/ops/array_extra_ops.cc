// Array ops that TensorFlow graphs and TF1 scripts use beyond the core
// family: Roll, the functional TensorScatter{Update,Add,Sub,Min,Max},
// Bitcast, UniqueWithCounts and the bin counts (Bincount, DenseBincount).
// TensorFlow's declarations; kernels in kernels/array_extra_kernels.cc.
#include <initializer_list>
#include <string>

#include "weir/framework/gather_scatter_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// Roll: input's shape; shift and axis are scalars or vectors of one length.
Status RollShape(InferenceContext* c) {
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &unused).WithContext("Roll: input"));
  for (int i = 1; i <= 2; ++i) {
    if (c->input(i).known_rank() && c->input(i).rank() > 1) {
      return errors::InvalidArgument("Roll: ", i == 1 ? "shift" : "axis",
                                     " must be a scalar or a vector, not ", c->input(i));
    }
  }
  c->set_output(0, c->input(0));
  return Status::OK();
}

// TensorScatter*: tensor's shape; updates must be indices[:-1] +
// tensor[indices[-1]:].
Status TensorScatterShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(CheckScatterNdShapes(c->input(1), c->input(2), c->input(0)));
  c->set_output(0, c->input(0));
  return Status::OK();
}

// Bitcast: the last dim grows or shrinks by the ratio of the element sizes.
Status BitcastShape(InferenceContext* c) {
  DType from, to;
  WEIR_RETURN_IF_ERROR(c->GetAttr("T", &from));
  WEIR_RETURN_IF_ERROR(c->GetAttr("type", &to));
  const PartialShape& input = c->input(0);
  const int64_t from_size = static_cast<int64_t>(DTypeSize(from));
  const int64_t to_size = static_cast<int64_t>(DTypeSize(to));
  if (!input.known_rank() || from_size == to_size) {
    c->set_output(0, input);
    return Status::OK();
  }
  std::vector<int64_t> dims = input.dim_sizes();
  if (from_size > to_size) {
    dims.push_back(from_size / to_size);
  } else {
    const int64_t last = dims.empty() ? -2 : dims.back();
    if (last != PartialShape::kUnknown && last != to_size / from_size) {
      return errors::InvalidArgument("Bitcast: cannot bitcast ", input, " of ", from, " to ", to,
                                     ": the last dim must be ", to_size / from_size);
    }
    dims.pop_back();
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

Status UniqueWithCountsShape(InferenceContext* c) {
  PartialShape x;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 1, &x).WithContext("UniqueWithCounts: x"));
  c->set_output(0, PartialShape({PartialShape::kUnknown}));
  c->set_output(1, x);
  c->set_output(2, PartialShape({PartialShape::kUnknown}));
  return Status::OK();
}

// The bin count from a constant `size` input, or unknown.
StatusOr<int64_t> SizeInput(InferenceContext* c, int input, const char* op) {
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRank(input, 0, &unused).WithContext(std::string(op) + ": size"));
  const Tensor* size = c->input_tensor(input);
  if (size == nullptr) return int64_t{PartialShape::kUnknown};
  WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                        IntTensorValues(*size, std::string(op) + ": size"));
  if (values[0] < 0) {
    return errors::InvalidArgument(op, ": size ", values[0], " must not be negative");
  }
  return values[0];
}

Status BincountShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t size, SizeInput(c, 1, "Bincount"));
  c->set_output(0, PartialShape({size}));
  return Status::OK();
}

// DenseBincount: [size] for a vector input, [batch, size] for a matrix.
Status DenseBincountShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t size, SizeInput(c, 1, "DenseBincount"));
  const PartialShape& input = c->input(0);
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
  } else if (input.rank() == 1) {
    c->set_output(0, PartialShape({size}));
  } else if (input.rank() == 2) {
    c->set_output(0, PartialShape({input.dim(0), size}));
  } else {
    return errors::InvalidArgument("DenseBincount: input must be a vector or a matrix, not ",
                                   input);
  }
  return Status::OK();
}

// NthElement: input's dims without the last.
Status NthElementShape(InferenceContext* c) {
  PartialShape input, n;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &input).WithContext("NthElement: input"));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 0, &n).WithContext("NthElement: n"));
  if (!input.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  std::vector<int64_t> dims = input.dim_sizes();
  const int64_t last = dims.back();
  if (const Tensor* value = c->input_tensor(1)) {
    const int64_t k = value->scalar<int32_t>();
    if (k < 0 || (last != PartialShape::kUnknown && k >= last)) {
      return errors::InvalidArgument("NthElement: n ", k, " is out of range for input ", input);
    }
  }
  dims.pop_back();
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

}  // namespace

void RegisterArrayExtraOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("NthElement")
                         .Input("input: T")
                         .Input("n: int32")
                         .Output("values: T")
                         .Attr("reverse: bool = false")
                         .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, "
                               "uint16, half, uint32, uint64}")
                         .SetShapeFn(NthElementShape)
                         .Doc("The n-th smallest (largest with reverse) value of each vector "
                              "along the last dim, counting from 0."));
  registry->Register(OpDefBuilder("Roll")
                         .Input("input: T")
                         .Input("shift: Tshift")
                         .Input("axis: Taxis")
                         .Output("output: T")
                         .Attr("T: type")
                         .Attr("Tshift: {int32, int64}")
                         .Attr("Taxis: {int32, int64}")
                         .SetShapeFn(RollShape)
                         .Doc("Elements shifted by `shift` along each `axis`, wrapping around "
                              "(np.roll); shifts of one axis add."));
  for (const auto& [name, doc] : std::initializer_list<std::pair<const char*, const char*>>{
           {"TensorScatterUpdate",
            "A copy of `tensor` with the slices `indices` names replaced by `updates`."},
           {"TensorScatterAdd", "A copy of `tensor` with `updates` added at `indices`."},
           {"TensorScatterSub", "A copy of `tensor` with `updates` subtracted at `indices`."},
           {"TensorScatterMin", "A copy of `tensor`, each indexed element min'd with updates."},
           {"TensorScatterMax", "A copy of `tensor`, each indexed element max'd with updates."},
       }) {
    const bool update = std::string(name) == "TensorScatterUpdate";
    registry->Register(
        OpDefBuilder(name)
            .Input("tensor: T")
            .Input("indices: Tindices")
            .Input("updates: T")
            .Output("output: T")
            .Attr("T: type")
            .Attr(update ? "Tindices: {int16, int32, int64, uint16}" : "Tindices: {int32, int64}")
            .Attr("bad_indices_policy: string = ''")
            .SetShapeFn(TensorScatterShape)
            .Doc(doc));
  }
  constexpr char kBitcastTypes[] =
      "{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16, "
      "complex64, complex128}";
  registry->Register(OpDefBuilder("Bitcast")
                         .Input("input: T")
                         .Output("output: type")
                         .Attr(std::string("T: ") + kBitcastTypes)
                         .Attr(std::string("type: ") + kBitcastTypes)
                         .SetShapeFn(BitcastShape)
                         .Doc("The bytes of `input` read as `type`: a wider type consumes the "
                              "last dim (which must be the size ratio), a narrower one adds it."));
  registry->Register(OpDefBuilder("UniqueWithCounts")
                         .Input("x: T")
                         .Output("y: T")
                         .Output("idx: out_idx")
                         .Output("count: out_idx")
                         .Attr("T: type")
                         .Attr("out_idx: {int32, int64} = int32")
                         .SetShapeFn(UniqueWithCountsShape)
                         .Doc("Unique, and how often each distinct value occurs in `x`."));
  registry->Register(OpDefBuilder("Bincount")
                         .Input("arr: int32")
                         .Input("size: int32")
                         .Input("weights: T")
                         .Output("bins: T")
                         .Attr("T: {int32, int64, float, double}")
                         .SetShapeFn(BincountShape)
                         .Doc("bins[i] = the sum of weights where arr == i (or the count, with "
                              "empty weights), for i in [0, size); other values are dropped."));
  registry->Register(OpDefBuilder("DenseBincount")
                         .Input("input: Tidx")
                         .Input("size: Tidx")
                         .Input("weights: T")
                         .Output("output: T")
                         .Attr("Tidx: {int32, int64}")
                         .Attr("T: {int32, int64, float, double}")
                         .Attr("binary_output: bool = false")
                         .SetShapeFn(DenseBincountShape)
                         .Doc("Bincount of a vector, or of each row of a matrix; binary_output "
                              "gives 1 where a value occurs instead of its count."));
}

}  // namespace weir
