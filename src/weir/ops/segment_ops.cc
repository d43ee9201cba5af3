// The math family's segment reductions (rows of `data` summed, multiplied,
// or maxed into the segment each row's id names) and cumulative scans
// (Cumsum, Cumprod). Type sets follow TensorFlow's declarations so imported
// graphs validate; which of those types have CPU kernels is up to kernels/.
#include "weir/base/checked_math.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// data [S..., rest...] with segment_ids [S...] and scalar num_segments n
// gives [n, rest...].
Status UnsortedSegmentShape(InferenceContext* c) {
  const PartialShape& data = c->input(0);
  const PartialShape& ids = c->input(1);
  const PartialShape& num = c->input(2);
  if (num.known_rank() && num.rank() != 0) {
    return errors::InvalidArgument("num_segments must be a scalar but has shape ", num);
  }
  int64_t segments = -1;
  if (const Tensor* t = c->input_tensor(2)) {
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorValues(*t, "num_segments"));
    segments = values.at(0);
    if (segments < 0) {
      return errors::InvalidArgument("num_segments = ", segments, " must not be negative");
    }
  }
  if (!data.known_rank() || !ids.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  if (ids.rank() > data.rank()) {
    return errors::InvalidArgument("data shape ", data, " does not start with segment_ids shape ",
                                   ids);
  }
  for (int i = 0; i < ids.rank(); ++i) {
    int64_t merged;
    if (!InferenceContext::MergeDim(data.dim(i), ids.dim(i), &merged).ok()) {
      return errors::InvalidArgument("data shape ", data, " does not start with segment_ids shape ",
                                     ids);
    }
  }
  std::vector<int64_t> dims = {segments};
  dims.insert(dims.end(), data.dim_sizes().begin() + ids.rank(), data.dim_sizes().end());
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// data [n, rest...] with sorted segment_ids [n] gives [last id + 1, rest...].
Status SortedSegmentShape(InferenceContext* c) {
  PartialShape data, ids;
  WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &data));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &ids));
  if (!data.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return Status::OK();
  }
  int64_t rows;
  if (ids.known_rank() && !InferenceContext::MergeDim(data.dim(0), ids.dim(0), &rows).ok()) {
    return errors::InvalidArgument("segment_ids shape ", ids, " must have dim 0 of data shape ",
                                   data);
  }
  std::vector<int64_t> dims = data.dim_sizes();
  dims[0] = -1;
  if (const Tensor* t = c->input_tensor(1)) {
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorElements(*t, "segment_ids"));
    if (values.empty()) {
      dims[0] = 0;
    } else if (values.back() >= 0) {
      WEIR_RETURN_IF_ERROR(CheckedAdd(values.back(), 1, &dims[0], "SegmentSum segment count"));
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// Input 0's shape; the scalar axis, when known, must name one of its dims.
Status ScanShape(InferenceContext* c) {
  const PartialShape& x = c->input(0);
  const PartialShape& axis = c->input(1);
  if (axis.known_rank() && axis.rank() != 0) {
    return errors::InvalidArgument("axis must be a scalar but has shape ", axis);
  }
  const Tensor* axis_tensor = c->input_tensor(1);
  if (axis_tensor != nullptr && x.known_rank()) {
    WEIR_ASSIGN_OR_RETURN(std::vector<int64_t> values, IntTensorValues(*axis_tensor, "axis"));
    if (values.at(0) < -x.rank() || values.at(0) >= x.rank()) {
      return errors::InvalidArgument("axis ", values.at(0), " is not in [", -x.rank(), ", ",
                                     x.rank(), ") for input shape ", x);
    }
  }
  c->set_output(0, x);
  return Status::OK();
}

void RegisterUnsortedSegment(OpRegistry* registry, const char* name, const char* type_spec,
                             const char* index_spec, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("data: T")
                         .Input("segment_ids: Tindices")
                         .Input("num_segments: Tnumsegments")
                         .Output("output: T")
                         .Attr(type_spec)
                         .Attr(index_spec)
                         .Attr("Tnumsegments: {int32, int64} = int32")
                         .SetShapeFn(UnsortedSegmentShape)
                         .Doc(doc));
}

void RegisterScan(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("x: T")
                         .Input("axis: Tidx")
                         .Output("out: T")
                         .Attr("exclusive: bool = false")
                         .Attr("reverse: bool = false")
                         .Attr("T: numbertype")
                         .Attr("Tidx: {int32, int64} = int32")
                         .SetShapeFn(ScanShape)
                         .Doc(doc));
}

}  // namespace

void RegisterSegmentOps(OpRegistry* registry) {
  RegisterUnsortedSegment(registry, "UnsortedSegmentSum", "T: numbertype",
                          "Tindices: {int16, int32, int64}",
                          "output[s, ...] = sum of data[i..., ...] over the positions i with "
                          "segment_ids[i] == s; segment_ids shapes a prefix of data, negative "
                          "ids are dropped and ids >= num_segments are errors. Empty segments "
                          "are 0.");
  RegisterUnsortedSegment(registry, "UnsortedSegmentProd", "T: numbertype",
                          "Tindices: {int32, int64}",
                          "As UnsortedSegmentSum with a product; empty segments are 1.");
  RegisterUnsortedSegment(registry, "UnsortedSegmentMax", "T: realnumbertype",
                          "Tindices: {int32, int64}",
                          "As UnsortedSegmentSum with a maximum; empty segments are the lowest "
                          "value of T.");
  RegisterUnsortedSegment(registry, "UnsortedSegmentMin", "T: realnumbertype",
                          "Tindices: {int32, int64}",
                          "As UnsortedSegmentSum with a minimum; empty segments are the "
                          "highest value of T.");
  registry->Register(OpDefBuilder("SegmentSum")
                         .Input("data: T")
                         .Input("segment_ids: Tindices")
                         .Output("output: T")
                         .Attr("T: numbertype")
                         .Attr("Tindices: {int32, int64}")
                         .SetShapeFn(SortedSegmentShape)
                         .Doc("output[s, ...] = sum of the rows data[i, ...] with segment_ids[i] "
                              "== s, for a vector of non-decreasing, non-negative ids; the "
                              "output has last id + 1 rows, those no id names are 0."));
  RegisterScan(registry, "Cumsum",
               "Running sum of x along `axis`: out[i] = x[0] + ... + x[i]; `exclusive` "
               "stops before x[i] (out[0] = 0), `reverse` runs from the end.");
  RegisterScan(registry, "Cumprod",
               "Running product of x along `axis`: out[i] = x[0] * ... * x[i]; `exclusive` "
               "stops before x[i] (out[0] = 1), `reverse` runs from the end.");
}

}  // namespace weir
