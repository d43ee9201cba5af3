// Kernels of the summary family. Each builds a Summary proto and outputs it
// serialized as a string scalar; this is the one kernel file that includes a
// generated proto header, since a serialized proto is what these ops produce.
#include <Eigen/Core>
#include <string>
#include <unordered_set>

#include "proto/summary.pb.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/summary_histogram.h"
#include "weir/kernels/tensor_summary.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

template <typename T>
double ToDouble(T value) {
  if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return static_cast<float>(value);
  } else {
    return static_cast<double>(value);
  }
}

Status OutputSummary(OpKernelContext* context, const wire::Summary& summary) {
  Tensor* output = nullptr;
  WEIR_RETURN_IF_ERROR(context->allocate_output(0, TensorShape({}), &output));
  if (!summary.SerializeToString(&output->scalar<std::string>())) {
    return errors::InvalidArgument(context->op_kernel().type_string(),
                                   ": the summary is over protobuf's 2 GiB limit");
  }
  return Status::OK();
}

// " (tag 'x')" when `tags` holds one tag, so an error names it.
std::string SingleTag(const Tensor& tags) {
  if (tags.NumElements() != 1) return "";
  return StrCat(" (tag '", tags.data<std::string>()[0], "')");
}

template <typename T>
class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& tags = context->input(0);
    const Tensor& values = context->input(1);
    OP_REQUIRES(context, tags.shape() == values.shape(),
                errors::InvalidArgument("ScalarSummary: tags and values must have the same "
                                        "shape, not ",
                                        tags.shape(), " and ", values.shape(), SingleTag(tags)));
    wire::Summary summary;
    std::span<const std::string> tag_list = tags.flat<std::string>();
    std::span<const T> value_list = values.flat<T>();
    for (size_t i = 0; i < tag_list.size(); ++i) {
      wire::Summary::Value* value = summary.add_value();
      value->set_tag(tag_list[i]);
      value->set_simple_value(static_cast<float>(ToDouble(value_list[i])));
    }
    OP_REQUIRES_OK(context, OutputSummary(context, summary));
  }
};

template <typename T>
class HistogramSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& tag = context->input(0);
    const Tensor& values = context->input(1);
    OP_REQUIRES(context, tag.dims() == 0,
                errors::InvalidArgument("HistogramSummary: tag must be a scalar but has shape ",
                                        tag.shape()));
    const std::string& name = tag.scalar<std::string>();
    SummaryHistogram histogram;
    std::span<const T> value_list = values.flat<T>();
    for (size_t i = 0; i < value_list.size(); ++i) {
      const double value = ToDouble(value_list[i]);
      OP_REQUIRES(
          context, std::isfinite(value),
          errors::InvalidArgument("HistogramSummary: ", std::isnan(value) ? "NaN" : "Infinity",
                                  " in summary histogram for tag '", name, "' at flat index ", i,
                                  " of values ", values.shape(), " ", input_type(1)));
      histogram.Add(value);
    }
    wire::Summary summary;
    wire::Summary::Value* value = summary.add_value();
    value->set_tag(name);
    wire::HistogramProto* proto = value->mutable_histo();
    proto->set_min(histogram.min());
    proto->set_max(histogram.max());
    proto->set_num(histogram.num());
    proto->set_sum(histogram.sum());
    proto->set_sum_squares(histogram.sum_squares());
    for (const SummaryHistogram::Bucket& bucket : histogram.MergedBuckets()) {
      proto->add_bucket_limit(bucket.limit);
      proto->add_bucket(bucket.count);
    }
    OP_REQUIRES_OK(context, OutputSummary(context, summary));
  }
};

class MergeSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    wire::Summary merged;
    std::unordered_set<std::string> tags;
    for (int input = 0; input < context->num_inputs(); ++input) {
      std::span<const std::string> serialized = context->input(input).flat<std::string>();
      for (size_t i = 0; i < serialized.size(); ++i) {
        wire::Summary summary;
        OP_REQUIRES(context, summary.ParseFromString(serialized[i]),
                    errors::InvalidArgument("MergeSummary: inputs[", input, "] (shape ",
                                            context->input(input).shape(), ") element ", i,
                                            " is not a serialized Summary"));
        for (wire::Summary::Value& value : *summary.mutable_value()) {
          // Values without a tag (old-style image, audio) are never duplicates.
          OP_REQUIRES(context, value.tag().empty() || tags.insert(value.tag()).second,
                      errors::InvalidArgument("MergeSummary: duplicate tag '", value.tag(),
                                              "' in inputs[", input, "] element ", i));
          *merged.add_value() = std::move(value);
        }
      }
    }
    OP_REQUIRES_OK(context, OutputSummary(context, merged));
  }
};

}  // namespace

class AssertOp final : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("summarize", &summarize_));
  }
  void Compute(OpKernelContext* context) override {
    const Tensor& condition = context->input(0);
    OP_REQUIRES(context, condition.dims() == 0,
                errors::InvalidArgument("Assert: the condition must be a bool scalar, got shape ",
                                        condition.shape()));
    if (condition.scalar<bool>()) return;
    // TensorFlow's message: each data tensor's summary in brackets.
    std::string message = "assertion failed: ";
    for (int i = 1; i < context->num_inputs(); ++i) {
      if (i > 1) message += " ";
      message += "[" + SummarizeTensorV1(context->input(i), summarize_) + "]";
    }
    context->SetStatus(errors::InvalidArgument(message));
  }

 private:
  int64_t summarize_ = 3;
};

void RegisterSummaryKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Assert"), MakeKernel<AssertOp>);
  ForEachType<float, double, int32_t, uint8_t, int16_t, int8_t, int64_t, Eigen::bfloat16, uint16_t,
              Eigen::half, uint32_t, uint64_t>([&]<typename T>() {
    registry->Register(KernelBuilder("ScalarSummary").TypeConstraint<T>("T"),
                       MakeKernel<ScalarSummaryOp<T>>);
    registry->Register(KernelBuilder("HistogramSummary").TypeConstraint<T>("T"),
                       MakeKernel<HistogramSummaryOp<T>>);
  });
  registry->Register(KernelBuilder("MergeSummary"), MakeKernel<MergeSummaryOp>);
}

}  // namespace weir
