#include "weir/kernels/tensor_summary.h"

#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace weir {
namespace {

// The shortest of "%.{digits}g" and "%.{round_trip}g" that reads back as
// the same value, as TensorFlow prints floats.
template <typename F>
std::string FormatFloat(F value, int digits, int round_trip) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", digits, static_cast<double>(value));
  F back;
  if constexpr (std::is_same_v<F, float>) {
    back = std::strtof(buffer, nullptr);
  } else {
    back = std::strtod(buffer, nullptr);
  }
  if (back != value) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", round_trip, static_cast<double>(value));
  }
  return buffer;
}

// A string's bytes as TensorFlow's summaries show them: C escapes for the
// quote marks, the backslash and the control characters (three octal digits
// for those without a letter), every other byte, UTF-8 included, as it is.
std::string EscapeBytes(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (unsigned char ch : value) {
    switch (ch) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          const char octal[] = {'\\', static_cast<char>('0' + (ch >> 6)),
                                static_cast<char>('0' + ((ch >> 3) & 7)),
                                static_cast<char>('0' + (ch & 7))};
          out.append(octal, sizeof(octal));
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out;
}

template <typename T>
std::string FormatValue(const T& value, bool quote_strings) {
  if constexpr (std::is_same_v<T, float>) {
    return FormatFloat<float>(value, 6, 9);
  } else if constexpr (std::is_same_v<T, double>) {
    return FormatFloat<double>(value, 15, 17);
  } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return FormatFloat<float>(static_cast<float>(value), 6, 9);
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    return "(" + FormatValue(value.real(), false) + "," + FormatValue(value.imag(), false) + ")";
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "1" : "0";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return quote_strings ? "\"" + EscapeBytes(value) + "\"" : EscapeBytes(value);
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    return "<" + value.DebugString() + ">";  // a resource handle
  }
}

// Element i of `t` as text, formatted only when asked for (a summary of a
// large tensor shows few of them).
class Elements {
 public:
  Elements(const Tensor& t, bool quote_strings) : t_(t), quote_(quote_strings) {}
  std::string operator[](int64_t i) const {
    std::string out = "?";
    auto format = [&]<typename T>() { out = FormatValue(t_.data<T>()[i], quote_); };
    if (DispatchNumericDType(t_.dtype(), format)) return out;
    switch (t_.dtype()) {
      case DT_HALF: format.template operator()<Eigen::half>(); break;
      case DT_BFLOAT16: format.template operator()<Eigen::bfloat16>(); break;
      case DT_STRING: format.template operator()<std::string>(); break;
      case DT_RESOURCE: format.template operator()<ResourceHandle>(); break;
      default: break;
    }
    return out;
  }

 private:
  const Tensor& t_;
  const bool quote_;
};

// Elements of one dimension and below (v1), from element `*next` until
// `limit`: rows of the innermost dimension bracketed below the outermost.
void PrintV1(const Elements& values, const TensorShape& shape, int dim, int64_t limit,
             int64_t* next, std::string* out) {
  const int64_t n = shape.dim_size(dim);
  if (dim == shape.dims() - 1) {
    for (int64_t i = 0; i < n; ++i) {
      if (*next >= limit) {
        *out += "...";
        return;
      }
      if (i > 0) *out += " ";
      *out += values[(*next)++];
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (*next >= limit) return;
    *out += "[";
    PrintV1(values, shape, dim + 1, limit, next, out);
    *out += "]";
  }
}

// The sub-tensor of dimension `dim` starting at element `offset` (v2).
void PrintV2(const Elements& values, const TensorShape& shape, const std::vector<int64_t>& strides,
             int dim, int64_t offset, int64_t summarize, std::string* out) {
  const int64_t n = shape.dim_size(dim);
  const bool innermost = dim == shape.dims() - 1;
  // Between entries: a space in a row, else as many newlines as dimensions
  // below and an indent of the depth.
  std::string separator =
      innermost ? " " : std::string(shape.dims() - dim - 1, '\n') + std::string(dim + 1, ' ');
  const bool elide = summarize >= 0 && n > 2 * summarize;
  *out += "[";
  bool first = true;
  auto entry = [&](int64_t i) {
    if (!first) *out += separator;
    first = false;
    if (innermost) {
      *out += values[offset + i];
    } else {
      PrintV2(values, shape, strides, dim + 1, offset + i * strides[dim], summarize, out);
    }
  };
  if (!elide) {
    for (int64_t i = 0; i < n; ++i) entry(i);
  } else {
    for (int64_t i = 0; i < summarize; ++i) entry(i);
    // Before "..." the separator even with no entry shown: [3, 4] with
    // summarize 0 is "[\n ...]", as TensorFlow writes it.
    *out += separator + "...";
    first = false;
    for (int64_t i = n - summarize; i < n; ++i) entry(i);
  }
  *out += "]";
}

}  // namespace

std::string SummarizeTensorV1(const Tensor& t, int64_t limit) {
  const int64_t count = t.NumElements();
  if (count == 0) return "";
  if (limit < 0 || limit > count) limit = count;
  const Elements values(t, false);
  if (t.dims() == 0) return values[0];
  std::string out;
  int64_t next = 0;
  PrintV1(values, t.shape(), 0, limit, &next, &out);
  if (t.dims() > 1 && limit < count) out += "...";
  return out;
}

std::string SummarizeTensorV2(const Tensor& t, int64_t summarize) {
  const Elements values(t, true);
  if (t.dims() == 0) return values[0];
  // No dimension shows more entries than the tensor has: a tensor of no
  // elements with a dim above 0 ([2, 0]) elides it with none shown,
  // "[\n ...]", as TensorFlow writes it; one whose dim 0 is 0 is "[]".
  const int64_t count = t.NumElements();
  if (summarize < 0 || summarize > count) summarize = count;
  std::vector<int64_t> strides(t.dims(), 1);
  for (int d = t.dims() - 2; d >= 0; --d) strides[d] = strides[d + 1] * t.shape().dim_size(d + 1);
  std::string out;
  PrintV2(values, t.shape(), strides, 0, 0, summarize, &out);
  return out;
}

}  // namespace weir
