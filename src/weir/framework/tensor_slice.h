// Shape-and-slice specs: TensorFlow's text for "this rectangular part of a
// tensor of that full shape", used by SaveV2/RestoreV2 to name partitions of
// a variable.
//
//   "4 5 0,2:-"   full shape [4,5]; rows 0..1 (start 0, length 2), all columns
//
// The full shape's dims, separated by spaces, then the slice: one extent per
// dim, separated by ':', each "-" (the whole dim) or "start,length".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

struct ShapeAndSlice {
  TensorShape full_shape;
  // Per dim; "-" is resolved to start 0 and the dim's size.
  std::vector<int64_t> starts;
  std::vector<int64_t> lengths;

  TensorShape slice_shape() const;
};

// Parses a non-empty spec. InvalidArgument quoting the spec when it is
// malformed, has an extent per dim count other than the rank, or an extent
// that leaves its dim.
StatusOr<ShapeAndSlice> ParseShapeAndSlice(std::string_view spec);

// A new tensor holding the part of `tensor` that `slice` selects.
// InvalidArgument when tensor's shape is not slice.full_shape, or for
// resource tensors.
StatusOr<Tensor> ExtractSlice(const Tensor& tensor, const ShapeAndSlice& slice);

// Copies the box `starts` + `lengths` (in the coordinates of one full
// tensor) from `from`, which holds the box at `from_origin`, into `to`,
// which holds the box at `to_origin`. REQUIRES: same dtype and rank, not
// resource, the box inside both.
void CopyBox(const Tensor& from, const std::vector<int64_t>& from_origin, Tensor* to,
             const std::vector<int64_t>& to_origin, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& lengths);

// The key under which a TensorFlow checkpoint (tensor_bundle.h) keeps the
// piece `starts`/`lengths` of the sliced tensor `name`: an order-preserving
// encoding of 0, the name, the rank and each extent's start and length
// (length -1 for an extent the slice left as the whole dim).
// REQUIRES: every start and length below kMaxSliceExtent.
inline constexpr int64_t kMaxSliceExtent = int64_t{1} << 55;
std::string TensorSliceKey(std::string_view name, const std::vector<int64_t>& starts,
                           const std::vector<int64_t>& lengths);

}  // namespace weir
