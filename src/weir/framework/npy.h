// NumPy .npy files: one array per file, as numpy.save writes and numpy.load
// reads them, so tensors move between Weir and Python tools without code.
//
// Reads format versions 1.0, 2.0 and 3.0 in C order with the dtypes
// <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1 <c8 <c16, where '=' (native)
// may stand for '<' and one-byte types may carry any byte-order mark.
// Fortran order (beyond rank 1), big-endian data and other dtypes (strings,
// objects, records) are Unimplemented; a malformed file is InvalidArgument,
// one cut short or with bytes after the data DataLoss.
#pragma once

#include <string>
#include <string_view>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"

namespace weir {

// Errors name `path`.
StatusOr<Tensor> ReadNpy(const std::string& path);
// Decodes the contents of a .npy file.
StatusOr<Tensor> ParseNpy(std::string_view bytes);

// Writes `tensor` to `path` atomically (WriteStringToFileAtomic).
Status WriteNpy(const std::string& path, const Tensor& tensor);
// The bytes numpy.save would write: format 1.0, the header padded so the
// data starts at a multiple of 64 bytes. Unimplemented
// for dtypes NumPy has no standard type for (bfloat16, string, resource).
StatusOr<std::string> SerializeNpy(const Tensor& tensor);

}  // namespace weir
