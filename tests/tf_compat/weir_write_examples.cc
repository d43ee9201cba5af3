// The Weir side of the Example interop check (export_examples.py --check):
// prints JSON with tf.train.Examples serialized by the C++ classes of
// proto/example.proto and the values they hold, and tensors serialized by
// Weir's SerializeTensor op, for TensorFlow to parse and compare.
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "proto/example.pb.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using Json = nlohmann::json;

std::string Base64(std::string_view bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v =
        (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// An Example and, per feature, the kind and values TensorFlow must read.
struct ExampleBuilder {
  wire::Example example;
  Json features = Json::object();

  wire::Feature& Add(const std::string& key) {
    return (*example.mutable_features()->mutable_feature())[key];
  }
  ExampleBuilder& Floats(const std::string& key, std::vector<float> values) {
    auto* list = Add(key).mutable_float_list();
    for (float v : values) list->add_value(v);
    features[key] = {{"kind", "float_list"}, {"values", values}};
    return *this;
  }
  ExampleBuilder& Ints(const std::string& key, std::vector<int64_t> values) {
    auto* list = Add(key).mutable_int64_list();
    for (int64_t v : values) list->add_value(v);
    features[key] = {{"kind", "int64_list"}, {"values", values}};
    return *this;
  }
  ExampleBuilder& Bytes(const std::string& key, std::vector<std::string> values) {
    auto* list = Add(key).mutable_bytes_list();
    Json encoded = Json::array();
    for (const std::string& v : values) {
      list->add_value(v);
      encoded.push_back(Base64(v));
    }
    features[key] = {{"kind", "bytes_list"}, {"values", encoded}};
    return *this;
  }
  Json ToJson(const std::string& name) const {
    return {{"name", name},
            {"serialized", Base64(example.SerializeAsString())},
            {"features", features}};
  }
};

int Main() {
  RegisterStandardOpsAndKernels();
  Json out;
  std::string image(784, '\0');
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<char>(i * 7);
  out["examples"] = {
      ExampleBuilder().Bytes("image", {image}).Ints("label", {9}).ToJson("fashion_mnist_like"),
      ExampleBuilder()
          .Floats("f", {0.5f, -1.25f, 3.4e38f, 1e-30f, -0.0f})
          .Ints("i", {0, -1, int64_t{1} << 40, std::numeric_limits<int64_t>::min()})
          .Bytes("b", {"", std::string("\0\xff", 2), "text"})
          .ToJson("every_kind"),
      ExampleBuilder()
          .Floats("empty_f", {})
          .Ints("empty_i", {})
          .Bytes("empty_b", {})
          .ToJson("empty_lists"),
      ExampleBuilder().ToJson("no_features"),
  };

  // Tensors through Weir's SerializeTensor.
  Scope root = Scope::NewRootScope();
  struct Named {
    std::string name;
    Tensor value;
  };
  std::vector<Named> tensors = {
      {"float_matrix", Tensor::FromVector<float>({1, -2.5f, 3, 4, 5, 6}, TensorShape({2, 3}))},
      {"strings", Tensor::FromVector<std::string>({"", std::string("\0\xff", 2), "abc"})},
      {"int64_scalar", Tensor::Scalar<int64_t>(-5)},
      {"empty_double", Tensor(DT_DOUBLE, TensorShape({0, 4}))},
      {"int32", Tensor::FromVector<int32_t>({-3, -2, -1, 0, 1, 2}, TensorShape({3, 2}))},
  };
  std::vector<Output> serialized;
  for (const Named& t : tensors)
    serialized.push_back(ops::SerializeTensor(root, ops::Const(root, t.value)));
  auto session = Session::New(SessionOptions());
  std::vector<Tensor> values;
  Status status = root.status();
  if (status.ok()) status = (*session)->Create(root.graph()->ToGraphDef());
  std::vector<std::string> fetches;
  for (const Output& o : serialized) fetches.push_back(o.name());
  if (status.ok()) status = (*session)->Run({}, fetches, {}, &values);
  if (!status.ok()) {
    std::cerr << "weir_write_examples: " << status << "\n";
    return 1;
  }
  out["tensors"] = Json::array();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i].value;
    Json flat = Json::array();
    for (int64_t j = 0; j < t.NumElements(); ++j) {
      switch (t.dtype()) {
        case DT_FLOAT: flat.push_back(t.data<float>()[j]); break;
        case DT_DOUBLE: flat.push_back(t.data<double>()[j]); break;
        case DT_INT32: flat.push_back(t.data<int32_t>()[j]); break;
        case DT_INT64: flat.push_back(t.data<int64_t>()[j]); break;
        default: flat.push_back(Base64(t.data<std::string>()[j])); break;
      }
    }
    out["tensors"].push_back({{"name", tensors[i].name},
                              {"dtype", static_cast<int>(t.dtype())},
                              {"shape", t.shape().dim_sizes()},
                              {"value", flat},
                              {"serialized", Base64(values[i].scalar<std::string>())}});
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace weir

int main() { return weir::Main(); }
