// The sparse family: ops on a SparseTensor given as its three parts
// (indices [N, rank] int64, values [N], dense_shape [rank] int64), and the
// sparse segment reductions (rows of `data` gathered by `indices` and summed
// into segments). TensorFlow's OpDefs, so imported graphs validate; the
// shape functions say what is known without reading the index values.
#include "weir/base/str_util.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

constexpr const char* kNumberTypes = "numbertype";
constexpr const char* kRealNumberTypes = "realnumbertype";
constexpr const char* kFloatTypes = "{bfloat16, half, float, double}";

// The length of vector input `input` (kUnknown when not known); an error
// when it is not a vector.
StatusOr<int64_t> VectorLength(InferenceContext* c, int input) {
  PartialShape shape;
  WEIR_RETURN_IF_ERROR(c->WithRank(input, 1, &shape));
  return shape.known_rank() ? shape.dim(0) : PartialShape::kUnknown;
}

// Checks that input `indices` is a matrix and returns its dims
// (kUnknown where unknown): [number of entries, rank].
StatusOr<std::pair<int64_t, int64_t>> IndexMatrix(InferenceContext* c, int indices) {
  PartialShape shape;
  WEIR_RETURN_IF_ERROR(c->WithRank(indices, 2, &shape));
  if (!shape.known_rank()) return std::make_pair(PartialShape::kUnknown, PartialShape::kUnknown);
  return std::make_pair(shape.dim(0), shape.dim(1));
}

// A SparseTensor's three parts at inputs (indices, values, shape): checks
// their ranks and returns the rank (kUnknown when not known).
StatusOr<int64_t> SparseInputs(InferenceContext* c, int indices, int values, int shape) {
  WEIR_ASSIGN_OR_RETURN(auto dims, IndexMatrix(c, indices));
  WEIR_ASSIGN_OR_RETURN(int64_t num_values, VectorLength(c, values));
  int64_t merged;
  if (!InferenceContext::MergeDim(dims.first, num_values, &merged).ok()) {
    return errors::InvalidArgument("indices shape ", c->input(indices), " and values shape ",
                                   c->input(values), " disagree on the number of entries");
  }
  WEIR_ASSIGN_OR_RETURN(int64_t rank, VectorLength(c, shape));
  if (!InferenceContext::MergeDim(dims.second, rank, &merged).ok()) {
    return errors::InvalidArgument("indices shape ", c->input(indices), " and dense_shape shape ",
                                   c->input(shape), " disagree on the rank");
  }
  return merged;
}

// Outputs (indices [?, rank], values [?], shape [rank]) starting at `first`.
void SetSparseOutputs(InferenceContext* c, int first, int64_t rank) {
  c->set_output(first, PartialShape({PartialShape::kUnknown, rank}));
  c->set_output(first + 1, PartialShape({PartialShape::kUnknown}));
  c->set_output(first + 2, PartialShape({rank}));
}

Status SparseToDenseShape(InferenceContext* c) {
  PartialShape indices;
  if (c->input(0).known_rank() && c->input(0).rank() > 2) {
    return errors::InvalidArgument("sparse_indices must have rank <= 2 but has shape ",
                                   c->input(0));
  }
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, ShapeVectorInput(c, 1));
  if (dims.has_value()) {
    WEIR_ASSIGN_OR_RETURN(PartialShape out, PartialShape::FromDims(*dims));
    c->set_output(0, std::move(out));
  }
  return Status::OK();
}

Status SparseTensorDenseMatMulShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t rank, SparseInputs(c, 0, 1, 2));
  if (rank != PartialShape::kUnknown && rank != 2) {
    return errors::InvalidArgument("the sparse operand must be a matrix but has rank ", rank);
  }
  PartialShape b;
  WEIR_RETURN_IF_ERROR(c->WithRank(3, 2, &b));
  bool adjoint_a = false, adjoint_b = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("adjoint_a", &adjoint_a));
  WEIR_RETURN_IF_ERROR(c->GetAttr("adjoint_b", &adjoint_b));
  int64_t rows = PartialShape::kUnknown;
  if (const Tensor* t = c->input_tensor(2)) {
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, IntTensorElements(*t, "a_shape"));
    if (shape.size() == 2 && shape[0] >= 0 && shape[1] >= 0) rows = shape[adjoint_a ? 1 : 0];
  }
  const int64_t cols = b.known_rank() ? b.dim(adjoint_b ? 0 : 1) : PartialShape::kUnknown;
  c->set_output(0, PartialShape({rows, cols}));
  return Status::OK();
}

Status SparseReorderShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(SparseInputs(c, 0, 1, 2).status());
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(1));
  return Status::OK();
}

Status SparseReshapeShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(auto dims, IndexMatrix(c, 0));
  WEIR_RETURN_IF_ERROR(VectorLength(c, 1).status());
  WEIR_ASSIGN_OR_RETURN(int64_t new_rank, VectorLength(c, 2));
  c->set_output(0, PartialShape({dims.first, new_rank}));
  c->set_output(1, PartialShape({new_rank}));
  return Status::OK();
}

Status SparseAddShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t rank, SparseInputs(c, 0, 1, 2));
  WEIR_RETURN_IF_ERROR(SparseInputs(c, 3, 4, 5).status());
  PartialShape thresh;
  WEIR_RETURN_IF_ERROR(c->WithRank(6, 0, &thresh));
  SetSparseOutputs(c, 0, rank);
  return Status::OK();
}

Status SparseAddGradShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(auto a, IndexMatrix(c, 1));
  WEIR_ASSIGN_OR_RETURN(auto b, IndexMatrix(c, 2));
  c->set_output(0, PartialShape({a.first}));
  c->set_output(1, PartialShape({b.first}));
  return Status::OK();
}

Status SparseFillEmptyRowsShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t rank, SparseInputs(c, 0, 1, 2));
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRank(3, 0, &unused));
  int64_t rows = PartialShape::kUnknown;
  if (const Tensor* t = c->input_tensor(2)) {
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, IntTensorElements(*t, "dense_shape"));
    if (!shape.empty() && shape[0] >= 0) rows = shape[0];
  }
  c->set_output(0, PartialShape({PartialShape::kUnknown, rank}));
  c->set_output(1, PartialShape({PartialShape::kUnknown}));
  c->set_output(2, PartialShape({rows}));
  c->set_output(
      3, PartialShape({c->input(0).known_rank() ? c->input(0).dim(0) : PartialShape::kUnknown}));
  return Status::OK();
}

Status SparseFillEmptyRowsGradShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t n, VectorLength(c, 0));
  WEIR_RETURN_IF_ERROR(VectorLength(c, 1).status());
  c->set_output(0, PartialShape({n}));
  c->set_output(1, PartialShape({}));
  return Status::OK();
}

// data [R, rest...], indices [n], segment_ids [n] (and num_segments when
// `num_segments_input` >= 0) give [segments, rest...].
Status SparseSegmentShape(InferenceContext* c, int num_segments_input) {
  PartialShape data;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &data));
  WEIR_ASSIGN_OR_RETURN(int64_t num_indices, VectorLength(c, 1));
  WEIR_ASSIGN_OR_RETURN(int64_t num_ids, VectorLength(c, 2));
  int64_t merged;
  if (!InferenceContext::MergeDim(num_indices, num_ids, &merged).ok()) {
    return errors::InvalidArgument("indices shape ", c->input(1), " and segment_ids shape ",
                                   c->input(2), " must have the same length");
  }
  int64_t segments = PartialShape::kUnknown;
  if (num_segments_input >= 0) {
    PartialShape unused;
    WEIR_RETURN_IF_ERROR(c->WithRank(num_segments_input, 0, &unused));
    if (const Tensor* t = c->input_tensor(num_segments_input)) {
      WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorValues(*t, "num_segments"));
      if (values.at(0) < 0) {
        return errors::InvalidArgument("num_segments = ", values.at(0), " must not be negative");
      }
      segments = values.at(0);
    }
  }
  if (!data.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  std::vector<int64_t> dims = data.dim_sizes();
  dims[0] = segments;
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

Status SparseSegmentGradShape(InferenceContext* c) {
  PartialShape grad;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &grad));
  WEIR_RETURN_IF_ERROR(VectorLength(c, 1).status());
  WEIR_RETURN_IF_ERROR(VectorLength(c, 2).status());
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRank(3, 0, &unused));
  int64_t rows = PartialShape::kUnknown;
  if (const Tensor* t = c->input_tensor(3)) {
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorValues(*t, "output_dim0"));
    if (values.at(0) < 0) {
      return errors::InvalidArgument("output_dim0 = ", values.at(0), " must not be negative");
    }
    rows = values.at(0);
  }
  if (!grad.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  std::vector<int64_t> dims = grad.dim_sizes();
  dims[0] = rows;
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// The dense output's rank and dims are known only from constant inputs;
// the kernel checks everything.
Status SparseReduceShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(SparseInputs(c, 0, 1, 2).status());
  c->set_output(0, PartialShape::UnknownRank());
  return Status::OK();
}

Status SparseReduceSparseShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(SparseInputs(c, 0, 1, 2).status());
  SetSparseOutputs(c, 0, PartialShape::kUnknown);
  return Status::OK();
}

// Output 0 has the shape of the values input.
Status SparseValuesShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(SparseInputs(c, 0, 1, 2).status());
  c->set_output(0, c->input(1));
  return Status::OK();
}

Status SparseConcatShape(InferenceContext* c) {
  int64_t n = 0;
  WEIR_RETURN_IF_ERROR(c->GetAttr("N", &n));
  int64_t rank = PartialShape::kUnknown;
  for (int i = 0; i < n; ++i) {
    const int k = static_cast<int>(n);
    WEIR_ASSIGN_OR_RETURN(int64_t r, SparseInputs(c, i, k + i, 2 * k + i));
    if (!InferenceContext::MergeDim(rank, r, &rank).ok()) {
      return errors::InvalidArgument(
          "the inputs of SparseConcat must have the same rank, but "
          "input ",
          i, " has rank ", r);
    }
  }
  SetSparseOutputs(c, 0, rank);
  return Status::OK();
}

Status SparseSliceShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(int64_t rank, SparseInputs(c, 0, 1, 2));
  WEIR_RETURN_IF_ERROR(VectorLength(c, 3).status());
  WEIR_RETURN_IF_ERROR(VectorLength(c, 4).status());
  SetSparseOutputs(c, 0, rank);
  return Status::OK();
}

Status SparseSliceGradShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(VectorLength(c, 0).status());
  WEIR_ASSIGN_OR_RETURN(auto dims, IndexMatrix(c, 1));
  c->set_output(0, PartialShape({dims.first}));
  return Status::OK();
}

Status SparseTensorDenseAddShape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(SparseInputs(c, 0, 1, 2).status());
  c->set_output(0, c->input(3));
  return Status::OK();
}

void RegisterSparseSegment(OpRegistry* registry, const std::string& name, const char* types,
                           bool with_num_segments, const char* doc) {
  OpDefBuilder b(with_num_segments ? name + "WithNumSegments" : name);
  b.Input("data: T").Input("indices: Tidx").Input("segment_ids: Tsegmentids");
  if (with_num_segments) b.Input("num_segments: Tnumsegments");
  b.Output("output: T").Attr(StrCat("T: ", types)).Attr("Tidx: {int32, int64} = int32");
  if (with_num_segments) b.Attr("Tnumsegments: {int32, int64} = int32");
  b.Attr("Tsegmentids: {int32, int64} = int32").Attr("sparse_gradient: bool = false");
  b.SetShapeFn([with_num_segments](InferenceContext* c) {
    return SparseSegmentShape(c, with_num_segments ? 3 : -1);
  });
  registry->Register(b.Doc(doc));
}

void RegisterSparseSegmentGrad(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("grad: T")
                         .Input("indices: Tidx")
                         .Input("segment_ids: Tsegmentids")
                         .Input("output_dim0: int32")
                         .Output("output: T")
                         .Attr(StrCat("T: ", kFloatTypes))
                         .Attr("Tidx: {int32, int64} = int32")
                         .Attr("Tsegmentids: {int32, int64} = int32")
                         .SetShapeFn(SparseSegmentGradShape)
                         .Doc(doc));
}

// grad [segments, rest...] gives output [unique indices, rest...] and the
// sorted unique indices [unique].
Status SparseSegmentGradV2Shape(InferenceContext* c) {
  PartialShape grad;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &grad));
  WEIR_RETURN_IF_ERROR(VectorLength(c, 1).status());
  WEIR_RETURN_IF_ERROR(VectorLength(c, 2).status());
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRank(3, 0, &unused));
  if (!grad.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
  } else {
    std::vector<int64_t> dims = grad.dim_sizes();
    dims[0] = PartialShape::kUnknown;
    c->set_output(0, PartialShape(std::move(dims)));
  }
  c->set_output(1, PartialShape({PartialShape::kUnknown}));
  return Status::OK();
}

void RegisterSparseSegmentGradV2(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("grad: T")
                         .Input("indices: Tidx")
                         .Input("segment_ids: Tsegmentids")
                         .Input("dense_output_dim0: int32")
                         .Output("output: T")
                         .Output("sorted_unique_indices: Tidx")
                         .Attr(StrCat("T: ", kFloatTypes))
                         .Attr("Tidx: {int32, int64} = int32")
                         .Attr("Tsegmentids: {int32, int64} = int32")
                         .SetShapeFn(SparseSegmentGradV2Shape)
                         .Doc(doc));
}

void RegisterSparseDenseCwise(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("sp_indices: int64")
                         .Input("sp_values: T")
                         .Input("sp_shape: int64")
                         .Input("dense: T")
                         .Output("output: T")
                         .Attr(StrCat("T: ", kNumberTypes))
                         .SetShapeFn(SparseValuesShape)
                         .Doc(doc));
}

void RegisterSparseTensorOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("SparseToDense")
          .Input("sparse_indices: Tindices")
          .Input("output_shape: Tindices")
          .Input("sparse_values: T")
          .Input("default_value: T")
          .Output("dense: T")
          .Attr("validate_indices: bool = true")
          .Attr("T: type")
          .Attr("Tindices: {int32, int64}")
          .SetShapeFn(SparseToDenseShape)
          .Doc("A dense tensor of shape output_shape filled with default_value, with "
               "sparse_values (one per row of sparse_indices, or a scalar for all) at "
               "sparse_indices. validate_indices: indices must be in range, sorted and unique."));
  registry->Register(
      OpDefBuilder("SparseTensorDenseMatMul")
          .Input("a_indices: Tindices")
          .Input("a_values: T")
          .Input("a_shape: int64")
          .Input("b: T")
          .Output("product: T")
          .Attr("T: type")
          .Attr("Tindices: {int32, int64} = int64")
          .Attr("adjoint_a: bool = false")
          .Attr("adjoint_b: bool = false")
          .SetShapeFn(SparseTensorDenseMatMulShape)
          .Doc("The product of the sparse matrix A (a_indices, a_values, a_shape) and the dense "
               "matrix b, each optionally adjoint (conjugate transposed)."));
  registry->Register(OpDefBuilder("SparseReorder")
                         .Input("input_indices: int64")
                         .Input("input_values: T")
                         .Input("input_shape: int64")
                         .Output("output_indices: int64")
                         .Output("output_values: T")
                         .Attr("T: type")
                         .SetShapeFn(SparseReorderShape)
                         .Doc("The entries of a SparseTensor in row-major (canonical) order."));
  registry->Register(OpDefBuilder("SparseReshape")
                         .Input("input_indices: int64")
                         .Input("input_shape: int64")
                         .Input("new_shape: int64")
                         .Output("output_indices: int64")
                         .Output("output_shape: int64")
                         .SetShapeFn(SparseReshapeShape)
                         .Doc("A SparseTensor's indices for a new dense shape of the same size "
                              "(one dim of new_shape may be -1); the entries keep their order."));
  registry->Register(
      OpDefBuilder("SparseAdd")
          .Input("a_indices: int64")
          .Input("a_values: T")
          .Input("a_shape: int64")
          .Input("b_indices: int64")
          .Input("b_values: T")
          .Input("b_shape: int64")
          .Input("thresh: Treal")
          .Output("sum_indices: int64")
          .Output("sum_values: T")
          .Output("sum_shape: int64")
          .Attr(StrCat("T: ", kNumberTypes))
          .Attr(StrCat("Treal: ", kRealNumberTypes))
          .SetShapeFn(SparseAddShape)
          .Doc("The sum of two SparseTensors of one shape, each in canonical order; sums whose "
               "magnitude is below thresh are dropped."));
  registry->Register(OpDefBuilder("SparseAddGrad")
                         .Input("backprop_val_grad: T")
                         .Input("a_indices: int64")
                         .Input("b_indices: int64")
                         .Input("sum_indices: int64")
                         .Output("a_val_grad: T")
                         .Output("b_val_grad: T")
                         .Attr(StrCat("T: ", kNumberTypes))
                         .SetShapeFn(SparseAddGradShape)
                         .Doc("The gradients of SparseAdd's a_values and b_values: the sum's "
                              "gradient at each of their indices (0 where dropped)."));
  registry->Register(
      OpDefBuilder("SparseFillEmptyRows")
          .Input("indices: int64")
          .Input("values: T")
          .Input("dense_shape: int64")
          .Input("default_value: T")
          .Output("output_indices: int64")
          .Output("output_values: T")
          .Output("empty_row_indicator: bool")
          .Output("reverse_index_map: int64")
          .Attr("T: type")
          .SetShapeFn(SparseFillEmptyRowsShape)
          .Doc("Adds (row, 0, ...) = default_value for each row with no entry; the output is "
               "row-ordered. reverse_index_map[i] is where input entry i went."));
  registry->Register(OpDefBuilder("SparseFillEmptyRowsGrad")
                         .Input("reverse_index_map: int64")
                         .Input("grad_values: T")
                         .Output("d_values: T")
                         .Output("d_default_value: T")
                         .Attr("T: type")
                         .SetShapeFn(SparseFillEmptyRowsGradShape)
                         .Doc("The gradients of SparseFillEmptyRows' values and default_value."));
  registry->Register(OpDefBuilder("SparseReduceSum")
                         .Input("input_indices: int64")
                         .Input("input_values: T")
                         .Input("input_shape: int64")
                         .Input("reduction_axes: int32")
                         .Output("output: T")
                         .Attr("keep_dims: bool = false")
                         .Attr(StrCat("T: ", kNumberTypes))
                         .SetShapeFn(SparseReduceShape)
                         .Doc("The dense sum of a SparseTensor over reduction_axes (all when "
                              "empty); keep_dims keeps them as 1s."));
  registry->Register(OpDefBuilder("SparseReduceSumSparse")
                         .Input("input_indices: int64")
                         .Input("input_values: T")
                         .Input("input_shape: int64")
                         .Input("reduction_axes: int32")
                         .Output("output_indices: int64")
                         .Output("output_values: T")
                         .Output("output_shape: int64")
                         .Attr("keep_dims: bool = false")
                         .Attr(StrCat("T: ", kNumberTypes))
                         .SetShapeFn(SparseReduceSparseShape)
                         .Doc("As SparseReduceSum, the result as a SparseTensor."));
  registry->Register(OpDefBuilder("SparseSoftmax")
                         .Input("sp_indices: int64")
                         .Input("sp_values: T")
                         .Input("sp_shape: int64")
                         .Output("output: T")
                         .Attr("T: {half, float, double}")
                         .SetShapeFn(SparseValuesShape)
                         .Doc("Softmax over the entries of each innermost row of a canonically "
                              "ordered SparseTensor (absent entries take no part)."));
  registry->Register(OpDefBuilder("SparseConcat")
                         .Input("indices: N * int64")
                         .Input("values: N * T")
                         .Input("shapes: N * int64")
                         .Output("output_indices: int64")
                         .Output("output_values: T")
                         .Output("output_shape: int64")
                         .Attr("concat_dim: int")
                         .Attr("N: int >= 2")
                         .Attr("T: type")
                         .SetShapeFn(SparseConcatShape)
                         .Doc("SparseTensors joined along concat_dim (negative counts from the "
                              "end), the result in canonical order."));
  registry->Register(OpDefBuilder("SparseSlice")
                         .Input("indices: int64")
                         .Input("values: T")
                         .Input("shape: int64")
                         .Input("start: int64")
                         .Input("size: int64")
                         .Output("output_indices: int64")
                         .Output("output_values: T")
                         .Output("output_shape: int64")
                         .Attr("T: type")
                         .SetShapeFn(SparseSliceShape)
                         .Doc("The entries of a SparseTensor inside [start, start + size), "
                              "indices relative to start; the size is clipped to the shape."));
  registry->Register(OpDefBuilder("SparseSliceGrad")
                         .Input("backprop_val_grad: T")
                         .Input("input_indices: int64")
                         .Input("input_start: int64")
                         .Input("output_indices: int64")
                         .Output("val_grad: T")
                         .Attr(StrCat("T: ", kNumberTypes))
                         .SetShapeFn(SparseSliceGradShape)
                         .Doc("The gradient of SparseSlice's values: the slice's value gradients "
                              "at the entries that were kept, 0 elsewhere."));
  registry->Register(OpDefBuilder("SparseTensorDenseAdd")
                         .Input("a_indices: Tindices")
                         .Input("a_values: T")
                         .Input("a_shape: Tindices")
                         .Input("b: T")
                         .Output("output: T")
                         .Attr(StrCat("T: ", kNumberTypes))
                         .Attr("Tindices: {int32, int64}")
                         .SetShapeFn(SparseTensorDenseAddShape)
                         .Doc("The dense b plus the SparseTensor a of the same shape."));
  RegisterSparseDenseCwise(registry, "SparseDenseCwiseMul",
                           "The SparseTensor's values times the dense tensor (broadcast to its "
                           "shape) at its indices.");
  RegisterSparseDenseCwise(registry, "SparseDenseCwiseDiv",
                           "The SparseTensor's values divided by the dense tensor (broadcast "
                           "to its shape) at its indices.");
  RegisterSparseDenseCwise(registry, "SparseDenseCwiseAdd",
                           "The SparseTensor's values plus the dense tensor (broadcast to its "
                           "shape) at its indices.");
}

}  // namespace

void RegisterSparseOps(OpRegistry* registry) {
  RegisterSparseTensorOps(registry);
  for (bool with_num : {false, true}) {
    RegisterSparseSegment(registry, "SparseSegmentSum", kRealNumberTypes, with_num,
                          "output[s] = sum of data[indices[i]] over the i with segment_ids[i] == "
                          "s; segment_ids sorted, segments without ids are 0.");
    RegisterSparseSegment(registry, "SparseSegmentMean", kFloatTypes, with_num,
                          "As SparseSegmentSum, divided by the number of rows in the segment.");
    RegisterSparseSegment(registry, "SparseSegmentSqrtN", kFloatTypes, with_num,
                          "As SparseSegmentSum, divided by the square root of the number of "
                          "rows in the segment.");
  }
  RegisterSparseSegmentGrad(registry, "SparseSegmentSumGrad",
                            "The gradient of SparseSegmentSum's data: output_dim0 rows, row "
                            "indices[i] adding grad[segment_ids[i]].");
  RegisterSparseSegmentGrad(registry, "SparseSegmentMeanGrad",
                            "The gradient of SparseSegmentMean's data.");
  RegisterSparseSegmentGrad(registry, "SparseSegmentSqrtNGrad",
                            "The gradient of SparseSegmentSqrtN's data.");
  for (const char* name :
       {"SparseSegmentSumGradV2", "SparseSegmentMeanGradV2", "SparseSegmentSqrtNGradV2"}) {
    RegisterSparseSegmentGradV2(registry, name,
                                "The *Grad op's rows for the unique indices only (sorted), "
                                "with those indices: the gradient as an IndexedSlices.");
  }
}

}  // namespace weir
