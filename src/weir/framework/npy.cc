#include "weir/framework/npy.h"

#include <bit>
#include <cstring>
#include <limits>
#include <vector>

#include "weir/base/file_system.h"

namespace weir {
namespace {

static_assert(std::endian::native == std::endian::little,
              ".npy reading assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy aligns the start of the data to this many bytes.
constexpr size_t kAlignment = 64;

struct NpyType {
  char kind;  // 'f' float, 'i' signed, 'u' unsigned, 'b' bool, 'c' complex
  int size;
  DType dtype;
};

constexpr NpyType kTypes[] = {
    {'f', 2, DT_HALF},      {'f', 4, DT_FLOAT},      {'f', 8, DT_DOUBLE},
    {'i', 1, DT_INT8},      {'i', 2, DT_INT16},      {'i', 4, DT_INT32},
    {'i', 8, DT_INT64},     {'u', 1, DT_UINT8},      {'u', 2, DT_UINT16},
    {'u', 4, DT_UINT32},    {'u', 8, DT_UINT64},     {'b', 1, DT_BOOL},
    {'c', 8, DT_COMPLEX64}, {'c', 16, DT_COMPLEX128},
};

// "<f4" -> DT_FLOAT.
Status DTypeFromDescr(const std::string& descr, DType* dtype) {
  std::string_view rest = descr;
  char order = '=';
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '=' || rest[0] == '|')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  if (rest == "?") rest = "b1";
  int64_t size = 0;
  if (rest.size() >= 2 && ParseInt64(rest.substr(1), &size)) {
    for (const NpyType& type : kTypes) {
      if (type.kind != rest[0] || type.size != size) continue;
      // One byte has no order; '|' and '=' mean native, which is little.
      if (order == '>' && size > 1) {
        return errors::Unimplemented("big-endian dtype '", descr,
                                     "' is not supported; convert with "
                                     "array.astype(array.dtype.newbyteorder('<'))");
      }
      *dtype = type.dtype;
      return Status::OK();
    }
  }
  return errors::Unimplemented("dtype '", descr, "' is not supported; supported are ",
                               "<f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1 <c8 <c16");
}

// The descr numpy writes for `dtype`, or empty if it has none.
std::string DescrFromDType(DType dtype) {
  for (const NpyType& type : kTypes) {
    if (type.dtype == dtype) {
      return StrCat(type.size == 1 ? '|' : '<', type.kind, type.size);
    }
  }
  return "";
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This reads the subset of Python literals numpy writes there.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Status Parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    WEIR_RETURN_IF_ERROR(Expect('{'));
    while (!Consume('}')) {
      std::string key;
      WEIR_RETURN_IF_ERROR(ParseString(&key));
      WEIR_RETURN_IF_ERROR(Expect(':'));
      if (key == "descr") {
        if (Peek() == '[') {
          return errors::Unimplemented("structured (record) dtypes are not supported");
        }
        WEIR_RETURN_IF_ERROR(ParseString(descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        WEIR_RETURN_IF_ERROR(ParseBool(fortran_order));
        have_order = true;
      } else if (key == "shape") {
        WEIR_RETURN_IF_ERROR(ParseShape(shape));
        have_shape = true;
      } else {
        return Error(StrCat("unexpected key '", key, "'"));
      }
      // Entries are separated by commas; numpy also writes one after the last.
      if (!Consume(',') && Peek() != '}') return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dict");
    if (!have_descr || !have_order || !have_shape) {
      return Error("the dict needs the keys 'descr', 'fortran_order' and 'shape'");
    }
    return Status::OK();
  }

 private:
  Status Error(std::string_view what) const {
    // Headers are short; cap a corrupt one's length in the message.
    constexpr size_t kShown = 200;
    return errors::InvalidArgument("malformed .npy header at offset ", pos_, " (", what, "): ",
                                   text_.substr(0, kShown), text_.size() > kShown ? "..." : "");
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  Status Expect(char c) {
    if (!Consume(c)) return Error(StrCat("expected '", c, "'"));
    return Status::OK();
  }
  Status ParseString(std::string* out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expected a string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return Error("unterminated string");
    *out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return Status::OK();
  }
  Status ParseBool(bool* out) {
    SkipSpace();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        *out = value;
        return Status::OK();
      }
    }
    return Error("expected True or False");
  }
  Status ParseShape(std::vector<int64_t>* shape) {
    shape->clear();
    WEIR_RETURN_IF_ERROR(Expect('('));
    while (!Consume(')')) {
      SkipSpace();
      size_t start = pos_;
      if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      int64_t dim;
      if (!ParseInt64(text_.substr(start, pos_ - start), &dim)) {
        pos_ = start;
        return Error("expected a dimension");
      }
      // Python 2 wrote long integers with an L suffix.
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
      shape->push_back(dim);
      if (!Consume(',') && Peek() != ')') return Error("expected ',' or ')'");
    }
    return Status::OK();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t ReadLittleEndian(std::string_view bytes, size_t offset, int width) {
  uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[offset + i]);
  }
  return value;
}

}  // namespace

StatusOr<Tensor> ParseNpy(std::string_view bytes) {
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    return errors::InvalidArgument("not a .npy file: it does not start with \\x93NUMPY");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return errors::Unimplemented(".npy format version ", major, ".", minor,
                                 " is not supported (1.0, 2.0 and 3.0 are)");
  }
  // Version 1.0 stores the header length in 2 bytes, later versions in 4;
  // 3.0 differs from 2.0 only in allowing UTF-8 in the header.
  const int length_width = major == 1 ? 2 : 4;
  const size_t header_start = kMagic.size() + 2 + length_width;
  if (bytes.size() < header_start) {
    return errors::DataLoss("truncated .npy file: ", bytes.size(),
                            " bytes end inside the header length");
  }
  const size_t header_length = ReadLittleEndian(bytes, kMagic.size() + 2, length_width);
  if (bytes.size() - header_start < header_length) {
    return errors::DataLoss("truncated .npy file: the header needs ", header_length,
                            " bytes, the file has ", bytes.size() - header_start,
                            " after the header length");
  }
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> dims;
  WEIR_RETURN_IF_ERROR(HeaderParser(bytes.substr(header_start, header_length))
                           .Parse(&descr, &fortran_order, &dims));
  DType dtype = DT_INVALID;
  WEIR_RETURN_IF_ERROR(DTypeFromDescr(descr, &dtype));
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) {
    return errors::InvalidArgument(".npy header has a bad shape: ", shape.status().message());
  }
  // With at most one dimension the two orders lay out the same bytes.
  if (fortran_order && shape->rank() > 1) {
    return errors::Unimplemented(".npy array of shape ", *shape,
                                 " is in Fortran order; only C order is supported (save "
                                 "numpy.ascontiguousarray(array) instead)");
  }

  const std::string_view data = bytes.substr(header_start + header_length);
  const size_t element_size = DTypeSize(dtype);
  const int64_t n = shape->num_elements();
  // Compare by division: n * element_size may overflow for a corrupt header.
  if (static_cast<uint64_t>(n) > data.size() / element_size) {
    return errors::DataLoss("truncated .npy file: ", descr, " array of shape ", *shape,
                            " needs ", n, " elements of ", element_size, " bytes, the file has ",
                            data.size(), " bytes of data");
  }
  const size_t data_bytes = static_cast<size_t>(n) * element_size;
  if (data.size() != data_bytes) {
    return errors::DataLoss(".npy file has ", data.size() - data_bytes,
                            " unexpected bytes after the data of its ", descr,
                            " array of shape ", *shape);
  }
  WEIR_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(DefaultCpuAllocator(), dtype, *shape));
  if (dtype == DT_BOOL) {
    // Any nonzero byte is true; copying others into a bool would make an
    // invalid bool.
    bool* out = tensor.data<bool>();
    for (int64_t i = 0; i < n; ++i) out[i] = data[i] != 0;
  } else if (data_bytes > 0) {
    std::memcpy(tensor.raw_data(), data.data(), data_bytes);
  }
  return tensor;
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  WEIR_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  StatusOr<Tensor> tensor = ParseNpy(bytes);
  if (!tensor.ok()) return tensor.status().WithContext(StrCat("reading '", path, "'"));
  return tensor;
}

StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  const std::string descr = DescrFromDType(tensor.dtype());
  if (descr.empty()) {
    return errors::Unimplemented("cannot write a ", tensor.dtype(),
                                 " tensor as .npy: NumPy has no standard type for it");
  }
  std::string shape = StrJoin(tensor.shape().dim_sizes(), ", ");
  if (tensor.dims() == 1) shape += ",";  // Python's one-element tuple: "(3,)"
  std::string header =
      StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", shape, "), }");

  // Pad with spaces and a final newline so the data starts aligned. Version
  // 1.0's 16-bit header length always suffices: even kMaxRank dims of 19
  // digits make a header of a few KiB.
  const size_t prefix = kMagic.size() + 2 + 2;
  const size_t total = (prefix + header.size() + 1 + kAlignment - 1) / kAlignment * kAlignment;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  DCHECK(header.size() <= std::numeric_limits<uint16_t>::max());

  std::string bytes(kMagic);
  bytes.push_back(1);  // version 1.0
  bytes.push_back(0);
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  if (tensor.TotalBytes() > 0) {
    bytes.append(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  }
  return bytes;
}

Status WriteNpy(const std::string& path, const Tensor& tensor) {
  StatusOr<std::string> bytes = SerializeNpy(tensor);
  if (!bytes.ok()) return bytes.status().WithContext(StrCat("writing '", path, "'"));
  return WriteStringToFileAtomic(path, *bytes);
}

}  // namespace weir
