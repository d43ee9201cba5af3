// Tensors on the distributed runtime's wire. Internal to the layer's .cc
// files that speak gRPC (it names generated protobuf types).
#pragma once

#include "proto/tensor.pb.h"
#include "weir/base/status.h"
#include "weir/framework/tensor.h"

namespace weir {

// TensorFromProto for a tensor that came from another process: refused
// (InvalidArgument naming `what`, the dtype and the declared shape) when the
// message declares more elements than it carries values, so a hostile
// shape never allocates its declared size. TensorToProto writes every
// element, so Weir's own messages always pass.
Status TensorFromWire(const wire::TensorProto& proto, std::string_view what, Tensor* out);

}  // namespace weir
