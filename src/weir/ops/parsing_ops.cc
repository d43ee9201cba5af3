// The parsing family: tf.train.Example parsing (ParseExampleV2,
// ParseSingleExample), DecodeRaw, DecodeCSV, StringToNumber and the
// TensorProto round trip (SerializeTensor, ParseTensor), with TensorFlow's
// op signatures and shape functions.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

Status WithRankAtMost(InferenceContext* c, int input, int rank) {
  const PartialShape& shape = c->input(input);
  if (shape.known_rank() && shape.rank() > rank) {
    return errors::InvalidArgument("input ", input, " must have rank at most ", rank,
                                   " but has shape ", shape);
  }
  return Status::OK();
}

// Each dense shape may have an unknown first dim (a variable-length feature,
// padded to the longest) but must be known beyond it.
Status CheckDenseShapes(const std::vector<PartialShape>& dense_shapes) {
  for (size_t i = 0; i < dense_shapes.size(); ++i) {
    const PartialShape& shape = dense_shapes[i];
    bool known = shape.known_rank();
    for (int d = 1; known && d < shape.rank(); ++d) known = shape.dim(d) >= 0;
    if (!known) {
      return errors::InvalidArgument("dense_shapes[", i, "] ", shape,
                                     " has unknown rank or unknown inner dimensions");
    }
  }
  return Status::OK();
}

// `prefix` (the batch shape: [] or [n] or unknown) followed by `shape`.
PartialShape Concatenate(const PartialShape& prefix, const PartialShape& shape) {
  if (!prefix.known_rank() || !shape.known_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims = prefix.dim_sizes();
  dims.insert(dims.end(), shape.dim_sizes().begin(), shape.dim_sizes().end());
  return PartialShape(std::move(dims));
}

// indices [?, rank], values [?], dense shape [rank] per sparse feature,
// rank being the batch rank plus one.
void SetSparseOutputs(InferenceContext* c, int num_sparse, const PartialShape& batch, int* next) {
  const int64_t rank = batch.known_rank() ? batch.rank() + 1 : -1;
  for (int i = 0; i < num_sparse; ++i) c->set_output((*next)++, PartialShape({-1, rank}));
  for (int i = 0; i < num_sparse; ++i) c->set_output((*next)++, PartialShape({-1}));
  for (int i = 0; i < num_sparse; ++i) c->set_output((*next)++, PartialShape({rank}));
}

void SetDenseOutputs(InferenceContext* c, const std::vector<PartialShape>& dense_shapes,
                     const PartialShape& batch, int* next) {
  for (const PartialShape& shape : dense_shapes)
    c->set_output((*next)++, Concatenate(batch, shape));
}

Status ParseExampleV2Shape(InferenceContext* c) {
  int64_t num_sparse;
  std::vector<DType> sparse_types, dense_types, ragged_value_types, ragged_split_types;
  std::vector<PartialShape> dense_shapes;
  WEIR_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
  WEIR_RETURN_IF_ERROR(c->GetAttr("sparse_types", &sparse_types));
  WEIR_RETURN_IF_ERROR(c->GetAttr("Tdense", &dense_types));
  WEIR_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
  WEIR_RETURN_IF_ERROR(c->GetAttr("ragged_value_types", &ragged_value_types));
  WEIR_RETURN_IF_ERROR(c->GetAttr("ragged_split_types", &ragged_split_types));
  if (num_sparse != static_cast<int64_t>(sparse_types.size())) {
    return errors::InvalidArgument("num_sparse is ", num_sparse, " but sparse_types has ",
                                   sparse_types.size(), " entries");
  }
  if (dense_types.size() != dense_shapes.size()) {
    return errors::InvalidArgument("Tdense has ", dense_types.size(),
                                   " entries but dense_shapes has ", dense_shapes.size());
  }
  if (ragged_value_types.size() != ragged_split_types.size()) {
    return errors::InvalidArgument("ragged_value_types has ", ragged_value_types.size(),
                                   " entries but ragged_split_types has ",
                                   ragged_split_types.size());
  }
  WEIR_RETURN_IF_ERROR(CheckDenseShapes(dense_shapes));
  WEIR_RETURN_IF_ERROR(WithRankAtMost(c, 0, 1));
  WEIR_RETURN_IF_ERROR(WithRankAtMost(c, 1, 1));
  const PartialShape& batch = c->input(0);
  int next = 0;
  SetSparseOutputs(c, static_cast<int>(num_sparse), batch, &next);
  SetDenseOutputs(c, dense_shapes, batch, &next);
  // Row splits hold one more entry than there are examples.
  int64_t num_splits = -1;
  if (batch.rank() == 1 && batch.dim(0) >= 0) {
    WEIR_RETURN_IF_ERROR(InferenceContext::AddDims(batch.dim(0), 1, "row splits", &num_splits));
  }
  for (size_t i = 0; i < ragged_value_types.size(); ++i) c->set_output(next++, PartialShape({-1}));
  for (size_t i = 0; i < ragged_split_types.size(); ++i) {
    c->set_output(next++, PartialShape({num_splits}));
  }
  return Status::OK();
}

Status ParseSingleExampleShape(InferenceContext* c) {
  int64_t num_sparse;
  std::vector<std::string> sparse_keys, dense_keys;
  std::vector<DType> sparse_types, dense_types;
  std::vector<PartialShape> dense_shapes;
  WEIR_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
  WEIR_RETURN_IF_ERROR(c->GetAttr("sparse_keys", &sparse_keys));
  WEIR_RETURN_IF_ERROR(c->GetAttr("dense_keys", &dense_keys));
  WEIR_RETURN_IF_ERROR(c->GetAttr("sparse_types", &sparse_types));
  WEIR_RETURN_IF_ERROR(c->GetAttr("Tdense", &dense_types));
  WEIR_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
  if (num_sparse != static_cast<int64_t>(sparse_keys.size()) ||
      sparse_keys.size() != sparse_types.size()) {
    return errors::InvalidArgument("num_sparse is ", num_sparse, " but sparse_keys has ",
                                   sparse_keys.size(), " and sparse_types ", sparse_types.size(),
                                   " entries");
  }
  if (dense_keys.size() != dense_types.size() || dense_keys.size() != dense_shapes.size()) {
    return errors::InvalidArgument("dense_keys has ", dense_keys.size(), " entries, Tdense ",
                                   dense_types.size(), " and dense_shapes ", dense_shapes.size());
  }
  WEIR_RETURN_IF_ERROR(CheckDenseShapes(dense_shapes));
  PartialShape scalar;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 0, &scalar));
  int next = 0;
  SetSparseOutputs(c, static_cast<int>(num_sparse), scalar, &next);
  SetDenseOutputs(c, dense_shapes, scalar, &next);
  return Status::OK();
}

// Each default is a scalar or a vector of at most one element.
Status DecodeCSVShape(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs(); ++i) {
    WEIR_RETURN_IF_ERROR(WithRankAtMost(c, i, 1));
    const PartialShape& shape = c->input(i);
    if (shape.rank() == 1 && shape.dim(0) > 1) {
      return errors::InvalidArgument("record_defaults[", i - 1, "] has shape ", shape,
                                     " but a default must be a scalar or a vector of length 0 "
                                     "or 1");
    }
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
  return Status::OK();
}

// The input's shape and one more dim, whose size depends on the data.
Status DecodeRawShape(InferenceContext* c) {
  c->set_output(0, Concatenate(c->input(0), PartialShape({-1})));
  return Status::OK();
}

Status SameShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return Status::OK();
}

Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

Status ParseTensorShape(InferenceContext* c) {
  c->set_output(0, PartialShape::UnknownRank());
  return Status::OK();
}

}  // namespace

// ParseExample (V1): the keys are scalar inputs, one per feature.
Status ParseExampleShape(InferenceContext* c) {
  int64_t num_sparse = 0, num_dense = 0;
  std::vector<DType> sparse_types, dense_types;
  std::vector<PartialShape> dense_shapes;
  WEIR_RETURN_IF_ERROR(c->GetAttr("Nsparse", &num_sparse));
  WEIR_RETURN_IF_ERROR(c->GetAttr("Ndense", &num_dense));
  WEIR_RETURN_IF_ERROR(c->GetAttr("sparse_types", &sparse_types));
  WEIR_RETURN_IF_ERROR(c->GetAttr("Tdense", &dense_types));
  WEIR_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
  if (num_sparse != static_cast<int64_t>(sparse_types.size()) ||
      num_dense != static_cast<int64_t>(dense_types.size()) ||
      dense_types.size() != dense_shapes.size()) {
    return errors::InvalidArgument("Nsparse (", num_sparse, ") and sparse_types (",
                                   sparse_types.size(), "), Ndense (", num_dense, "), Tdense (",
                                   dense_types.size(), ") and dense_shapes (", dense_shapes.size(),
                                   ") must agree");
  }
  WEIR_RETURN_IF_ERROR(CheckDenseShapes(dense_shapes));
  WEIR_RETURN_IF_ERROR(WithRankAtMost(c, 0, 1));
  WEIR_RETURN_IF_ERROR(WithRankAtMost(c, 1, 1));
  for (int i = 0; i < num_sparse + num_dense; ++i) {
    PartialShape key;
    WEIR_RETURN_IF_ERROR(c->WithRank(2 + i, 0, &key));
  }
  const PartialShape& batch = c->input(0);
  int next = 0;
  SetSparseOutputs(c, static_cast<int>(num_sparse), batch, &next);
  SetDenseOutputs(c, dense_shapes, batch, &next);
  return Status::OK();
}

void RegisterParsingOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("ParseExample")
          .Input("serialized: string")
          .Input("names: string")
          .Input("sparse_keys: Nsparse * string")
          .Input("dense_keys: Ndense * string")
          .Input("dense_defaults: Tdense")
          .Output("sparse_indices: Nsparse * int64")
          .Output("sparse_values: sparse_types")
          .Output("sparse_shapes: Nsparse * int64")
          .Output("dense_values: Tdense")
          .Attr("Nsparse: int >= 0")
          .Attr("Ndense: int >= 0")
          .Attr("sparse_types: list({float, int64, string}) >= 0")
          .Attr("Tdense: list({float, int64, string}) >= 0")
          .Attr("dense_shapes: list(shape) >= 0")
          .SetShapeFn(ParseExampleShape)
          .Doc("ParseExampleV2's older form (TF1 graphs): each key a scalar input, no "
               "ragged features."));
  registry->Register(
      OpDefBuilder("ParseExampleV2")
          .Attr("Tdense: list({float, int64, string}) >= 0")
          .Attr("num_sparse: int >= 0")
          .Attr("sparse_types: list({float, int64, string}) >= 0")
          .Attr("ragged_value_types: list({float, int64, string}) >= 0")
          .Attr("ragged_split_types: list({int32, int64}) >= 0")
          .Attr("dense_shapes: list(shape) >= 0")
          .Input("serialized: string")
          .Input("names: string")
          .Input("sparse_keys: string")
          .Input("dense_keys: string")
          .Input("ragged_keys: string")
          .Input("dense_defaults: Tdense")
          .Output("sparse_indices: num_sparse * int64")
          .Output("sparse_values: sparse_types")
          .Output("sparse_shapes: num_sparse * int64")
          .Output("dense_values: Tdense")
          .Output("ragged_values: ragged_value_types")
          .Output("ragged_row_splits: ragged_split_types")
          .SetShapeFn(ParseExampleV2Shape)
          .Doc("Parses a scalar or vector of serialized tf.train.Example protos. Dense "
               "features get `dense_shapes` (an unknown first dim pads variable-length "
               "features with their scalar default), taking `dense_defaults[j]` when missing "
               "(an empty default makes the feature required); sparse features give "
               "indices, values and dense shape; ragged features give values and row "
               "splits. `names` (empty, or one per example) name examples in errors."));
  registry->Register(
      OpDefBuilder("ParseSingleExample")
          .Attr("num_sparse: int >= 0")
          .Attr("sparse_keys: list(string) >= 0")
          .Attr("dense_keys: list(string) >= 0")
          .Attr("sparse_types: list({float, int64, string}) >= 0")
          .Attr("Tdense: list({float, int64, string}) >= 0")
          .Attr("dense_shapes: list(shape) >= 0")
          .Input("serialized: string")
          .Input("dense_defaults: Tdense")
          .Output("sparse_indices: num_sparse * int64")
          .Output("sparse_values: sparse_types")
          .Output("sparse_shapes: num_sparse * int64")
          .Output("dense_values: Tdense")
          .SetShapeFn(ParseSingleExampleShape)
          .Doc("Parses one serialized tf.train.Example (a scalar); as ParseExampleV2 with "
               "the keys as attrs and no batch dimension."));
  registry->Register(
      OpDefBuilder("DecodeRaw")
          .Attr("out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, "
                "complex64, complex128, bool, bfloat16}")
          .Attr("little_endian: bool = true")
          .Input("bytes: string")
          .Output("output: out_type")
          .SetShapeFn(DecodeRawShape)
          .Doc("Reinterprets each string's bytes as a vector of `out_type` (byte order "
               "`little_endian`); all strings must have the same length, a multiple of the "
               "element size. Output: the input's shape plus that vector's length."));
  registry->Register(
      OpDefBuilder("DecodeCSV")
          .Attr("OUT_TYPE: list({float, double, int32, int64, string}) >= 1")
          .Attr("field_delim: string = ','")
          .Attr("use_quote_delim: bool = true")
          .Attr("na_value: string = ''")
          .Attr("select_cols: list(int) = []")
          .Input("records: string")
          .Input("record_defaults: OUT_TYPE")
          .Output("output: OUT_TYPE")
          .SetShapeFn(DecodeCSVShape)
          .Doc("Splits each CSV record into its fields (or the `select_cols` among them), "
               "converted to OUT_TYPE; an empty or `na_value` field takes its record default "
               "(an empty default makes the field required). With `use_quote_delim`, fields "
               "may be double-quoted, \"\" escaping a quote."));
  registry->Register(OpDefBuilder("StringToNumber")
                         .Attr("out_type: {float, double, int32, int64, uint32, uint64} = float")
                         .Input("string_tensor: string")
                         .Output("output: out_type")
                         .SetShapeFn(SameShape)
                         .Doc("Converts each string to a number of `out_type`; a string that "
                              "is not one is an error naming it."));
  registry->Register(OpDefBuilder("SerializeTensor")
                         .Attr("T: type")
                         .Input("tensor: T")
                         .Output("serialized: string")
                         .SetShapeFn(ScalarShape)
                         .Doc("Serializes `tensor` as a TensorProto."));
  registry->Register(OpDefBuilder("ParseTensor")
                         .Attr("out_type: type")
                         .Input("serialized: string")
                         .Output("output: out_type")
                         .SetShapeFn(ParseTensorShape)
                         .Doc("Parses a serialized TensorProto (a scalar string) into a tensor "
                              "of dtype `out_type`."));
}

}  // namespace weir
