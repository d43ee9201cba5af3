// Binary TensorProto -> TensorFromProto. A decoded tensor (of up to 2^16
// elements) must survive TensorToProto and back unchanged.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "proto/tensor.pb.h"
#include "tests/fuzz/fuzz_support.h"
#include "weir/framework/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir;
  fuzz::InitOnce();
  wire::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  // A string or handle element is an object (a heap block for a string over
  // 15 bytes), and a few bytes may stand for millions of them (the last
  // value repeats): legitimately slow, so such shapes are not tried.
  if (proto.dtype() == wire::DT_STRING || proto.dtype() == wire::DT_RESOURCE) {
    double elements = 1;
    for (const auto& dim : proto.tensor_shape().dim()) elements *= std::max<double>(dim.size(), 0);
    if (elements > (1 << 20)) return 0;
  }
  Tensor tensor;
  if (!TensorFromProto(proto, &tensor).ok()) return 0;
  fuzz::Require(tensor.IsInitialized(), "TensorFromProto succeeded without a tensor");
  // A few bytes may legitimately stand for millions of elements (the last
  // typed value repeats); re-encoding those would only test protobuf's speed.
  if (tensor.NumElements() > (1 << 16)) return 0;
  wire::TensorProto again;
  fuzz::Require(TensorToProto(tensor, &again).ok(), "TensorToProto failed on a decoded tensor");
  Tensor round_trip;
  fuzz::Require(TensorFromProto(again, &round_trip).ok(),
                "TensorToProto's output does not decode");
  fuzz::Require(round_trip.dtype() == tensor.dtype() && round_trip.shape() == tensor.shape(),
                "TensorProto round trip changed dtype or shape");
  if (tensor.dtype() != DT_RESOURCE) {
    // Bitwise, so NaNs compare equal to themselves.
    fuzz::Require(tensor.ContentEquals(round_trip), "TensorProto round trip changed values");
  }
  return 0;
}
