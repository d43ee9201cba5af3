// Kernels of ops/string_convert_ops.cc. Elementwise string kernels share
// one loop (StringMapOp); the hash buckets use FarmHash (Debian's
// libfarmhash), whose Fingerprint64 is TensorFlow's.
#include <farmhash.h>

#include <cctype>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/float16_convert.h"

namespace weir {
namespace {

// An elementwise string -> string op: `Map(in, &out)` per element.
template <typename Map>
class StringMapOp final : public OpKernel {
 public:
  explicit StringMapOp(OpKernelConstruction* context) : OpKernel(context), map_(context) {}
  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, in.shape(), &out));
    const std::string* src = in.data<std::string>();
    std::string* dst = out->data<std::string>();
    for (int64_t i = 0, n = in.NumElements(); i < n; ++i) {
      Status status = map_(src[i], &dst[i]);
      if (!status.ok()) {
        context->SetStatus(
            status.WithContext(StrCat(type_string(), " '", name(), "' element ", i)));
        return;
      }
    }
  }

 private:
  Map map_;
};

struct Strip {
  explicit Strip(OpKernelConstruction*) {}
  Status operator()(const std::string& in, std::string* out) const {
    size_t begin = 0, end = in.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(in[begin]))) ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(in[end - 1]))) --end;
    *out = in.substr(begin, end - begin);
    return Status::OK();
  }
};

template <bool kUpper>
struct ChangeCase {
  explicit ChangeCase(OpKernelConstruction* context) {
    std::string encoding;
    context->SetStatus(context->GetAttr("encoding", &encoding));
    if (!encoding.empty() && encoding != "utf-8") {
      context->SetStatus(
          errors::InvalidArgument("encoding must be '' or 'utf-8', got '", encoding, "'"));
    }
  }
  // ASCII letters only: in UTF-8 every other byte belongs to a character
  // outside ASCII, which stays as it is.
  Status operator()(const std::string& in, std::string* out) const {
    *out = in;
    for (char& c : *out) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x80) c = static_cast<char>(kUpper ? std::toupper(u) : std::tolower(u));
    }
    return Status::OK();
  }
};

constexpr char kWebSafe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

struct EncodeBase64 {
  explicit EncodeBase64(OpKernelConstruction* context) {
    context->SetStatus(context->GetAttr("pad", &pad));
  }
  Status operator()(const std::string& in, std::string* out) const {
    out->clear();
    out->reserve((in.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
      const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
      for (int shift : {18, 12, 6, 0}) out->push_back(kWebSafe[(v >> shift) & 63]);
    }
    const size_t left = in.size() - i;
    if (left > 0) {
      uint32_t v = uint8_t(in[i]) << 16;
      if (left == 2) v |= uint8_t(in[i + 1]) << 8;
      out->push_back(kWebSafe[(v >> 18) & 63]);
      out->push_back(kWebSafe[(v >> 12) & 63]);
      if (left == 2) out->push_back(kWebSafe[(v >> 6) & 63]);
      if (pad) out->append(left == 1 ? "==" : "=");
    }
    return Status::OK();
  }
  bool pad = false;
};

struct DecodeBase64 {
  explicit DecodeBase64(OpKernelConstruction*) {}
  Status operator()(const std::string& in, std::string* out) const {
    std::string_view text = in;
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    if (in.size() - text.size() > 2 || text.size() % 4 == 1) {
      return errors::InvalidArgument("Invalid base64 length ", in.size(), " of '", in.substr(0, 64),
                                     "'");
    }
    out->clear();
    out->reserve(text.size() * 3 / 4);
    uint32_t bits = 0;
    int count = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      int v;
      if (c >= 'A' && c <= 'Z') v = c - 'A';
      else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
      else if (c >= '0' && c <= '9') v = c - '0' + 52;
      else if (c == '-') v = 62;
      else if (c == '_') v = 63;
      else
        return errors::InvalidArgument("Invalid character ", static_cast<int>(uint8_t(c)), " at ",
                                       i, " in web-safe base64");
      bits = (bits << 6) | v;
      if (++count == 4) {
        out->push_back(static_cast<char>(bits >> 16));
        out->push_back(static_cast<char>(bits >> 8));
        out->push_back(static_cast<char>(bits));
        bits = 0;
        count = 0;
      }
    }
    if (count == 2) out->push_back(static_cast<char>(bits >> 4));
    if (count == 3) {
      out->push_back(static_cast<char>(bits >> 10));
      out->push_back(static_cast<char>(bits >> 2));
    }
    return Status::OK();
  }
};

class StringToHashBucketFastOp final : public OpKernel {
 public:
  explicit StringToHashBucketFastOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("num_buckets", &num_buckets_));
    if (num_buckets_ < 1) {
      context->SetStatus(errors::InvalidArgument("num_buckets must be >= 1, got ", num_buckets_));
    }
  }
  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, in.shape(), &out));
    const std::string* src = in.data<std::string>();
    int64_t* dst = out->data<int64_t>();
    const uint64_t buckets = static_cast<uint64_t>(num_buckets_);
    for (int64_t i = 0, n = in.NumElements(); i < n; ++i) {
      dst[i] = static_cast<int64_t>(util::Fingerprint64(src[i].data(), src[i].size()) % buckets);
    }
  }

 private:
  int64_t num_buckets_ = 1;
};

// AsString: printf formats as TensorFlow builds them.
class AsStringOp final : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* context) : OpKernel(context) {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    context->SetStatus(context->GetAttr("T", &dtype_));
    context->SetStatus(context->GetAttr("precision", &precision));
    context->SetStatus(context->GetAttr("scientific", &scientific));
    context->SetStatus(context->GetAttr("shortest", &shortest));
    context->SetStatus(context->GetAttr("width", &width));
    context->SetStatus(context->GetAttr("fill", &fill));
    const bool is_float = dtype_ == DT_FLOAT || dtype_ == DT_DOUBLE || dtype_ == DT_HALF ||
                          dtype_ == DT_BFLOAT16 || dtype_ == DT_COMPLEX64 ||
                          dtype_ == DT_COMPLEX128;
    auto fail = [&](auto... parts) {
      context->SetStatus(errors::InvalidArgument("AsString '", name(), "': ", parts...));
    };
    if (fill.size() > 1) {
      fail("fill must be at most one character, got '", fill, "'");
      return;
    }
    if (scientific && shortest) {
      fail("cannot select both scientific and shortest");
      return;
    }
    if (!is_float && (scientific || shortest || precision > -1)) {
      {
        fail("scientific, shortest and precision apply only to floating-point types, not ", dtype_);
        return;
      }
    }
    if (width > 4096 || precision > 4096) {
      {
        fail("width and precision must be at most 4096, got ", width, " and ", precision);
        return;
      }
    }
    // The flags, width and precision of the printf format.
    format_ = "%";
    if (!fill.empty()) {
      if (fill == "0") format_ += "0";
      else if (fill == "-") format_ += "-";
      else if (fill == " ") format_ += " ";
      else if (fill == "+") format_ += "+";
      else if (fill == "#") format_ += "#";
      else {
        fail("fill may be one of ' ', '+', '-', '0', '#', got '", fill, "'");
        return;
      }
    }
    if (width > -1) format_ += StrCat(width);
    if (precision > -1) format_ += StrCat(".", precision);
    conversion_ = shortest ? 'g' : scientific ? 'e' : 'f';
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, in.shape(), &out));
    std::string* dst = out->data<std::string>();
    const int64_t n = in.NumElements();
    auto each = [&](auto to_string) {
      for (int64_t i = 0; i < n; ++i) dst[i] = to_string(i);
    };
    const std::string f = format_ + conversion_;
    switch (dtype_) {
      case DT_FLOAT: each([&](int64_t i) { return Format(f, double(in.data<float>()[i])); }); break;
      case DT_DOUBLE: each([&](int64_t i) { return Format(f, in.data<double>()[i]); }); break;
      case DT_HALF:
      case DT_BFLOAT16: {
        std::vector<float> floats(n);
        if (dtype_ == DT_HALF) {
          HalfToFloat(in.data<Eigen::half>(), floats.data(), n);
        } else {
          Bfloat16ToFloat(in.data<Eigen::bfloat16>(), floats.data(), n);
        }
        each([&](int64_t i) { return Format(f, double(floats[i])); });
        break;
      }
      case DT_COMPLEX64:
        each([&](int64_t i) {
          const complex64 c = in.data<complex64>()[i];
          return StrCat("(", Format(f, c.real()), ",", Format(f, c.imag()), ")");
        });
        break;
      case DT_COMPLEX128:
        each([&](int64_t i) {
          const complex128 c = in.data<complex128>()[i];
          return StrCat("(", Format(f, c.real()), ",", Format(f, c.imag()), ")");
        });
        break;
      case DT_INT8: Integers<int8_t>(in, dst); break;
      case DT_INT16: Integers<int16_t>(in, dst); break;
      case DT_INT32: Integers<int32_t>(in, dst); break;
      case DT_INT64: Integers<int64_t>(in, dst); break;
      case DT_UINT8: Integers<uint8_t>(in, dst); break;
      case DT_UINT16: Integers<uint16_t>(in, dst); break;
      case DT_UINT32: Integers<uint32_t>(in, dst); break;
      case DT_UINT64: Integers<uint64_t>(in, dst); break;
      case DT_BOOL:  // (TensorFlow ignores width and fill here)
        each([&](int64_t i) { return std::string(in.data<bool>()[i] ? "true" : "false"); });
        break;
      case DT_STRING:
        each([&](int64_t i) { return Format(format_ + "s", in.data<std::string>()[i].c_str()); });
        break;
      default:
        context->SetStatus(
            errors::Unimplemented("AsString '", name(), "' has no kernel for ", dtype_));
    }
  }

 private:
  template <typename T>
  void Integers(const Tensor& in, std::string* dst) const {
    const std::string f = format_ + (std::is_signed_v<T> ? "lld" : "llu");
    for (int64_t i = 0, n = in.NumElements(); i < n; ++i) {
      if constexpr (std::is_signed_v<T>) {
        dst[i] = Format(f, static_cast<long long>(in.data<T>()[i]));
      } else {
        dst[i] = Format(f, static_cast<unsigned long long>(in.data<T>()[i]));
      }
    }
  }

  template <typename V>
  static std::string Format(const std::string& format, V value) {
    const int size = std::snprintf(nullptr, 0, format.c_str(), value);
    std::string out(size > 0 ? size : 0, '\0');
    std::snprintf(out.data(), out.size() + 1, format.c_str(), value);
    return out;
  }

  DType dtype_ = DT_INVALID;
  std::string format_;
  char conversion_ = 'f';
};

class ReduceJoinOp final : public OpKernel {
 public:
  explicit ReduceJoinOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("keep_dims", &keep_dims_));
    context->SetStatus(context->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& in = context->input(0);
    const Tensor& axes = context->input(1);
    const int rank = in.dims();
    // The reduced axes in the order given: the first varies fastest in the
    // joined string (TensorFlow's order).
    std::vector<bool> reduce(rank, false);
    std::vector<int> order;
    for (int64_t i = 0; i < axes.NumElements(); ++i) {
      const int64_t axis = axes.data<int32_t>()[i];
      if (axis < -rank || axis >= rank) {
        context->SetStatus(errors::InvalidArgument("ReduceJoin '", name(), "': axis ", axis,
                                                   " is out of range for input of shape ",
                                                   in.shape(), " (rank ", rank, ")"));
        return;
      }
      const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
      if (reduce[a]) {
        context->SetStatus(
            errors::InvalidArgument("ReduceJoin '", name(), "': axis ", axis, " is given twice"));
        return;
      }
      reduce[a] = true;
      order.push_back(a);
    }
    std::vector<int64_t> out_dims, strides(rank, 1);
    std::vector<int> kept;
    int64_t group = 1;  // strings joined per output (<= the input's count)
    for (int d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * in.dim_size(d);
    for (int d = 0; d < rank; ++d) {
      if (!reduce[d]) kept.push_back(d);
      if (reduce[d]) group *= in.dim_size(d);
      if (!reduce[d] || keep_dims_) out_dims.push_back(reduce[d] ? 1 : in.dim_size(d));
    }
    StatusOr<TensorShape> out_shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES_OK(context, out_shape.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &out));
    std::string* dst = out->data<std::string>();
    const std::string* src = in.data<std::string>();
    for (int64_t o = 0, outputs = out->NumElements(); o < outputs; ++o) {
      int64_t base = 0;
      for (int64_t k = static_cast<int64_t>(kept.size()) - 1, rest = o; k >= 0; --k) {
        const int d = kept[k];
        base += rest % in.dim_size(d) * strides[d];
        rest /= in.dim_size(d);
      }
      for (int64_t g = 0; g < group; ++g) {
        int64_t offset = base;
        for (int64_t a = 0, rest = g; a < static_cast<int64_t>(order.size()); ++a) {
          offset += rest % in.dim_size(order[a]) * strides[order[a]];
          rest /= in.dim_size(order[a]);
        }
        if (g > 0) dst[o] += separator_;
        dst[o] += src[offset];
      }
    }
  }

 private:
  bool keep_dims_ = false;
  std::string separator_;
};

}  // namespace

void RegisterStringConvertKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("AsString"), MakeKernel<AsStringOp>);
  registry->Register(KernelBuilder("StringToHashBucketFast"), MakeKernel<StringToHashBucketFastOp>);
  registry->Register(KernelBuilder("StringStrip"), MakeKernel<StringMapOp<Strip>>);
  registry->Register(KernelBuilder("StringLower"), MakeKernel<StringMapOp<ChangeCase<false>>>);
  registry->Register(KernelBuilder("StringUpper"), MakeKernel<StringMapOp<ChangeCase<true>>>);
  registry->Register(KernelBuilder("EncodeBase64"), MakeKernel<StringMapOp<EncodeBase64>>);
  registry->Register(KernelBuilder("DecodeBase64"), MakeKernel<StringMapOp<DecodeBase64>>);
  registry->Register(KernelBuilder("ReduceJoin"), MakeKernel<ReduceJoinOp>);
}

}  // namespace weir
