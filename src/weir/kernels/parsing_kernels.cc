// Kernels of the parsing family: ParseExampleV2 and ParseSingleExample on
// kernels/example_parser.h; DecodeRaw, DecodeCSV and StringToNumber
// (decode_kernels.cc); SerializeTensor and ParseTensor
// (tensor_serialization_kernels.cc).
#include "weir/kernels/parsing_kernels.h"

#include <span>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/example_parser.h"

namespace weir {
namespace {

std::span<const std::string> Strings(const Tensor& t) {
  return {t.data<std::string>(), static_cast<size_t>(t.NumElements())};
}

Status CheckKeys(std::string_view op, const Tensor& keys, std::string_view what, size_t expected) {
  if (keys.dims() != 1 || keys.dim_size(0) != static_cast<int64_t>(expected)) {
    return errors::InvalidArgument(op, ": ", what, " must be a vector of ", expected,
                                   " keys but has shape ", keys.shape());
  }
  return Status::OK();
}

void SetOutputs(OpKernelContext* context, ParsedExamples parsed) {
  int next = 0;
  for (auto* group : {&parsed.sparse_indices, &parsed.sparse_values, &parsed.sparse_shapes,
                      &parsed.dense_values, &parsed.ragged_values, &parsed.ragged_splits}) {
    for (Tensor& t : *group) context->set_output(next++, std::move(t));
  }
}

class ParseExampleV2Op : public OpKernel {
 public:
  explicit ParseExampleV2Op(OpKernelConstruction* context) : OpKernel(context) {
    int64_t num_sparse = 0;
    context->SetStatus(context->GetAttr("num_sparse", &num_sparse));
    context->SetStatus(context->GetAttr("sparse_types", &sparse_types_));
    context->SetStatus(context->GetAttr("Tdense", &dense_types_));
    context->SetStatus(context->GetAttr("dense_shapes", &dense_shapes_));
    context->SetStatus(context->GetAttr("ragged_value_types", &ragged_value_types_));
    context->SetStatus(context->GetAttr("ragged_split_types", &ragged_split_types_));
    if (!context->status().ok()) return;
    if (num_sparse != static_cast<int64_t>(sparse_types_.size()) ||
        dense_types_.size() != dense_shapes_.size() ||
        ragged_value_types_.size() != ragged_split_types_.size()) {
      context->SetStatus(errors::InvalidArgument(
          "ParseExampleV2: num_sparse (", num_sparse, ") and sparse_types (", sparse_types_.size(),
          "), Tdense (", dense_types_.size(), ") and dense_shapes (", dense_shapes_.size(),
          "), ragged_value_types (", ragged_value_types_.size(), ") and ragged_split_types (",
          ragged_split_types_.size(), ") must have equal lengths"));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& serialized = context->input(0);
    const Tensor& names = context->input(1);
    OP_REQUIRES(context, serialized.dims() <= 1,
                errors::InvalidArgument("ParseExampleV2: serialized must be a scalar or a "
                                        "vector but has shape ",
                                        serialized.shape()));
    OP_REQUIRES(
        context,
        names.dims() <= 1 &&
            (names.NumElements() == 0 || names.NumElements() == serialized.NumElements()),
        errors::InvalidArgument("ParseExampleV2: names must be empty or hold one name "
                                "per example (",
                                serialized.NumElements(), ") but has shape ", names.shape()));
    OP_REQUIRES_OK(context, CheckKeys("ParseExampleV2", context->input(2), "sparse_keys",
                                      sparse_types_.size()));
    OP_REQUIRES_OK(
        context, CheckKeys("ParseExampleV2", context->input(3), "dense_keys", dense_types_.size()));
    OP_REQUIRES_OK(context, CheckKeys("ParseExampleV2", context->input(4), "ragged_keys",
                                      ragged_value_types_.size()));
    ExampleParserConfig config;
    for (size_t i = 0; i < sparse_types_.size(); ++i) {
      config.sparse.push_back({context->input(2).data<std::string>()[i], sparse_types_[i]});
    }
    for (size_t i = 0; i < dense_types_.size(); ++i) {
      config.dense.push_back({context->input(3).data<std::string>()[i], dense_types_[i],
                              dense_shapes_[i], context->input(5 + i)});
    }
    for (size_t i = 0; i < ragged_value_types_.size(); ++i) {
      config.ragged.push_back({context->input(4).data<std::string>()[i], ragged_value_types_[i],
                               ragged_split_types_[i]});
    }
    StatusOr<ExampleParser> parser = ExampleParser::Create(std::move(config));
    OP_REQUIRES_OK(context, parser.status().WithContext("ParseExampleV2"));
    ParsedExamples parsed;
    OP_REQUIRES_OK(context, parser
                                ->Parse(Strings(serialized), Strings(names), serialized.dims() == 1,
                                        context->allocator(), &parsed)
                                .WithContext("ParseExampleV2"));
    SetOutputs(context, std::move(parsed));
  }

 private:
  std::vector<DType> sparse_types_, dense_types_, ragged_value_types_, ragged_split_types_;
  std::vector<PartialShape> dense_shapes_;
};

class ParseSingleExampleOp : public OpKernel {
 public:
  explicit ParseSingleExampleOp(OpKernelConstruction* context) : OpKernel(context) {
    int64_t num_sparse = 0;
    context->SetStatus(context->GetAttr("num_sparse", &num_sparse));
    context->SetStatus(context->GetAttr("sparse_keys", &sparse_keys_));
    context->SetStatus(context->GetAttr("dense_keys", &dense_keys_));
    context->SetStatus(context->GetAttr("sparse_types", &sparse_types_));
    context->SetStatus(context->GetAttr("Tdense", &dense_types_));
    context->SetStatus(context->GetAttr("dense_shapes", &dense_shapes_));
    if (!context->status().ok()) return;
    if (num_sparse != static_cast<int64_t>(sparse_keys_.size()) ||
        sparse_keys_.size() != sparse_types_.size() || dense_keys_.size() != dense_types_.size() ||
        dense_keys_.size() != dense_shapes_.size()) {
      context->SetStatus(errors::InvalidArgument(
          "ParseSingleExample: num_sparse (", num_sparse, "), sparse_keys (", sparse_keys_.size(),
          ") and sparse_types (", sparse_types_.size(), ") must agree, as must dense_keys (",
          dense_keys_.size(), "), Tdense (", dense_types_.size(), ") and dense_shapes (",
          dense_shapes_.size(), ")"));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& serialized = context->input(0);
    OP_REQUIRES(context, serialized.dims() == 0,
                errors::InvalidArgument("ParseSingleExample: serialized must be a scalar but "
                                        "has shape ",
                                        serialized.shape()));
    ExampleParserConfig config;
    for (size_t i = 0; i < sparse_keys_.size(); ++i) {
      config.sparse.push_back({sparse_keys_[i], sparse_types_[i]});
    }
    for (size_t i = 0; i < dense_keys_.size(); ++i) {
      config.dense.push_back(
          {dense_keys_[i], dense_types_[i], dense_shapes_[i], context->input(1 + i)});
    }
    StatusOr<ExampleParser> parser = ExampleParser::Create(std::move(config));
    OP_REQUIRES_OK(context, parser.status().WithContext("ParseSingleExample"));
    ParsedExamples parsed;
    OP_REQUIRES_OK(
        context,
        parser->Parse(Strings(serialized), {}, /*batched=*/false, context->allocator(), &parsed)
            .WithContext("ParseSingleExample"));
    SetOutputs(context, std::move(parsed));
  }

 private:
  std::vector<std::string> sparse_keys_, dense_keys_;
  std::vector<DType> sparse_types_, dense_types_;
  std::vector<PartialShape> dense_shapes_;
};

}  // namespace

void RegisterParsingKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("ParseExampleV2"), MakeKernel<ParseExampleV2Op>);
  registry->Register(KernelBuilder("ParseSingleExample"), MakeKernel<ParseSingleExampleOp>);
  RegisterDecodeKernels(registry);
  RegisterTensorSerializationKernels(registry);
}

}  // namespace weir
