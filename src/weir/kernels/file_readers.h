// The reader kinds (kernels/reader_base.h), as TensorFlow's: TFRecord
// records, fixed-length records, text lines, whole files. Each spec checks
// its op's attrs and makes readers of one signature.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "weir/base/status.h"
#include "weir/kernels/reader_base.h"

namespace weir {

struct ReaderSpec {
  std::string signature;  // the op and its attrs, e.g. TFRecordReaderV2(compression_type="GZIP")
  std::function<std::shared_ptr<ReaderBase>(const std::string& name)> make;
};

// compression_type "", "ZLIB" or "GZIP". Key "<file>:<byte offset>".
StatusOr<ReaderSpec> TFRecordReaderSpec(std::string_view compression_type);
// Sizes >= 0, record_bytes > 0; encoding "", "ZLIB" or "GZIP". Key
// "<file>:<record number from 0>".
StatusOr<ReaderSpec> FixedLengthRecordReaderSpec(int64_t header_bytes, int64_t record_bytes,
                                                 int64_t footer_bytes, int64_t hop_bytes,
                                                 std::string_view encoding);
// skip_header_lines >= 0. Key "<file>:<line number from 1>".
StatusOr<ReaderSpec> TextLineReaderSpec(int64_t skip_header_lines);
// Key the file name, value its contents.
ReaderSpec WholeFileReaderSpec();

}  // namespace weir
