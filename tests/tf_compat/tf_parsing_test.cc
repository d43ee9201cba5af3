// The parsing ops give TensorFlow's results: every case TensorFlow recorded
// (export_examples.py, run by hand) -- ParseExampleV2 as tf.io.parse_example
// emits it on TensorFlow-serialized Examples, ParseSingleExample, DecodeRaw,
// DecodeCSV, StringToNumber, SerializeTensor and ParseTensor -- runs in a
// Weir session and must give the same outputs bit for bit, or fail where
// TensorFlow failed. No TensorFlow at test time.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

using Json = nlohmann::json;

std::string Base64Decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    const int v = value(c);
    if (v < 0) continue;  // '=' padding
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

Tensor Decode(const Json& encoded) {
  const DType dtype = static_cast<DType>(encoded.at("dtype").get<int>());
  EXPECT_TRUE(IsValidDType(dtype)) << encoded.at("dtype");
  Tensor t(dtype, TensorShape(encoded.at("shape").get<std::vector<int64_t>>()));
  if (dtype == DT_STRING) {
    const Json& strings = encoded.at("strings");
    EXPECT_EQ(static_cast<int64_t>(strings.size()), t.NumElements());
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      t.data<std::string>()[i] = Base64Decode(strings[i].get<std::string>());
    }
  } else {
    const std::string bytes = Base64Decode(encoded.at("data").get<std::string>());
    EXPECT_EQ(bytes.size(), t.TotalBytes());
    if (bytes.size() == t.TotalBytes()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  }
  return t;
}

AttrValue DecodeAttr(const Json& encoded) {
  const std::string kind = encoded.at("kind");
  const Json& value = encoded.at("value");
  if (kind == "int") return AttrValue(value.get<int64_t>());
  if (kind == "bool") return AttrValue(value.get<bool>());
  if (kind == "string") return AttrValue(Base64Decode(value.get<std::string>()));
  if (kind == "type") return AttrValue(static_cast<DType>(value.get<int>()));
  AttrValue::List list;
  if (kind == "list(type)") {
    for (const Json& t : value) list.type.push_back(static_cast<DType>(t.get<int>()));
  } else if (kind == "list(shape)") {
    for (const Json& s : value) {
      list.shape.push_back(s.is_null() ? PartialShape::UnknownRank()
                                       : PartialShape(s.get<std::vector<int64_t>>()));
    }
  } else if (kind == "list(string)") {
    for (const Json& s : value) list.s.push_back(Base64Decode(s.get<std::string>()));
  } else if (kind == "list(int)") {
    list.i = value.get<std::vector<int64_t>>();
  } else {
    EXPECT_EQ(kind, "list(empty)");
  }
  return AttrValue(std::move(list));
}

// Runs the case's op on its inputs (fed to placeholders) in a new session.
Status RunCase(const Json& one, std::vector<Tensor>* outputs) {
  GraphDef graph;
  NodeDef op;
  op.name = "op";
  op.op = one.at("op");
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < one.at("inputs").size(); ++i) {
    Tensor value = Decode(one.at("inputs")[i]);
    NodeDef placeholder;
    placeholder.name = StrCat("in", i);
    placeholder.op = "Placeholder";
    placeholder.attrs["dtype"] = value.dtype();
    graph.nodes.push_back(placeholder);
    op.inputs.push_back(placeholder.name);
    feeds.emplace_back(placeholder.name, std::move(value));
  }
  for (const auto& [name, value] : one.at("attrs").items()) op.attrs[name] = DecodeAttr(value);
  graph.nodes.push_back(op);
  std::vector<std::string> fetches;
  for (int i = 0; i < one.at("num_outputs").get<int>(); ++i) fetches.push_back(StrCat("op:", i));
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions()));
  WEIR_RETURN_IF_ERROR(session->Create(graph));
  return session->Run(feeds, fetches, {}, outputs);
}

TEST(TensorFlowParsingTest, EveryRecordedCaseGivesTensorFlowsResult) {
  RegisterStandardOpsAndKernels();
  std::ifstream in(std::string(WEIR_TEST_DATA) + "/tf_parsing_cases.json");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const Json fixture = Json::parse(text.str());
  const Json& cases = fixture.at("cases");
  ASSERT_GE(cases.size(), 100u);
  int errors = 0;
  for (const Json& one : cases) {
    const std::string name = one.at("name");
    SCOPED_TRACE(name);
    std::vector<Tensor> outputs;
    Status ran = RunCase(one, &outputs);
    if (one.contains("error")) {
      ++errors;
      EXPECT_EQ(ran.code(), Code::kInvalidArgument)
          << "TensorFlow: " << one.at("error").get<std::string>() << "\nWeir: " << ran;
      continue;
    }
    ASSERT_TRUE(ran.ok()) << ran;
    ASSERT_EQ(outputs.size(), one.at("outputs").size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor expected = Decode(one.at("outputs")[i]);
      EXPECT_TRUE(outputs[i].ContentEquals(expected))
          << "output " << i << ": Weir " << outputs[i].DebugString(20) << "\nTensorFlow "
          << expected.DebugString(20);
    }
  }
  EXPECT_GE(errors, 20);  // the bad inputs are recorded too
}

}  // namespace
}  // namespace weir
