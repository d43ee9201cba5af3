// Kernels of the parsing family: ParseExampleV2, ParseExample and ParseSingleExample on
// kernels/example_parser.h; DecodeRaw, DecodeCSV and StringToNumber
// (decode_kernels.cc); SerializeTensor and ParseTensor
// (tensor_serialization_kernels.cc).
#include "weir/kernels/parsing_kernels.h"

#include <memory>
#include <mutex>
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

// A parser is built from keys and defaults, which steps usually pass as the
// same constants: the last one is kept and reused while they match (building
// one costs about as much as parsing a small Example).
class ParserCache {
 public:
  // The kept parser if matches(its config), else make()'s, which is kept.
  template <typename Matches, typename Make>
  StatusOr<std::shared_ptr<const ExampleParser>> Get(Matches&& matches, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (parser_ != nullptr && matches(parser_->config())) return parser_;
    }
    WEIR_ASSIGN_OR_RETURN(ExampleParser parser, make());
    auto shared = std::make_shared<const ExampleParser>(std::move(parser));
    std::lock_guard<std::mutex> lock(mu_);
    parser_ = shared;
    return shared;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const ExampleParser> parser_;
};

bool SameDefaults(const ExampleParserConfig& config, OpKernelContext* context, int first) {
  for (size_t i = 0; i < config.dense.size(); ++i) {
    if (!config.dense[i].default_value.ContentEquals(context->input(first + i))) return false;
  }
  return true;
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
    const Tensor& sparse_keys = context->input(2);
    const Tensor& dense_keys = context->input(3);
    const Tensor& ragged_keys = context->input(4);
    auto matches = [&](const ExampleParserConfig& config) {
      for (size_t i = 0; i < config.sparse.size(); ++i) {
        if (config.sparse[i].key != sparse_keys.data<std::string>()[i]) return false;
      }
      for (size_t i = 0; i < config.dense.size(); ++i) {
        if (config.dense[i].key != dense_keys.data<std::string>()[i]) return false;
      }
      for (size_t i = 0; i < config.ragged.size(); ++i) {
        if (config.ragged[i].key != ragged_keys.data<std::string>()[i]) return false;
      }
      return SameDefaults(config, context, 5);
    };
    auto make = [&]() {
      ExampleParserConfig config;
      for (size_t i = 0; i < sparse_types_.size(); ++i) {
        config.sparse.push_back({sparse_keys.data<std::string>()[i], sparse_types_[i]});
      }
      for (size_t i = 0; i < dense_types_.size(); ++i) {
        config.dense.push_back({dense_keys.data<std::string>()[i], dense_types_[i],
                                dense_shapes_[i], context->input(5 + i)});
      }
      for (size_t i = 0; i < ragged_value_types_.size(); ++i) {
        config.ragged.push_back(
            {ragged_keys.data<std::string>()[i], ragged_value_types_[i], ragged_split_types_[i]});
      }
      return ExampleParser::Create(std::move(config));
    };
    StatusOr<std::shared_ptr<const ExampleParser>> parser = cache_.Get(matches, make);
    OP_REQUIRES_OK(context, parser.status().WithContext("ParseExampleV2"));
    ParsedExamples parsed;
    OP_REQUIRES_OK(context, (*parser)
                                ->Parse(Strings(serialized), Strings(names), serialized.dims() == 1,
                                        context->allocator(), &parsed)
                                .WithContext("ParseExampleV2"));
    SetOutputs(context, std::move(parsed));
  }

 private:
  std::vector<DType> sparse_types_, dense_types_, ragged_value_types_, ragged_split_types_;
  std::vector<PartialShape> dense_shapes_;
  ParserCache cache_;
};

// ParseExample (V1): ParseExampleV2's parser with the keys read from one
// scalar input each.
class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("sparse_types", &sparse_types_));
    context->SetStatus(context->GetAttr("Tdense", &dense_types_));
    context->SetStatus(context->GetAttr("dense_shapes", &dense_shapes_));
    if (context->status().ok() && dense_types_.size() != dense_shapes_.size()) {
      context->SetStatus(errors::InvalidArgument("ParseExample: Tdense (", dense_types_.size(),
                                                 ") and dense_shapes (", dense_shapes_.size(),
                                                 ") must have equal lengths"));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& serialized = context->input(0);
    const Tensor& names = context->input(1);
    const int num_sparse = static_cast<int>(sparse_types_.size());
    const int num_dense = static_cast<int>(dense_types_.size());
    OP_REQUIRES(context, serialized.dims() <= 1,
                errors::InvalidArgument("ParseExample: serialized must be a scalar or a vector "
                                        "but has shape ",
                                        serialized.shape()));
    OP_REQUIRES(
        context,
        names.dims() <= 1 &&
            (names.NumElements() == 0 || names.NumElements() == serialized.NumElements()),
        errors::InvalidArgument("ParseExample: names must be empty or hold one name per "
                                "example (",
                                serialized.NumElements(), ") but has shape ", names.shape()));
    std::vector<std::string> keys;
    for (int i = 0; i < num_sparse + num_dense; ++i) {
      const Tensor& key = context->input(2 + i);
      OP_REQUIRES(context, key.dims() == 0,
                  errors::InvalidArgument("ParseExample: key ", i,
                                          " must be a scalar but has shape ", key.shape()));
      keys.push_back(key.data<std::string>()[0]);
    }
    const int defaults = 2 + num_sparse + num_dense;
    auto matches = [&](const ExampleParserConfig& config) {
      for (int i = 0; i < num_sparse; ++i) {
        if (config.sparse[i].key != keys[i]) return false;
      }
      for (int i = 0; i < num_dense; ++i) {
        if (config.dense[i].key != keys[num_sparse + i]) return false;
      }
      return SameDefaults(config, context, defaults);
    };
    auto make = [&]() {
      ExampleParserConfig config;
      for (int i = 0; i < num_sparse; ++i) config.sparse.push_back({keys[i], sparse_types_[i]});
      for (int i = 0; i < num_dense; ++i) {
        config.dense.push_back({keys[num_sparse + i], dense_types_[i], dense_shapes_[i],
                                context->input(defaults + i)});
      }
      return ExampleParser::Create(std::move(config));
    };
    StatusOr<std::shared_ptr<const ExampleParser>> parser = cache_.Get(matches, make);
    OP_REQUIRES_OK(context, parser.status().WithContext("ParseExample"));
    ParsedExamples parsed;
    OP_REQUIRES_OK(context, (*parser)
                                ->Parse(Strings(serialized), Strings(names), serialized.dims() == 1,
                                        context->allocator(), &parsed)
                                .WithContext("ParseExample"));
    SetOutputs(context, std::move(parsed));
  }

 private:
  std::vector<DType> sparse_types_, dense_types_;
  std::vector<PartialShape> dense_shapes_;
  ParserCache cache_;
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
    auto matches = [&](const ExampleParserConfig& config) {
      return SameDefaults(config, context, 1);
    };
    auto make = [&]() {
      ExampleParserConfig config;
      for (size_t i = 0; i < sparse_keys_.size(); ++i) {
        config.sparse.push_back({sparse_keys_[i], sparse_types_[i]});
      }
      for (size_t i = 0; i < dense_keys_.size(); ++i) {
        config.dense.push_back(
            {dense_keys_[i], dense_types_[i], dense_shapes_[i], context->input(1 + i)});
      }
      return ExampleParser::Create(std::move(config));
    };
    StatusOr<std::shared_ptr<const ExampleParser>> parser = cache_.Get(matches, make);
    OP_REQUIRES_OK(context, parser.status().WithContext("ParseSingleExample"));
    ParsedExamples parsed;
    OP_REQUIRES_OK(context, (*parser)
                                ->Parse(Strings(serialized), {}, /*batched=*/false,
                                        context->allocator(), &parsed)
                                .WithContext("ParseSingleExample"));
    SetOutputs(context, std::move(parsed));
  }

 private:
  std::vector<std::string> sparse_keys_, dense_keys_;
  std::vector<DType> sparse_types_, dense_types_;
  std::vector<PartialShape> dense_shapes_;
  ParserCache cache_;
};

}  // namespace

void RegisterParsingKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("ParseExampleV2"), MakeKernel<ParseExampleV2Op>);
  registry->Register(KernelBuilder("ParseExample"), MakeKernel<ParseExampleOp>);
  registry->Register(KernelBuilder("ParseSingleExample"), MakeKernel<ParseSingleExampleOp>);
  RegisterDecodeKernels(registry);
  RegisterTensorSerializationKernels(registry);
}

}  // namespace weir
