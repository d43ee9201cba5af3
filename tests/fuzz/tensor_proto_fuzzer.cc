// Binary TensorProto -> TensorFromProto. A decoded tensor must be
// consistent (shape, byte size) and survive TensorToProto and back unchanged.
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
  Tensor tensor;
  if (!TensorFromProto(proto, &tensor).ok()) return 0;
  fuzz::Require(tensor.IsInitialized(), "TensorFromProto succeeded without a tensor");
  wire::TensorProto again;
  TensorToProto(tensor, &again);
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
