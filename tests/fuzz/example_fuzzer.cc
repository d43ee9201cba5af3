// Serialized tf.train.Example bytes -> ExampleParser (the parser behind
// ParseExampleV2 and ParseSingleExample). The first byte picks one of a few
// feature specs and whether to parse a batch; the rest is split into up to
// 8 serialized examples (a length byte, then the bytes).
//
// On success the outputs must be well formed: dense values of the spec's
// shape (a batch dim first; a variable first dim padded to the longest),
// sparse indices inside the dense shape, in row-major order, one per value.
// And the dense float feature "f" must hold exactly what protobuf's own
// parser finds in each example (or the default when it is missing).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/example.pb.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_support.h"
#include "weir/framework/allocator.h"
#include "weir/kernels/example_parser.h"

namespace weir::fuzz {
namespace {

Tensor Scalar(DType dtype) {
  Tensor t(dtype, TensorShape());
  if (dtype == DT_FLOAT) t.scalar<float>() = -1.5f;
  if (dtype == DT_INT64) t.scalar<int64_t>() = -7;
  if (dtype == DT_STRING) t.scalar<std::string>() = "dflt";
  return t;
}

Tensor FloatPair() {
  Tensor t(DT_FLOAT, TensorShape({2}));
  t.data<float>()[0] = 0.25f;
  t.data<float>()[1] = -0.5f;
  return t;
}

// Spec 0: "f" float [2] with default, "i" int64 [] required, sparse "s"
// string. Spec 1: "f" float [-1] padded, sparse "i" int64, ragged "b"
// bytes. Spec 2: "f" float [2] required, "b" string [] with default,
// sparse "f2" float.
const std::vector<ExampleParser>& Parsers() {
  static const auto* parsers = [] {
    auto* v = new std::vector<ExampleParser>;
    auto make = [&](ExampleParserConfig config) {
      StatusOr<ExampleParser> parser = ExampleParser::Create(std::move(config));
      Require(parser.ok(), "a fuzzer spec was refused");
      v->push_back(std::move(*parser));
    };
    ExampleParserConfig a;
    a.dense.push_back({"f", DT_FLOAT, PartialShape({2}), FloatPair()});
    a.dense.push_back({"i", DT_INT64, PartialShape(std::vector<int64_t>{}), Tensor(DT_INT64, TensorShape({0}))});
    a.sparse.push_back({"s", DT_STRING});
    make(a);
    ExampleParserConfig b;
    b.dense.push_back({"f", DT_FLOAT, PartialShape({-1}), Scalar(DT_FLOAT)});
    b.sparse.push_back({"i", DT_INT64});
    b.ragged.push_back({"b", DT_STRING, DT_INT64});
    make(b);
    ExampleParserConfig c;
    c.dense.push_back({"f", DT_FLOAT, PartialShape({2}), Tensor(DT_FLOAT, TensorShape({0}))});
    c.dense.push_back({"b", DT_STRING, PartialShape(std::vector<int64_t>{}), Scalar(DT_STRING)});
    c.sparse.push_back({"f2", DT_FLOAT});
    make(c);
    return v;
  }();
  return *parsers;
}

// What protobuf finds for float feature "f" in `bytes`: false when the
// bytes are not an Example; `present` false when "f" is missing.
bool ProtobufFloats(const std::string& bytes, bool* present, std::vector<float>* values) {
  wire::Example example;
  if (!example.ParseFromString(bytes)) return false;
  const auto& features = example.features().feature();
  auto it = features.find("f");
  *present = it != features.end();
  if (*present && it->second.kind_case() == wire::Feature::kFloatList) {
    values->assign(it->second.float_list().value().begin(), it->second.float_list().value().end());
  }
  return true;
}

void CheckSparse(const Tensor& indices, const Tensor& values, const Tensor& shape) {
  Require(indices.dtype() == DT_INT64 && indices.dims() == 2, "sparse indices not int64 [N, rank]");
  Require(values.dims() == 1 && values.dim_size(0) == indices.dim_size(0),
          "sparse values do not match the indices");
  const int64_t rank = indices.dim_size(1);
  Require(shape.dims() == 1 && shape.dim_size(0) == rank, "sparse shape of the wrong rank");
  const int64_t* idx = indices.data<int64_t>();
  const int64_t* bound = shape.data<int64_t>();
  for (int64_t n = 0; n < indices.dim_size(0); ++n) {
    for (int64_t r = 0; r < rank; ++r) {
      Require(idx[n * rank + r] >= 0 && idx[n * rank + r] < bound[r],
              "a sparse index outside the dense shape");
    }
    if (n > 0) {
      bool less = false;
      for (int64_t r = 0; r < rank; ++r) {
        if (idx[(n - 1) * rank + r] != idx[n * rank + r]) {
          less = idx[(n - 1) * rank + r] < idx[n * rank + r];
          break;
        }
      }
      Require(less, "sparse indices not in row-major order");
    }
  }
}

}  // namespace
}  // namespace weir::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir;
  using namespace weir::fuzz;
  InitOnce();
  FuzzInput in(data, size);
  const uint8_t choice = in.Byte();
  const ExampleParser& parser = Parsers()[choice % Parsers().size()];
  bool batched = (choice / Parsers().size()) % 2 == 1;
  std::vector<std::string> serialized;
  while (!in.empty() && serialized.size() < 8) serialized.push_back(in.String(255));
  if (serialized.empty()) serialized.emplace_back();
  if (!batched) serialized.resize(1);

  ParsedExamples out;
  Status status = parser.Parse(serialized, {}, batched, DefaultCpuAllocator(), &out);
  if (!status.ok()) {
    Require(errors::IsInvalidArgument(status), "a parse failed with a code other than InvalidArgument");
    return 0;
  }
  const ExampleParserConfig& config = parser.config();
  const int64_t batch = static_cast<int64_t>(serialized.size());
  Require(out.dense_values.size() == config.dense.size(), "wrong number of dense outputs");
  for (size_t i = 0; i < config.dense.size(); ++i) {
    const Tensor& t = out.dense_values[i];
    const PartialShape& spec = config.dense[i].shape;
    const int offset = batched ? 1 : 0;
    Require(t.dims() == spec.rank() + offset, "a dense output of the wrong rank");
    if (batched) Require(t.dim_size(0) == batch, "a dense output of the wrong batch size");
    for (int d = 0; d < spec.rank(); ++d) {
      if (spec.dim(d) >= 0) {
        Require(t.dim_size(d + offset) == spec.dim(d), "a dense output of the wrong shape");
      }
    }
  }
  Require(out.sparse_indices.size() == config.sparse.size() &&
              out.sparse_values.size() == config.sparse.size() &&
              out.sparse_shapes.size() == config.sparse.size(),
          "wrong number of sparse outputs");
  for (size_t i = 0; i < config.sparse.size(); ++i) {
    CheckSparse(out.sparse_indices[i], out.sparse_values[i], out.sparse_shapes[i]);
  }
  // The first dense feature is float "f" in every spec.
  const Tensor& f = out.dense_values[0];
  const int64_t per_example = batched ? (f.dims() > 1 ? f.dim_size(1) : 1) : f.NumElements();
  for (int64_t e = 0; e < batch; ++e) {
    bool present = false;
    std::vector<float> values;
    if (!ProtobufFloats(serialized[e], &present, &values)) continue;  // our parser is laxer
    const float* got = f.data<float>() + e * per_example;
    if (!present) {
      if (config.dense[0].shape.dim(0) >= 0) {  // fixed length: the default
        const Tensor& dflt = config.dense[0].default_value;
        for (int64_t k = 0; k < per_example; ++k) {
          Require(got[k] == dflt.data<float>()[k], "a missing feature did not get its default");
        }
      }
      continue;
    }
    Require(static_cast<int64_t>(values.size()) <= per_example,
            "dense output shorter than protobuf's list");
    for (size_t k = 0; k < values.size(); ++k) {
      const bool same = got[k] == values[k] || (got[k] != got[k] && values[k] != values[k]);
      Require(same, "a dense float differs from protobuf's parse");
    }
  }
  return 0;
}
