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
  CopyBox(tensor, std::vector<int64_t>(tensor.dims(), 0), &out, slice.starts, slice.starts,
          slice.lengths);
  return out;
}

void CopyBox(const Tensor& from, const std::vector<int64_t>& from_origin, Tensor* to,
             const std::vector<int64_t>& to_origin, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& lengths) {
  const int rank = from.dims();
  CHECK_EQ(rank, to->dims());
  CHECK_EQ(from.dtype(), to->dtype());
  int64_t count = 1;
  for (int64_t length : lengths) count *= length;
  if (count == 0) return;
  // Copies runs of the innermost dim: for each index of the outer dims of
  // the box (an odometer), one contiguous run of lengths[rank-1] elements.
  std::vector<int64_t> from_strides(rank, 1), to_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) {
    from_strides[i] = from_strides[i + 1] * from.dim_size(i + 1);
    to_strides[i] = to_strides[i + 1] * to->dim_size(i + 1);
  }
  const int64_t run = rank == 0 ? 1 : lengths[rank - 1];
  auto copy = [&](int64_t source, int64_t destination) {
    if (from.dtype() == DT_STRING) {
      const std::string* begin = from.data<std::string>() + source;
      std::copy(begin, begin + run, to->data<std::string>() + destination);
    } else {
      const size_t size = DTypeSize(from.dtype());
      std::memcpy(static_cast<char*>(to->raw_data()) + destination * size,
                  static_cast<const char*>(from.raw_data()) + source * size, run * size);
    }
  };
  std::vector<int64_t> index(rank > 0 ? rank - 1 : 0, 0);
  for (int64_t done = 0; done < count; done += run) {
    int64_t source = 0, destination = 0;
    for (int i = 0; i < rank; ++i) {
      const int64_t at = starts[i] + (i + 1 < rank ? index[i] : 0);
      source += (at - from_origin[i]) * from_strides[i];
      destination += (at - to_origin[i]) * to_strides[i];
    }
    copy(source, destination);
    for (int i = rank - 2; i >= 0; --i) {
      if (++index[i] < lengths[i]) break;
      index[i] = 0;
    }
  }
}

namespace {

// The pieces of TensorFlow's order-preserving key encoding that slice keys
// use. An unsigned number: its byte count, then its bytes, big-endian.
void AppendUnsignedIncreasing(std::string* out, uint64_t value) {
  char bytes[8];
  int n = 0;
  for (; value != 0; value >>= 8) bytes[n++] = static_cast<char>(value & 0xff);
  out->push_back(static_cast<char>(n));
  while (n > 0) out->push_back(bytes[--n]);
}

// A string: 0x00 as 0x00 0xff and 0xff as 0xff 0x00, then 0x00 0x01.
void AppendStringIncreasing(std::string* out, std::string_view text) {
  for (char c : text) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xff');
    else if (c == '\xff') out->push_back('\0');
  }
  out->append("\0\1", 2);
}

// A signed number in k bytes: k one-bits, a zero bit, then the value's
// 7k-1 low bits big-endian; negative numbers are the complement of the
// encoding of ~value. k <= 8 covers |value| < 2^55, more than any dim.
void AppendSignedIncreasing(std::string* out, int64_t value) {
  const bool negative = value < 0;
  uint64_t magnitude = negative ? ~static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  int k = 1;
  while (k < 8 && magnitude >= (uint64_t{1} << (7 * k - 1))) ++k;
  CHECK_LT(magnitude, uint64_t{1} << (7 * k - 1)) << "slice extent " << value << " too large";
  // k ones, then a zero (for k = 8 the zero is the top bit of the second byte).
  uint64_t header = k == 8 ? 0xff : (0xff00u >> k) & 0xff;
  uint64_t encoded = (header << (8 * (k - 1))) | magnitude;
  for (int i = k - 1; i >= 0; --i) {
    char byte = static_cast<char>((encoded >> (8 * i)) & 0xff);
    out->push_back(negative ? static_cast<char>(~byte) : byte);
  }
}

}  // namespace

std::string TensorSliceKey(std::string_view name, const std::vector<int64_t>& starts,
                           const std::vector<int64_t>& lengths) {
  CHECK_EQ(starts.size(), lengths.size());
  std::string key;
  AppendUnsignedIncreasing(&key, 0);
  AppendStringIncreasing(&key, name);
  AppendUnsignedIncreasing(&key, starts.size());
  for (size_t i = 0; i < starts.size(); ++i) {
    AppendSignedIncreasing(&key, starts[i]);
    AppendSignedIncreasing(&key, lengths[i]);
  }
  return key;
}

}  // namespace weir
