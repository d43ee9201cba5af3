// .npy file bytes -> ParseNpy. A decoded array must survive SerializeNpy and
// ParseNpy again unchanged (for the dtypes NumPy can hold).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_support.h"
#include "weir/framework/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir;
  fuzz::InitOnce();
  StatusOr<Tensor> tensor = ParseNpy(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!tensor.ok()) return 0;
  StatusOr<std::string> bytes = SerializeNpy(*tensor);
  fuzz::Require(bytes.ok(), "SerializeNpy refused a tensor ParseNpy returned");
  StatusOr<Tensor> again = ParseNpy(*bytes);
  fuzz::Require(again.ok(), "ParseNpy refused what SerializeNpy wrote");
  fuzz::Require(again->ContentEquals(*tensor), ".npy round trip changed the tensor");
  return 0;
}
