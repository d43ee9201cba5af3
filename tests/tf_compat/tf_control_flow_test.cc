// Graphs with tf.compat.v1 while_loops and conds, exported by TensorFlow
// (export_control_flow.py, run by hand), import into Weir and give the
// outputs TensorFlow recorded for the same feeds. No TensorFlow at test time.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "weir/graph/graph_def_io.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

nlohmann::json ReadCases() {
  std::ifstream in(std::string(WEIR_TEST_DATA) + "/tf_control_flow_cases.json");
  EXPECT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

TensorShape ShapeOf(const nlohmann::json& encoded) {
  return TensorShape(encoded.at("shape").get<std::vector<int64_t>>());
}

Tensor Decode(const nlohmann::json& encoded) {
  const std::string dtype = encoded.at("dtype");
  const nlohmann::json& values = encoded.at("values");
  if (dtype == "float32") {
    return Tensor::FromVector(values.get<std::vector<float>>(), ShapeOf(encoded));
  }
  if (dtype == "int32") {
    return Tensor::FromVector(values.get<std::vector<int32_t>>(), ShapeOf(encoded));
  }
  EXPECT_EQ(dtype, "bool");
  Tensor t(DT_BOOL, ShapeOf(encoded));
  for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i].get<bool>();
  return t;
}

// Weir's value equals TensorFlow's: same dtype and shape, ints and bools
// exactly, floats to a few ulps (the same float32 ops in the same order).
void ExpectMatches(const Tensor& weir, const nlohmann::json& tf, const std::string& what) {
  Tensor expected = Decode(tf);
  ASSERT_EQ(weir.dtype(), expected.dtype()) << what;
  ASSERT_EQ(weir.shape(), expected.shape()) << what;
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    if (expected.dtype() == DT_FLOAT) {
      const float want = expected.data<float>()[i];
      EXPECT_NEAR(weir.data<float>()[i], want, 1e-6f * std::max(1.f, std::fabs(want)))
          << what << " [" << i << "]";
    } else if (expected.dtype() == DT_INT32) {
      EXPECT_EQ(weir.data<int32_t>()[i], expected.data<int32_t>()[i]) << what << " [" << i << "]";
    } else {
      EXPECT_EQ(weir.data<bool>()[i], expected.data<bool>()[i]) << what << " [" << i << "]";
    }
  }
}

// Runs every recorded case of `fixture` on `graph` in one session.
void ExpectTensorFlowsValues(const GraphDef& graph, const nlohmann::json& fixture) {
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  Status created = (*session)->Create(graph);
  ASSERT_TRUE(created.ok()) << created;
  const auto fetches = fixture.at("fetches").get<std::vector<std::string>>();
  ASSERT_FALSE(fixture.at("cases").empty());
  for (const nlohmann::json& one : fixture.at("cases")) {
    std::vector<std::pair<std::string, Tensor>> feeds;
    std::string described;
    for (const auto& [name, value] : one.at("feeds").items()) {
      feeds.emplace_back(name, Decode(value));
      described += StrCat(name, "=", value.at("values").dump(), " ");
    }
    std::vector<Tensor> outputs;
    Status ran = (*session)->Run(feeds, fetches, {}, &outputs);
    ASSERT_TRUE(ran.ok()) << described << ran;
    ASSERT_EQ(outputs.size(), fetches.size());
    for (size_t f = 0; f < fetches.size(); ++f) {
      ExpectMatches(outputs[f], one.at("outputs")[f], StrCat(fetches[f], " with ", described));
    }
  }
  // New trip counts reuse the compiled executors.
  EXPECT_EQ((*session)->num_cached_signatures(), 1);
}

const nlohmann::json& Fixture(const nlohmann::json& cases, const std::string& graph) {
  for (const nlohmann::json& fixture : cases.at("graphs")) {
    if (fixture.at("graph") == graph) return fixture;
  }
  ADD_FAILURE() << "no fixture " << graph;
  return cases;
}

TEST(TensorFlowControlFlowTest, ExportedLoopsAndCondsGiveTensorFlowsValues) {
  RegisterStandardOpsAndKernels();
  const nlohmann::json cases = ReadCases();
  ASSERT_GE(cases.at("graphs").size(), 2u);
  for (const nlohmann::json& fixture : cases.at("graphs")) {
    const std::string file = fixture.at("graph");
    SCOPED_TRACE(file);
    StatusOr<GraphDef> graph = ReadGraphDefFile(std::string(WEIR_TEST_DATA) + "/" + file);
    ASSERT_TRUE(graph.ok()) << graph.status();
    ExpectTensorFlowsValues(*graph, fixture);
  }
}

Status Returns(std::vector<Output>* out, std::vector<Output> values) {
  *out = std::move(values);
  return Status::OK();
}

// export_control_flow.py's while_cond_graph(), built with ops::WhileLoop and
// ops::Cond, gives the values TensorFlow recorded for its own graph.
TEST(TensorFlowControlFlowTest, TheSameProgramBuiltInWeirGivesTensorFlowsValues) {
  RegisterStandardOpsAndKernels();
  const PartialShape scalar(std::vector<int64_t>{});
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", scalar}});
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({3})}});
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL, {{"shape", scalar}});
  auto scale = ops::Const(root.WithOpName("scale"), {0.5f, -1.f, 2.f});
  ops::WhileLoopOptions options;
  options.name = "loop";
  std::vector<Output> loop;
  Status built = ops::WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, {0.f, 0.f, 0.f})},
      [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(s, v[0], n);
        return Status::OK();
      },
      [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
        auto even = ops::Equal(s, ops::FloorMod(s, v[0], 2), 0);
        std::vector<Output> term;
        WEIR_RETURN_IF_ERROR(ops::Cond(
            s, even,
            [&](const Scope& b, std::vector<Output>* o) {
              return Returns(o, {ops::AddV2(b, ops::Mul(b, v[1], scale), x)});
            },
            [&](const Scope& b, std::vector<Output>* o) {
              auto half_x = ops::Mul(b, x, 0.5f);
              return Returns(
                  o, {ops::AddV2(b, ops::Sub(b, v[1], half_x), ops::Cast(b, v[0], DT_FLOAT))});
            },
            &term));
        return Returns(next, {ops::AddV2(s, v[0], 1), term[0]});
      },
      &loop, options);
  ASSERT_TRUE(built.ok()) << built;
  std::vector<Output> y;
  built = ops::Cond(
      root, p,
      [&](const Scope& b, std::vector<Output>* o) {
        return Returns(o, {ops::Mul(b, loop[1], 2.f)});
      },
      [&](const Scope& b, std::vector<Output>* o) {
        return Returns(o, {ops::AddV2(b, loop[1], ops::Cast(b, loop[0], DT_FLOAT))});
      },
      &y);
  ASSERT_TRUE(built.ok()) << built;
  ops::Identity(root.WithOpName("trips"), loop[0]);
  ops::Identity(root.WithOpName("result"), y[0]);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(loop[1].name(), "loop/Exit_1");  // the name TensorFlow gives it too
  const nlohmann::json cases = ReadCases();
  ExpectTensorFlowsValues(root.ToGraphDef(), Fixture(cases, "tf_while_cond.pbtxt"));
}

}  // namespace
}  // namespace weir
