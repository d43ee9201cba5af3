#include "weir/framework/tensor_slice.h"

#include <cstring>
#include <string>

namespace weir {

TensorShape ShapeAndSlice::slice_shape() const {
  StatusOr<TensorShape> shape = TensorShape::FromDims(lengths);
  CHECK(shape.ok()) << shape.status();  // each length is within a valid shape's dim
  return *shape;
}

StatusOr<ShapeAndSlice> ParseShapeAndSlice(std::string_view spec) {
  auto bad = [&](const auto&... why) {
    return errors::InvalidArgument("bad shape-and-slice spec '", spec, "': ", why...);
  };
  std::vector<std::string> parts = StrSplit(spec, ' ');
  if (parts.size() < 2) {
    return bad("expected the full shape's dims and then the slice, separated by spaces");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t d;
    if (!ParseInt64(parts[i], &d) || d < 0) return bad("dim '", parts[i], "' is not a size");
    dims.push_back(d);
  }
  StatusOr<TensorShape> full_shape = TensorShape::FromDims(dims);
  if (!full_shape.ok()) return bad(full_shape.status().message());

  ShapeAndSlice result;
  result.full_shape = *full_shape;
  std::vector<std::string> extents = StrSplit(parts.back(), ':');
  if (extents.size() != dims.size()) {
    return bad("the slice has ", extents.size(), " extents for a shape of rank ", dims.size());
  }
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] == "-") {
      result.starts.push_back(0);
      result.lengths.push_back(dims[i]);
      continue;
    }
    std::vector<std::string> start_length = StrSplit(extents[i], ',');
    int64_t start, length;
    if (start_length.size() != 2 || !ParseInt64(start_length[0], &start) ||
        !ParseInt64(start_length[1], &length)) {
      return bad("extent '", extents[i], "' is neither '-' nor 'start,length'");
    }
    if (start < 0 || length < 0 || start > dims[i] || length > dims[i] - start) {
      return bad("extent '", extents[i], "' leaves dim ", i, " of size ", dims[i]);
    }
    result.starts.push_back(start);
    result.lengths.push_back(length);
  }
  return result;
}

StatusOr<Tensor> ExtractSlice(const Tensor& tensor, const ShapeAndSlice& slice) {
  if (tensor.shape() != slice.full_shape) {
    return errors::InvalidArgument("cannot take a slice of a tensor of shape ",
                                   slice.full_shape, " from a tensor of shape ",
                                   tensor.shape());
  }
  if (tensor.dtype() != DT_STRING && DTypeSize(tensor.dtype()) == 0) {
    return errors::InvalidArgument("cannot take a slice of a ", tensor.dtype(), " tensor");
  }
  WEIR_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DefaultCpuAllocator(), tensor.dtype(),
                                                     slice.slice_shape()));
  if (out.NumElements() == 0) return out;

  // Copies runs of the innermost dim: for each index of the outer dims of
  // the slice (an odometer), one contiguous run of lengths[rank-1] elements.
  const int rank = tensor.dims();
  std::vector<int64_t> strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) strides[i] = strides[i + 1] * tensor.dim_size(i + 1);
  const int64_t run = rank == 0 ? 1 : slice.lengths[rank - 1];
  auto copy = [&](int64_t source, int64_t destination) {
    if (tensor.dtype() == DT_STRING) {
      const std::string* from = tensor.data<std::string>() + source;
      std::copy(from, from + run, out.data<std::string>() + destination);
    } else {
      const size_t size = DTypeSize(tensor.dtype());
      std::memcpy(static_cast<char*>(out.raw_data()) + destination * size,
                  static_cast<const char*>(tensor.raw_data()) + source * size, run * size);
    }
  };
  std::vector<int64_t> index(rank > 0 ? rank - 1 : 0, 0);
  for (int64_t destination = 0; destination < out.NumElements(); destination += run) {
    int64_t source = rank == 0 ? 0 : slice.starts[rank - 1];
    for (int i = 0; i + 1 < rank; ++i) source += (slice.starts[i] + index[i]) * strides[i];
    copy(source, destination);
    for (int i = rank - 2; i >= 0; --i) {
      if (++index[i] < slice.lengths[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

}  // namespace weir
