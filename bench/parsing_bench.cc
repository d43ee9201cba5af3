// The cost of parsing tf.train.Examples as the main job stores them (a
// 784-byte image as one bytes feature and an int64 label), per example:
// ParseExampleV2 on batches through a session (so the step's own overhead is
// in the small batches), ParseSingleExample, and the image decoded with
// DecodeRaw; against protobuf's generated parser doing the same lookups
// (the reference for "is the hand-written wire parser worth it").
//
//   build/release/bench/parsing_bench
#include <benchmark/benchmark.h>

#include "proto/example.pb.h"
#include "weir/framework/allocator.h"
#include "weir/kernels/example_parser.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

std::string FashionMnistExample(int i) {
  wire::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  std::string image(784, '\0');
  for (size_t p = 0; p < image.size(); ++p) image[p] = static_cast<char>((p * 31 + i) & 0xff);
  features["image"].mutable_bytes_list()->add_value(image);
  features["label"].mutable_int64_list()->add_value(i % 10);
  return example.SerializeAsString();
}

Tensor Batch(int batch) {
  Tensor t(DT_STRING, TensorShape({batch}));
  for (int i = 0; i < batch; ++i) t.data<std::string>()[i] = FashionMnistExample(i);
  return t;
}

struct Step {
  std::unique_ptr<Session> session;
  std::vector<std::string> fetches;
};

// serialized [batch] -> ParseExampleV2 (image string [], label int64 []),
// and with `decode` the image through DecodeRaw to uint8 [batch, 784].
Step BuildParse(bool decode) {
  RegisterStandardOpsAndKernels();
  Scope root = Scope::NewRootScope();
  Output serialized = ops::Placeholder(root.WithOpName("serialized"), DT_STRING);
  auto strings = [&](std::vector<std::string> values) {
    return ops::Const(root, Tensor::FromVector(values));
  };
  Operation parse = ops::ParseExampleV2(
      root, serialized, strings({}), strings({}), strings({"image", "label"}), strings({}),
      {ops::Const(root, Tensor(DT_STRING, TensorShape({0}))),
       ops::Const(root, Tensor::Scalar<int64_t>(0))},
      0, {}, {}, {}, {PartialShape(std::vector<int64_t>{}), PartialShape(std::vector<int64_t>{})});
  Step step;
  Output image = parse.output(0);
  if (decode) image = ops::DecodeRaw(root, image, DT_UINT8);
  step.fetches = {image.name(), parse.output(1).name()};
  step.session = std::move(Session::New(SessionOptions())).value();
  CHECK(root.status().ok()) << root.status();
  Status created = step.session->Create(root.ToGraphDef());
  CHECK(created.ok()) << created;
  return step;
}

void RunSteps(benchmark::State& state, bool decode) {
  const int batch = static_cast<int>(state.range(0));
  Step step = BuildParse(decode);
  Tensor input = Batch(batch);
  std::vector<Tensor> outputs;
  for (auto _ : state) {
    Status ran = step.session->Run({{"serialized", input}}, step.fetches, {}, &outputs);
    if (!ran.ok()) state.SkipWithError(ran.ToString().c_str());
    benchmark::DoNotOptimize(outputs);
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_ParseExampleV2(benchmark::State& state) { RunSteps(state, false); }
BENCHMARK(BM_ParseExampleV2)->Arg(1)->Arg(100)->Arg(1000);

void BM_ParseExampleV2ThenDecodeRaw(benchmark::State& state) { RunSteps(state, true); }
BENCHMARK(BM_ParseExampleV2ThenDecodeRaw)->Arg(100);

void BM_ParseSingleExample(benchmark::State& state) {
  RegisterStandardOpsAndKernels();
  Scope root = Scope::NewRootScope();
  Output serialized = ops::Placeholder(root.WithOpName("serialized"), DT_STRING);
  Operation parse = ops::ParseSingleExample(
      root, serialized,
      {ops::Const(root, Tensor(DT_STRING, TensorShape({0}))),
       ops::Const(root, Tensor::Scalar<int64_t>(0))},
      0, {}, {"image", "label"}, {},
      {PartialShape(std::vector<int64_t>{}), PartialShape(std::vector<int64_t>{})});
  auto session = std::move(Session::New(SessionOptions())).value();
  CHECK(root.status().ok() && session->Create(root.ToGraphDef()).ok());
  const std::vector<std::string> fetches = {parse.output(0).name(), parse.output(1).name()};
  Tensor input = Tensor::Scalar(FashionMnistExample(3));
  std::vector<Tensor> outputs;
  for (auto _ : state) {
    Status ran = session->Run({{"serialized", input}}, fetches, {}, &outputs);
    if (!ran.ok()) state.SkipWithError(ran.ToString().c_str());
    benchmark::DoNotOptimize(outputs);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseSingleExample);

// The kernels' parts without a session: building the parser from the
// keys (each Compute does) and parsing one Example.
ExampleParserConfig FashionMnistConfig() {
  ExampleParserConfig config;
  config.dense = {
      {"image", DT_STRING, PartialShape(std::vector<int64_t>{}), Tensor()},
      {"label", DT_INT64, PartialShape(std::vector<int64_t>{}), Tensor::Scalar<int64_t>(0)}};
  return config;
}

void BM_ExampleParserCreate(benchmark::State& state) {
  const ExampleParserConfig config = FashionMnistConfig();
  for (auto _ : state) {
    StatusOr<ExampleParser> parser = ExampleParser::Create(config);
    benchmark::DoNotOptimize(parser);
  }
}
BENCHMARK(BM_ExampleParserCreate);

void BM_ExampleParserParse(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  ExampleParser parser = std::move(ExampleParser::Create(FashionMnistConfig())).value();
  Tensor input = Batch(batch);
  const std::span<const std::string> serialized(input.data<std::string>(), batch);
  for (auto _ : state) {
    ParsedExamples out;
    Status parsed = parser.Parse(serialized, {}, /*batched=*/true, DefaultCpuAllocator(), &out);
    if (!parsed.ok()) state.SkipWithError(parsed.ToString().c_str());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_ExampleParserParse)->Arg(1)->Arg(100);

// The reference: protobuf's generated parser builds the whole message (the
// feature map included), then the two features are looked up and copied.
void BM_ProtobufGeneratedParser(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  Tensor input = Batch(batch);
  Tensor images(DT_STRING, TensorShape({batch}));
  Tensor labels(DT_INT64, TensorShape({batch}));
  wire::Example example;
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) {
      if (!example.ParseFromString(input.data<std::string>()[i])) state.SkipWithError("parse");
      const auto& features = example.features().feature();
      images.data<std::string>()[i] = features.at("image").bytes_list().value(0);
      labels.data<int64_t>()[i] = features.at("label").int64_list().value(0);
    }
    benchmark::DoNotOptimize(images.raw_data());
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_ProtobufGeneratedParser)->Arg(100);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
