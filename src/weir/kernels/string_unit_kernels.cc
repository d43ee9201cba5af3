// StringLength and Substr (ops/string_ops.cc), counting bytes or UTF-8
// characters. A UTF-8 character starts at every byte that is not a
// continuation byte (10xxxxxx), so malformed text still has a length and
// is cut at byte boundaries TensorFlow would cut at.
#include <string>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/broadcast.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

int64_t Utf8Length(const std::string& s) {
  int64_t n = 0;
  for (char c : s) n += !IsContinuation(c);
  return n;
}

// The byte offset of character `chars` (== s.size() at the end).
int64_t Utf8Offset(const std::string& s, int64_t chars) {
  int64_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (IsContinuation(s[i])) continue;
    if (seen == chars) return static_cast<int64_t>(i);
    ++seen;
  }
  return static_cast<int64_t>(s.size());
}

Status ParseUnit(OpKernelConstruction* context, bool* utf8) {
  std::string unit;
  WEIR_RETURN_IF_ERROR(context->GetAttr("unit", &unit));
  if (unit != "BYTE" && unit != "UTF8_CHAR") {
    return errors::InvalidArgument(context->node().op, ": unit '", unit,
                                   "' is not BYTE or UTF8_CHAR");
  }
  *utf8 = unit == "UTF8_CHAR";
  return Status::OK();
}

class StringLengthOp : public OpKernel {
 public:
  explicit StringLengthOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(ParseUnit(context, &utf8_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &out));
    const std::string* s = input.data<std::string>();
    int32_t* lengths = out->data<int32_t>();
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      const int64_t n = utf8_ ? Utf8Length(s[i]) : static_cast<int64_t>(s[i].size());
      OP_REQUIRES(context, n <= INT32_MAX,
                  errors::InvalidArgument("StringLength (node ", name(), "): input[", i,
                                          "] is longer than int32 counts"));
      lengths[i] = static_cast<int32_t>(n);
    }
  }

 private:
  bool utf8_ = false;
};

// The offsets of each output element in a and b, broadcast to `out`.
std::vector<std::pair<int64_t, int64_t>> BroadcastOffsets(const TensorShape& a,
                                                          const TensorShape& b,
                                                          const TensorShape& out) {
  const int rank = out.rank();
  auto strides_for = [&](const TensorShape& s) {
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (int k = s.rank() - 1, o = rank - 1; k >= 0; --k, --o) {
      strides[o] = s.dim_size(k) == 1 ? 0 : stride;
      stride *= s.dim_size(k);
    }
    return strides;
  };
  const std::vector<int64_t> sa = strides_for(a), sb = strides_for(b);
  std::vector<std::pair<int64_t, int64_t>> offsets(out.num_elements());
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    int64_t rest = i, oa = 0, ob = 0;
    for (int k = rank - 1; k >= 0; --k) {
      const int64_t c = rest % out.dim_size(k);
      rest /= out.dim_size(k);
      oa += c * sa[k];
      ob += c * sb[k];
    }
    offsets[i] = {oa, ob};
  }
  return offsets;
}

template <typename T>
class SubstrOp : public OpKernel {
 public:
  explicit SubstrOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(ParseUnit(context, &utf8_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& pos = context->input(1);
    const Tensor& len = context->input(2);
    const std::string where =
        StrCat("Substr (node ", name(), ", input ", input.shape(), ", pos ", pos.shape(), ", len ",
               len.shape(), ", dtype ", kDTypeOf<T>, ")");
    OP_REQUIRES(context, pos.shape() == len.shape(),
                errors::InvalidArgument(where, ": pos and len must have one shape"));
    StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(input.shape(), pos.shape());
    OP_REQUIRES(context, plan.ok(), errors::InvalidArgument(where, ": ", plan.status().message()));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, plan->output_shape, &out));
    const auto offsets = BroadcastOffsets(input.shape(), pos.shape(), plan->output_shape);
    const std::string* s = input.data<std::string>();
    const T* p = pos.data<T>();
    const T* l = len.data<T>();
    std::string* dst = out->data<std::string>();
    for (size_t i = 0; i < offsets.size(); ++i) {
      const std::string& str = s[offsets[i].first];
      const int64_t size = utf8_ ? Utf8Length(str) : static_cast<int64_t>(str.size());
      int64_t start = p[offsets[i].second];
      const int64_t length = l[offsets[i].second];
      if (start < 0) start += size;
      OP_REQUIRES(context, start >= 0 && start <= size,
                  errors::InvalidArgument(where, ": pos ", p[offsets[i].second],
                                          " is out of range for string ", i, " of ", size,
                                          utf8_ ? " characters" : " bytes"));
      // A negative len runs to the end, as TensorFlow's does.
      const int64_t end = length < 0 || length > size - start ? size : start + length;
      if (utf8_) {
        const int64_t first = Utf8Offset(str, start);
        dst[i] = str.substr(first, Utf8Offset(str, end) - first);
      } else {
        dst[i] = str.substr(start, end - start);
      }
    }
  }

 private:
  bool utf8_ = false;
};

}  // namespace

void RegisterStringUnitKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("StringLength"), MakeKernel<StringLengthOp>);
  ForEachType<int32_t, int64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("Substr").TypeConstraint<T>("T"), MakeKernel<SubstrOp<T>>);
  });
}

}  // namespace weir
