// Kernels of the logging family: Print, PrintV2 and StringFormat, writing
// and formatting as TensorFlow does (kernels/tensor_summary.h), and
// CheckNumerics[V2] (float and double here; float16_kernels.cc adds the
// 16-bit types, checked in float).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "weir/base/logging.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/tensor_summary.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// One write of a whole message, so lines of concurrent steps never mix.
std::mutex& OutputMutex() {
  static std::mutex mu;
  return mu;
}

void WriteAll(std::FILE* stream, const std::string& text) {
  std::lock_guard<std::mutex> lock(OutputMutex());
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);
}

class PrintOp final : public OpKernel {
 public:
  explicit PrintOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("message", &message_));
    context->SetStatus(context->GetAttr("first_n", &first_n_));
    context->SetStatus(context->GetAttr("summarize", &summarize_));
  }
  void Compute(OpKernelContext* context) override {
    context->set_output(0, context->input(0));
    if (first_n_ >= 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (printed_ >= first_n_) return;
      ++printed_;
    }
    std::string text = message_;
    for (int i = 1; i < context->num_inputs(); ++i) {
      text += "[" + SummarizeTensorV1(context->input(i), summarize_) + "]";
    }
    WriteAll(stderr, text + "\n");
  }

 private:
  std::string message_;
  int64_t first_n_ = -1;
  int64_t summarize_ = 3;
  std::mutex mu_;
  int64_t printed_ = 0;
};

class PrintV2Op final : public OpKernel {
 public:
  explicit PrintV2Op(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("output_stream", &stream_));
    context->SetStatus(context->GetAttr("end", &end_));
    static const char* const kStreams[] = {"stderr", "stdout", "log(info)", "log(warning)",
                                           "log(error)"};
    bool known = stream_.starts_with("file://") && stream_.size() > 7;
    for (const char* s : kStreams) known |= stream_ == s;
    if (!known) {
      context->SetStatus(errors::InvalidArgument(
          "PrintV2: output_stream '", stream_,
          "' is none of stderr, stdout, log(info), log(warning), log(error), file://<path>"));
    }
  }
  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    OP_REQUIRES(context, input.dims() == 0,
                errors::InvalidArgument("PrintV2: input must be a scalar string, got shape ",
                                        input.shape()));
    const std::string text = input.scalar<std::string>() + end_;
    if (stream_ == "stderr") {
      WriteAll(stderr, text);
    } else if (stream_ == "stdout") {
      WriteAll(stdout, text);
    } else if (stream_ == "log(info)") {
      LOG(Info) << text;
    } else if (stream_ == "log(warning)") {
      LOG(Warning) << text;
    } else if (stream_ == "log(error)") {
      LOG(Error) << text;
    } else {
      const std::string path = stream_.substr(7);
      std::lock_guard<std::mutex> lock(OutputMutex());
      std::FILE* file = std::fopen(path.c_str(), "a");
      OP_REQUIRES(context, file != nullptr,
                  errors::InvalidArgument("PrintV2: cannot open '", path, "' to append to"));
      const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
      const bool closed = std::fclose(file) == 0;
      OP_REQUIRES(context, written && closed,
                  errors::DataLoss("PrintV2: writing to '", path, "' failed"));
    }
  }

 private:
  std::string stream_;
  std::string end_;
};

class StringFormatOp final : public OpKernel {
 public:
  explicit StringFormatOp(OpKernelConstruction* context) : OpKernel(context) {
    std::string format, placeholder;
    context->SetStatus(context->GetAttr("template", &format));
    context->SetStatus(context->GetAttr("placeholder", &placeholder));
    context->SetStatus(context->GetAttr("summarize", &summarize_));
    if (placeholder.empty()) {
      context->SetStatus(errors::InvalidArgument("StringFormat: the placeholder is empty"));
      return;
    }
    size_t start = 0;
    for (size_t at; (at = format.find(placeholder, start)) != std::string::npos;
         start = at + placeholder.size()) {
      pieces_.push_back(format.substr(start, at - start));
    }
    pieces_.push_back(format.substr(start));
    const size_t inputs = context->input_types().size();
    if (pieces_.size() - 1 != inputs) {
      context->SetStatus(errors::InvalidArgument("StringFormat: template '", format, "' has ",
                                                 pieces_.size() - 1, " placeholders '", placeholder,
                                                 "' but there are ", inputs, " inputs"));
    }
  }
  void Compute(OpKernelContext* context) override {
    std::string text = pieces_[0];
    for (int i = 0; i < context->num_inputs(); ++i) {
      text += SummarizeTensorV2(context->input(i), summarize_) + pieces_[i + 1];
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({}), &output));
    output->scalar<std::string>() = std::move(text);
  }

 private:
  std::vector<std::string> pieces_;  // the template around its placeholders
  int64_t summarize_ = 3;
};

// Passes its input through when every element is finite; otherwise fails
// with TensorFlow's text: "<message> : Tensor had Inf and NaN values"
// (CheckNumerics), "<message> : Tensor had -Inf, +Inf, and NaN values"
// (CheckNumericsV2, which tells the signs apart), naming those present.
template <typename T, bool kSigned>
class CheckNumericsOp final : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("message", &message_));
  }
  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const T* data = input.data<T>();
    bool nan = false, negative_inf = false, positive_inf = false;
    for (int64_t i = 0, n = input.NumElements(); i < n; ++i) {
      const T v = data[i];
      if (!std::isfinite(v)) {
        if (std::isnan(v)) {
          nan = true;
        } else {
          (v > 0 ? positive_inf : negative_inf) = true;
        }
      }
    }
    if (nan || negative_inf || positive_inf) {
      std::vector<std::string> found;
      if (kSigned) {
        if (negative_inf) found.push_back("-Inf");
        if (positive_inf) found.push_back("+Inf");
      } else if (negative_inf || positive_inf) {
        found.push_back("Inf");
      }
      if (nan) found.push_back("NaN");
      std::string what = found[0];
      if (found.size() == 2) what = StrCat(found[0], " and ", found[1]);
      if (found.size() == 3) what = StrCat(found[0], ", ", found[1], ", and ", found[2]);
      context->SetStatus(errors::InvalidArgument(message_, " : Tensor had ", what, " values"));
      return;
    }
    context->set_output(0, input);
  }

 private:
  std::string message_;
};

}  // namespace

void RegisterLoggingKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Print"), MakeKernel<PrintOp>);
  registry->Register(KernelBuilder("PrintV2"), MakeKernel<PrintV2Op>);
  registry->Register(KernelBuilder("StringFormat"), MakeKernel<StringFormatOp>);
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(KernelBuilder("CheckNumerics").TypeConstraint<T>("T"),
                       MakeKernel<CheckNumericsOp<T, false>>);
    registry->Register(KernelBuilder("CheckNumericsV2").TypeConstraint<T>("T"),
                       MakeKernel<CheckNumericsOp<T, true>>);
  });
}

}  // namespace weir
