// The shape rules SpaceToBatchND and BatchToSpaceND share between shape
// inference and the kernels, with TensorFlow's rules: an input of rank
// >= 1 + M for a block_shape of M values >= 1, paddings/crops an [M, 2]
// table of values >= 0; each padded spatial dim divisible by its block;
// the batch of BatchToSpaceND divisible by the product of the blocks and
// each crop no larger than its uncropped dim. Dims may be unknown (-1)
// for shape inference; the result then has those dims unknown.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "weir/base/checked_math.h"
#include "weir/base/status.h"
#include "weir/base/str_util.h"

namespace weir {

// Checks block_shape (M values) and the M x 2 `pads` (paddings or crops,
// named by `what`) against an input of `rank` dims (-1: unknown).
inline Status CheckSpaceBatchArgs(int rank, std::span<const int64_t> block,
                                  std::span<const int64_t> pads, std::string_view what) {
  const int64_t m = static_cast<int64_t>(block.size());
  if (static_cast<int64_t>(pads.size()) != 2 * m) {
    return errors::InvalidArgument(what, " must be an [M, 2] table for block_shape [",
                                   StrJoin(block, ","), "] (M = ", m, ") but has ", pads.size(),
                                   " values");
  }
  if (rank >= 0 && rank < 1 + m) {
    return errors::InvalidArgument("the input must have rank >= 1 + M = ", 1 + m,
                                   " for block_shape [", StrJoin(block, ","), "] but has rank ",
                                   rank);
  }
  for (int64_t b : block) {
    if (b < 1) {
      return errors::InvalidArgument("block_shape [", StrJoin(block, ","),
                                     "] must hold values >= 1");
    }
  }
  for (int64_t p : pads) {
    if (p < 0) {
      return errors::InvalidArgument(what, " [", StrJoin(pads, ","), "] must hold values >= 0");
    }
  }
  return Status::OK();
}

// The product of the blocks, checked.
inline StatusOr<int64_t> BlockProduct(std::span<const int64_t> block) {
  int64_t product = 1;
  for (int64_t b : block) {
    WEIR_RETURN_IF_ERROR(CheckedMultiply(product, b, &product, "the product of block_shape"));
  }
  return product;
}

// SpaceToBatchND's output dims for `dims` (unknown ones -1).
inline StatusOr<std::vector<int64_t>> SpaceToBatchDims(std::span<const int64_t> dims,
                                                       std::span<const int64_t> block,
                                                       std::span<const int64_t> paddings) {
  WEIR_RETURN_IF_ERROR(
      CheckSpaceBatchArgs(static_cast<int>(dims.size()), block, paddings, "paddings"));
  WEIR_ASSIGN_OR_RETURN(int64_t product, BlockProduct(block));
  std::vector<int64_t> out(dims.begin(), dims.end());
  if (dims[0] >= 0) {
    WEIR_RETURN_IF_ERROR(CheckedMultiply(dims[0], product, &out[0], "the output batch"));
  }
  for (size_t k = 0; k < block.size(); ++k) {
    const int64_t d = dims[k + 1];
    if (d < 0) continue;
    int64_t padded;
    WEIR_RETURN_IF_ERROR(CheckedAdd(d, paddings[2 * k], &padded, "a padded dim"));
    WEIR_RETURN_IF_ERROR(CheckedAdd(padded, paddings[2 * k + 1], &padded, "a padded dim"));
    if (padded % block[k] != 0) {
      return errors::InvalidArgument("padded spatial dim ", k, " (", d, " + ", paddings[2 * k],
                                     " + ", paddings[2 * k + 1], " = ", padded,
                                     ") is not divisible by its block ", block[k]);
    }
    out[k + 1] = padded / block[k];
  }
  return out;
}

// BatchToSpaceND's output dims for `dims` (unknown ones -1).
inline StatusOr<std::vector<int64_t>> BatchToSpaceDims(std::span<const int64_t> dims,
                                                       std::span<const int64_t> block,
                                                       std::span<const int64_t> crops) {
  WEIR_RETURN_IF_ERROR(CheckSpaceBatchArgs(static_cast<int>(dims.size()), block, crops, "crops"));
  WEIR_ASSIGN_OR_RETURN(int64_t product, BlockProduct(block));
  std::vector<int64_t> out(dims.begin(), dims.end());
  if (dims[0] >= 0) {
    if (dims[0] % product != 0) {
      return errors::InvalidArgument("the input batch ", dims[0],
                                     " is not divisible by the product of block_shape [",
                                     StrJoin(block, ","), "] = ", product);
    }
    out[0] = dims[0] / product;
  }
  for (size_t k = 0; k < block.size(); ++k) {
    const int64_t d = dims[k + 1];
    if (d < 0) continue;
    int64_t full, cropped;
    WEIR_RETURN_IF_ERROR(CheckedMultiply(d, block[k], &full, "an uncropped dim"));
    WEIR_RETURN_IF_ERROR(CheckedAdd(crops[2 * k], crops[2 * k + 1], &cropped, "a crop"));
    if (cropped > full) {
      return errors::InvalidArgument("crops [", crops[2 * k], ",", crops[2 * k + 1],
                                     "] of spatial dim ", k, " exceed its uncropped size ", d,
                                     " * ", block[k], " = ", full);
    }
    out[k + 1] = full - cropped;
  }
  return out;
}

// SpaceToDepth (to_depth) or DepthToSpace of a rank-4 `dims` (unknown ones
// -1) in data_format NHWC or NCHW by `block` >= 2: rows and cols divided by
// block and channels multiplied by block^2, or the reverse; each divided
// dim must be divisible.
inline StatusOr<std::vector<int64_t>> DepthSpaceDims(std::span<const int64_t> dims, int64_t block,
                                                     bool nchw, bool to_depth) {
  if (dims.size() != 4) {
    return errors::InvalidArgument("the input must have rank 4 but has rank ", dims.size());
  }
  if (block < 2) return errors::InvalidArgument("block_size ", block, " must be >= 2");
  const int channels = nchw ? 1 : 3, rows = nchw ? 2 : 1, cols = nchw ? 3 : 2;
  int64_t area;
  WEIR_RETURN_IF_ERROR(CheckedMultiply(block, block, &area, "block_size^2"));
  std::vector<int64_t> out(dims.begin(), dims.end());
  auto divide = [&](int d, int64_t by, const char* what) -> Status {
    if (dims[d] < 0) return Status::OK();
    if (dims[d] % by != 0) {
      return errors::InvalidArgument(what, " ", dims[d], " is not divisible by ", by,
                                     " (block_size ", block, ")");
    }
    out[d] = dims[d] / by;
    return Status::OK();
  };
  auto multiply = [&](int d, int64_t by, const char* what) -> Status {
    if (dims[d] < 0) return Status::OK();
    return CheckedMultiply(dims[d], by, &out[d], what);
  };
  if (to_depth) {
    WEIR_RETURN_IF_ERROR(divide(rows, block, "rows"));
    WEIR_RETURN_IF_ERROR(divide(cols, block, "cols"));
    WEIR_RETURN_IF_ERROR(multiply(channels, area, "the output channels"));
  } else {
    WEIR_RETURN_IF_ERROR(divide(channels, area, "channels"));
    WEIR_RETURN_IF_ERROR(multiply(rows, block, "the output rows"));
    WEIR_RETURN_IF_ERROR(multiply(cols, block, "the output cols"));
  }
  return out;
}

}  // namespace weir
