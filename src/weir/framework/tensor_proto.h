// Conversion between Tensor / PartialShape and their wire forms, TensorProto
// and TensorShapeProto (proto/tensor.proto), in TensorFlow's encoding so
// constants and checkpoints written by TensorFlow read back unchanged.
//
// The generated protobuf classes are only declared here; include
// "proto/tensor.pb.h" in the .cc files that build or read them.
#pragma once

#include <string>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"

namespace weir::wire {
class TensorProto;
class TensorShapeProto;
}  // namespace weir::wire

namespace weir {

// Decodes `proto` into a newly allocated tensor. Accepts the raw bytes in
// tensor_content and the typed *_val fields. A typed field with fewer values
// than the shape holds is completed by repeating its last value; an empty one
// means zeros (empty strings, default handles). Unimplemented for DT_VARIANT
// (TensorFlow's serialized variants are not read). InvalidArgument, naming dtype
// and shape, for dtypes Weir does not support, negative or unknown dims, a
// tensor_content of the wrong size, more values than the shape holds and
// values that do not fit the dtype. `out` is set only on success.
Status TensorFromProto(const wire::TensorProto& proto, Tensor* out);

// Encodes `tensor`: numeric, bool, half and bfloat16 values as raw
// little-endian bytes in tensor_content, strings in string_val, resource
// handles in resource_handle_val. Replaces everything in `proto`.
// Unimplemented for DT_VARIANT: a TensorList or Optional lives only inside a
// step (`proto` then holds the dtype and shape, no values).
// REQUIRES: tensor.IsInitialized().
Status TensorToProto(const Tensor& tensor, wire::TensorProto* proto);

// Dim size -1 is an unknown dimension; unknown_rank an unknown rank.
// InvalidArgument for other negative sizes, for unknown_rank together with
// dims, and for ranks above TensorShape::kMaxRank.
Status ShapeFromProto(const wire::TensorShapeProto& proto, PartialShape* out);
// Replaces everything in `proto`.
void ShapeToProto(const PartialShape& shape, wire::TensorShapeProto* proto);

// A wire DataType number for error messages: "DT_QINT8 (11)", or
// "number 99" when the schema does not name it.
std::string WireDTypeName(int number);

}  // namespace weir
