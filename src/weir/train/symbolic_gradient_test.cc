// SymbolicGradient (the gradient of a library function, expanded when a
// step is compiled) against central finite differences of the function
// itself: one and several inputs and outputs, nested calls, a tensor given
// twice, int and unused inputs (zeros); gradient functions registered in
// the library (GradientDef) used by SymbolicGradient and by
// AddSymbolicGradients through calls, nested calls and If branches; errors
// naming the op, node and function.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "weir/graph/function_library.h"
#include "weir/graph/function_test_util.h"
#include "weir/graph/functional_test_util.h"
#include "weir/graph/graph_constructor.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"
#include "weir/train/function_gradient_builder.h"
#include "weir/train/gradients.h"

namespace weir {
namespace {

using test::Arg;
using test::BodyNode;

NodeDef Binary(const std::string& name, const std::string& op, std::vector<std::string> in) {
  return BodyNode(name, op, std::move(in), {{"T", DT_DOUBLE}});
}
NodeDef Unary(const std::string& name, const std::string& op, const std::string& in) {
  return BodyNode(name, op, {in}, {{"T", DT_DOUBLE}});
}

FunctionDef Function(const std::string& name, std::vector<ArgDef> inputs,
                     std::vector<ArgDef> outputs, std::vector<NodeDef> nodes,
                     std::map<std::string, std::string> ret) {
  FunctionDef f;
  f.signature.name = name;
  f.signature.inputs = std::move(inputs);
  f.signature.outputs = std::move(outputs);
  f.node_def = std::move(nodes);
  for (auto& [k, v] : ret) f.ret[k] = v;
  return f;
}

ArgDef D(const std::string& name) { return Arg(name, DT_DOUBLE); }

NodeDef SymbolicGradientNode(const std::string& name, const std::string& function,
                             std::vector<std::string> inputs, std::vector<DType> in,
                             std::vector<DType> out) {
  NodeDef def = test::CallNode(name, function, std::move(inputs), std::move(in), std::move(out));
  def.op = "SymbolicGradient";
  return def;
}

// f0(x) = sin(x) * x; fk(x) = SymbolicGradient(f{k-1})(x, x) * x: each
// level differentiates the gradient graph of the one below, which grows by
// a constant factor per level.
std::vector<FunctionDef> GradientTower(int depth) {
  std::vector<FunctionDef> fs;
  fs.push_back(Function("f0", {D("x")}, {D("y")},
                        {Unary("s", "Sin", "x"), Binary("m", "Mul", {"s:y:0", "x"})},
                        {{"y", "m:z:0"}}));
  for (int k = 1; k <= depth; ++k) {
    fs.push_back(Function(StrCat("f", k), {D("x")}, {D("y")},
                          {SymbolicGradientNode("g", StrCat("f", k - 1), {"x", "x"},
                                                {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE}),
                           Binary("m", "Mul", {"g:output:0", "x"})},
                          {{"y", "m:z:0"}}));
  }
  return fs;
}

std::vector<FunctionDef> Library() {
  std::vector<FunctionDef> fs = GradientTower(2);
  // cube(x) = x^3.
  fs.push_back(Function("cube", {D("x")}, {D("y")},
                        {Binary("sq", "Mul", {"x", "x"}), Binary("cu", "Mul", {"sq:z:0", "x"})},
                        {{"y", "cu:z:0"}}));
  fs.push_back(Function("sine", {D("x")}, {D("y")}, {Unary("s", "Sin", "x")}, {{"y", "s:y:0"}}));
  // pair(a, b) = (a * b, a + sin(b)).
  fs.push_back(Function("pair", {D("a"), D("b")}, {D("p"), D("q")},
                        {Binary("m", "Mul", {"a", "b"}), Unary("s", "Sin", "b"),
                         Binary("add", "AddV2", {"a", "s:y:0"})},
                        {{"p", "m:z:0"}, {"q", "add:z:0"}}));
  // nested(x) = cube(sine(x)) * x: a PartitionedCall and a call by name.
  fs.push_back(Function("nested", {D("x")}, {D("y")},
                        {test::CallNode("s", "sine", {"x"}, {DT_DOUBLE}, {DT_DOUBLE}),
                         BodyNode("c", "cube", {"s:output:0"}), Binary("m", "Mul", {"c:y:0", "x"})},
                        {{"y", "m:z:0"}}));
  // with_int(x, k: int32, unused) = x * float(k) + exp(x).
  fs.push_back(Function("with_int", {D("x"), Arg("k", DT_INT32), D("unused")}, {D("y")},
                        {BodyNode("kf", "Cast", {"k"}, {{"SrcT", DT_INT32}, {"DstT", DT_DOUBLE}}),
                         Binary("m", "Mul", {"x", "kf:y:0"}), Unary("e", "Exp", "x"),
                         Binary("add", "AddV2", {"m:z:0", "e:y:0"})},
                        {{"y", "add:z:0"}}));
  // identity2(x) = (x, 2 x): an output that is the argument itself.
  fs.push_back(Function("identity2", {D("x")}, {D("same"), D("twice")},
                        {Binary("t", "AddV2", {"x", "x"})}, {{"same", "x"}, {"twice", "t:z:0"}}));
  // blocked(x) = PreventGradient(x) * x.
  fs.push_back(Function("blocked", {D("x")}, {D("y")},
                        {BodyNode("stop", "PreventGradient", {"x"}, {{"T", DT_DOUBLE}}),
                         Binary("m", "Mul", {"stop:output:0", "x"})},
                        {{"y", "m:z:0"}}));
  // square_with_grad(x) = x^2, whose registered gradient is
  // square_grad(x, dy) = 7 * dy (not 2 x dy: the tests see which one ran).
  fs.push_back(Function("square_with_grad", {D("x")}, {D("y")}, {Binary("m", "Mul", {"x", "x"})},
                        {{"y", "m:z:0"}}));
  fs.push_back(Function(
      "square_grad", {D("x"), D("dy")}, {D("dx")},
      {BodyNode("seven", "Const", {}, {{"dtype", DT_DOUBLE}, {"value", Tensor::Scalar<double>(7)}}),
       Binary("m", "Mul", {"dy", "seven:output:0"})},
      {{"dx", "m:z:0"}}));
  // outer(x) = sin(square_with_grad(x)): the call with a registered
  // gradient inside another function.
  fs.push_back(Function("outer", {D("x")}, {D("y")},
                        {BodyNode("sq", "square_with_grad", {"x"}), Unary("s", "Sin", "sq:y:0")},
                        {{"y", "s:y:0"}}));
  return fs;
}

NodeDef Placeholder(const std::string& name, DType dtype = DT_DOUBLE) {
  return BodyNode(name, "Placeholder", {}, {{"dtype", dtype}});
}

using Feeds = std::vector<std::pair<std::string, Tensor>>;

StatusOr<std::vector<Tensor>> RunGraph(const GraphDef& def, const Feeds& feeds,
                                       const std::vector<std::string>& fetches) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions()));
  WEIR_RETURN_IF_ERROR(session->Create(def));
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run(feeds, fetches, {}, &out));
  return out;
}

class SymbolicGradientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterStandardOpsAndKernels();
    RegisterFunctionGradients();
  }

  static GraphDef Graph(std::vector<NodeDef> nodes, std::vector<GradientDef> gradients = {}) {
    GraphDef def;
    def.nodes = std::move(nodes);
    def.library.functions = Library();
    def.library.gradients = std::move(gradients);
    return def;
  }

  // SymbolicGradient of `function` (all inputs and outputs double vectors)
  // at `xs` with output seeds `dys`, against central differences of
  // L(x) = sum_j <dys[j], f_j(x)>, with f run through a call.
  static void ExpectMatchesDifferences(const std::string& function,
                                       const std::vector<std::vector<double>>& xs,
                                       const std::vector<std::vector<double>>& dys,
                                       std::vector<std::string> x_names = {}) {
    const size_t n = xs.size(), m = dys.size();
    if (x_names.empty()) {
      for (size_t i = 0; i < n; ++i) x_names.push_back(StrCat("x", i));
    }
    std::vector<NodeDef> nodes;
    std::vector<std::string> call_inputs, grad_inputs, fetches, call_fetches;
    std::vector<DType> x_types(n, DT_DOUBLE), y_types(m, DT_DOUBLE);
    for (size_t i = 0; i < n; ++i) {
      if (std::count(x_names.begin(), x_names.begin() + i, x_names[i]) == 0)
        nodes.push_back(Placeholder(x_names[i]));
      call_inputs.push_back(x_names[i]);
    }
    grad_inputs = call_inputs;
    for (size_t j = 0; j < m; ++j) {
      nodes.push_back(Placeholder(StrCat("dy", j)));
      grad_inputs.push_back(StrCat("dy", j));
      call_fetches.push_back(StrCat("call:", j));
    }
    std::vector<DType> grad_in = x_types;
    grad_in.insert(grad_in.end(), y_types.begin(), y_types.end());
    nodes.push_back(test::CallNode("call", function, call_inputs, x_types, y_types));
    nodes.push_back(SymbolicGradientNode("grad", function, grad_inputs, grad_in, x_types));
    for (size_t i = 0; i < n; ++i) fetches.push_back(StrCat("grad:", i));
    const GraphDef def = Graph(std::move(nodes));

    auto feeds_at = [&](const std::vector<std::vector<double>>& at) {
      Feeds feeds;
      for (size_t i = 0; i < n; ++i) {
        bool fed = false;
        for (const auto& f : feeds) fed |= f.first == x_names[i];
        if (!fed) feeds.emplace_back(x_names[i], Tensor::FromVector<double>(at[i]));
      }
      for (size_t j = 0; j < m; ++j)
        feeds.emplace_back(StrCat("dy", j), Tensor::FromVector<double>(dys[j]));
      return feeds;
    };
    StatusOr<std::vector<Tensor>> symbolic = RunGraph(def, feeds_at(xs), fetches);
    ASSERT_TRUE(symbolic.ok()) << symbolic.status();
    auto loss = [&](const std::vector<std::vector<double>>& at) {
      StatusOr<std::vector<Tensor>> ys = RunGraph(def, feeds_at(at), call_fetches);
      EXPECT_TRUE(ys.ok()) << ys.status();
      double sum = 0;
      for (size_t j = 0; ys.ok() && j < m; ++j) {
        auto y = (*ys)[j].flat<double>();
        for (size_t k = 0; k < y.size(); ++k) sum += dys[j][k] * y[k];
      }
      return sum;
    };
    const double h = 1e-6;
    for (size_t i = 0; i < n; ++i) {
      // A tensor given twice has one x; its gradients add.
      if (std::count(x_names.begin(), x_names.begin() + i, x_names[i]) > 0) continue;
      std::vector<double> expected_sum((*symbolic)[i].NumElements(), 0.0);
      for (size_t k = 0; k < xs[i].size(); ++k) {
        auto plus = xs, minus = xs;
        for (size_t i2 = 0; i2 < n; ++i2) {
          if (x_names[i2] != x_names[i]) continue;
          plus[i2][k] += h;
          minus[i2][k] -= h;
        }
        const double numeric = (loss(plus) - loss(minus)) / (2 * h);
        double got = 0;
        for (size_t i2 = 0; i2 < n; ++i2) {
          if (x_names[i2] == x_names[i]) got += (*symbolic)[i2].flat<double>()[k];
        }
        EXPECT_NEAR(got, numeric, 1e-6 * std::max(1.0, std::abs(numeric)))
            << function << " input " << i << " element " << k;
      }
    }
  }
};

TEST_F(SymbolicGradientTest, OneInputOneOutput) {
  ExpectMatchesDifferences("cube", {{0.5, -1.25, 2.0}}, {{1.0, 0.5, -2.0}});
}

TEST_F(SymbolicGradientTest, SeveralInputsAndOutputs) {
  ExpectMatchesDifferences("pair", {{0.3, -0.7}, {1.1, 2.5}}, {{0.5, -1.5}, {2.0, 0.25}});
}

TEST_F(SymbolicGradientTest, NestedCalls) {
  ExpectMatchesDifferences("nested", {{0.4, -0.9, 1.7}}, {{1.0, 2.0, -0.5}});
}

TEST_F(SymbolicGradientTest, GradientOfAGradientOfAGradient) {
  // f2 holds the gradient of f1, which holds the gradient of f0: the third
  // derivative of sin(x) x, through three nested expansions.
  ExpectMatchesDifferences("f2", {{0.3, -1.1}}, {{1.0, 0.5}});
}

TEST_F(SymbolicGradientTest, GradientsNestedTooDeepFailAtOnce) {
  // Each level multiplies the graph: before the count of SymbolicGradient
  // took that into account, 6 levels ran for seconds and 8 for most of a
  // minute before failing. Now the count refuses them before expanding.
  GraphDef def;
  def.nodes = {
      Placeholder("x"), Placeholder("dy"),
      SymbolicGradientNode("grad", "f12", {"x", "dy"}, {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE})};
  def.library.functions = GradientTower(12);
  StatusOr<std::vector<Tensor>> out = RunGraph(
      def, {{"x", Tensor::FromVector<double>({0.3})}, {"dy", Tensor::FromVector<double>({1.0})}},
      {"grad:0"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kResourceExhausted) << out.status();
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("would make it about"), std::string::npos) << message;
  EXPECT_NE(message.find("'grad'"), std::string::npos) << message;
  EXPECT_NE(message.find("'f12'"), std::string::npos) << message;
}

TEST_F(SymbolicGradientTest, OutputThatIsAnArgument) {
  ExpectMatchesDifferences("identity2", {{0.4, -0.9}}, {{1.5, 2.0}, {-0.5, 3.0}});
}

TEST_F(SymbolicGradientTest, OneTensorGivenTwice) {
  // pair(x, x): the gradient of each input is its own; they add up to d/dx.
  ExpectMatchesDifferences("pair", {{0.3, -0.7}, {0.3, -0.7}}, {{0.5, -1.5}, {2.0, 0.25}},
                           {"x", "x"});
}

TEST_F(SymbolicGradientTest, IntAndUnusedInputsGetZeros) {
  GraphDef def =
      Graph({Placeholder("x"), Placeholder("k", DT_INT32), Placeholder("u"), Placeholder("dy"),
             SymbolicGradientNode("grad", "with_int", {"x", "k", "u", "dy"},
                                  {DT_DOUBLE, DT_INT32, DT_DOUBLE, DT_DOUBLE},
                                  {DT_DOUBLE, DT_INT32, DT_DOUBLE})});
  StatusOr<std::vector<Tensor>> out = RunGraph(def,
                                               {{"x", Tensor::FromVector<double>({0.5, -1.0})},
                                                {"k", Tensor::FromVector<int32_t>({3, -2})},
                                                {"u", Tensor::FromVector<double>({9.0, 9.0})},
                                                {"dy", Tensor::FromVector<double>({2.0, 0.5})}},
                                               {"grad:0", "grad:1", "grad:2"});
  ASSERT_TRUE(out.ok()) << out.status();
  // d/dx (x k + e^x) = k + e^x, times dy.
  EXPECT_NEAR((*out)[0].flat<double>()[0], 2.0 * (3 + std::exp(0.5)), 1e-12);
  EXPECT_NEAR((*out)[0].flat<double>()[1], 0.5 * (-2 + std::exp(-1.0)), 1e-12);
  ASSERT_EQ((*out)[1].dtype(), DT_INT32);
  EXPECT_EQ((*out)[1].flat<int32_t>()[0], 0);
  EXPECT_EQ((*out)[1].flat<int32_t>()[1], 0);
  ASSERT_EQ((*out)[2].NumElements(), 2);
  EXPECT_EQ((*out)[2].flat<double>()[0], 0.0);
  EXPECT_EQ((*out)[2].flat<double>()[1], 0.0);
}

TEST_F(SymbolicGradientTest, SecondOrderThroughAGradientOfAGradient) {
  // d/dx [SymbolicGradient(cube)(x, 1)] = d/dx 3x^2 = 6x, by
  // AddSymbolicGradients through the SymbolicGradient node.
  Scope root = Scope::NewRootScope();
  ASSERT_TRUE(ImportGraphDef(Graph({Placeholder("x"), Placeholder("dy"),
                                    SymbolicGradientNode("grad", "cube", {"x", "dy"},
                                                         {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE})}),
                             root.graph())
                  .ok());
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {Output(root.graph()->FindNode("grad"), 0)},
                                  {Output(root.graph()->FindNode("x"), 0)}, &grads);
  ASSERT_TRUE(s.ok()) << s;
  StatusOr<std::vector<Tensor>> out = RunGraph(root.ToGraphDef(),
                                               {{"x", Tensor::FromVector<double>({0.5, -2.0})},
                                                {"dy", Tensor::FromVector<double>({1.0, 1.0})}},
                                               {grads[0].name()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].flat<double>()[0], 3.0, 1e-12);
  EXPECT_NEAR((*out)[0].flat<double>()[1], -12.0, 1e-12);
}

GradientDef SquareGradient() {
  GradientDef g;
  g.function_name = "square_with_grad";
  g.gradient_func = "square_grad";
  return g;
}

TEST_F(SymbolicGradientTest, RegisteredGradientFunctionIsUsed) {
  GraphDef def = Graph({Placeholder("x"), Placeholder("dy"),
                        SymbolicGradientNode("grad", "square_with_grad", {"x", "dy"},
                                             {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE})},
                       {SquareGradient()});
  StatusOr<std::vector<Tensor>> out = RunGraph(
      def, {{"x", Tensor::FromVector<double>({3.0})}, {"dy", Tensor::FromVector<double>({2.0})}},
      {"grad:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<double>()[0], 14.0);  // 7 dy, not 2 x dy = 12
}

// AddSymbolicGradients of `y` (a node of `nodes`) with respect to x, run at
// x = `at`.
double GradientAt(std::vector<NodeDef> nodes, const std::string& y, double at) {
  GraphDef def;
  def.nodes = std::move(nodes);
  def.library.functions = Library();
  def.library.gradients = {SquareGradient()};
  Scope root = Scope::NewRootScope();
  Status s = ImportGraphDef(def, root.graph());
  EXPECT_TRUE(s.ok()) << s;
  std::vector<Output> grads;
  s = AddSymbolicGradients(root, {Output(root.graph()->FindNode(y), 0)},
                           {Output(root.graph()->FindNode("x"), 0)}, &grads);
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return NAN;
  StatusOr<std::vector<Tensor>> out =
      RunGraph(root.ToGraphDef(), {{"x", Tensor::Scalar<double>(at)}}, {grads[0].name()});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].flat<double>()[0] : NAN;
}

TEST_F(SymbolicGradientTest, AddSymbolicGradientsUsesRegisteredGradientOfACall) {
  // y = square_with_grad(x) * x: dy/dx = 7 * x + x^2 with the registered
  // gradient (3 x^2 through the body).
  const double x = 1.5;
  EXPECT_NEAR(
      GradientAt({Placeholder("x"),
                  test::CallNode("call", "square_with_grad", {"x"}, {DT_DOUBLE}, {DT_DOUBLE}),
                  Binary("y", "Mul", {"call", "x"})},
                 "y", x),
      7 * x + x * x, 1e-12);
  // Called by name.
  EXPECT_NEAR(GradientAt({Placeholder("x"), BodyNode("y", "square_with_grad", {"x"})}, "y", x), 7.0,
              1e-12);
  // Inside another function on the path: outer(x) = sin(square(x)) gives
  // cos(x^2) * 7.
  EXPECT_NEAR(GradientAt({Placeholder("x"), BodyNode("y", "outer", {"x"})}, "y", x),
              std::cos(x * x) * 7, 1e-12);
  // Inside an If's branch (x > 0 calls outer, else sine).
  EXPECT_NEAR(GradientAt({Placeholder("x"),
                          BodyNode("zero", "Const", {},
                                   {{"dtype", DT_DOUBLE}, {"value", Tensor::Scalar<double>(0)}}),
                          Binary("pos", "Greater", {"x", "zero"}),
                          test::IfNode("y", "If", {"pos", "x"}, DT_BOOL, {DT_DOUBLE}, {DT_DOUBLE},
                                       "outer", "sine")},
                         "y", x),
              std::cos(x * x) * 7, 1e-12);
}

TEST_F(SymbolicGradientTest, NonDifferentiableOpInTheBodyNamesOpNodeAndFunction) {
  GraphDef def = Graph(
      {Placeholder("x"), Placeholder("dy"),
       SymbolicGradientNode("grad", "blocked", {"x", "dy"}, {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE})});
  StatusOr<std::vector<Tensor>> out = RunGraph(
      def, {{"x", Tensor::FromVector<double>({3.0})}, {"dy", Tensor::FromVector<double>({2.0})}},
      {"grad:0"});
  ASSERT_FALSE(out.ok());
  const std::string message = out.status().ToString();
  EXPECT_NE(message.find("PreventGradient"), std::string::npos) << message;
  EXPECT_NE(message.find("stop"), std::string::npos) << message;
  EXPECT_NE(message.find("'blocked'"), std::string::npos) << message;
  EXPECT_NE(message.find("grad"), std::string::npos) << message;
}

TEST_F(SymbolicGradientTest, GradientThatNeedsItselfIsAnError) {
  // selfish(x) = SymbolicGradient(selfish)(x, x): its gradient needs its own.
  GraphDef def = Graph(
      {Placeholder("x"), Placeholder("dy"),
       SymbolicGradientNode("grad", "selfish", {"x", "dy"}, {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE})});
  def.library.functions.push_back(Function(
      "selfish", {D("x")}, {D("y")},
      {SymbolicGradientNode("g", "selfish", {"x", "x"}, {DT_DOUBLE, DT_DOUBLE}, {DT_DOUBLE}),
       Binary("m", "Mul", {"g:output:0", "x"})},
      {{"y", "m:z:0"}}));
  StatusOr<std::vector<Tensor>> out = RunGraph(
      def, {{"x", Tensor::FromVector<double>({3.0})}, {"dy", Tensor::FromVector<double>({2.0})}},
      {"grad:0"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("selfish"), std::string::npos) << out.status();
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status();
}

TEST_F(SymbolicGradientTest, ManyLargeCallsOnAGradientPathFailAtOnce) {
  // d0 expands to 2^15 calls of sine (about 2^17 nodes): one call is well
  // within the budget, 16 chained on the path are not. AddSymbolicGradients
  // expands each call on its own; it must count them all first, as the
  // compiler counts a graph, instead of building them one after another.
  GraphDef def;
  def.library.functions = Library();
  for (int k = 0; k < 15; ++k) {
    const std::string callee = k == 14 ? "sine" : StrCat("d", k + 1);
    def.library.functions.push_back(
        Function(StrCat("d", k), {D("x")}, {D("y")},
                 {BodyNode("first", callee, {"x"}), BodyNode("second", callee, {"first:y:0"})},
                 {{"y", "second:y:0"}}));
  }
  def.nodes = {Placeholder("x")};
  std::string last = "x";
  for (int i = 0; i < 16; ++i) {
    def.nodes.push_back(BodyNode(StrCat("call_", i), "d0", {last}));
    last = StrCat("call_", i);
  }
  Scope root = Scope::NewRootScope();
  ASSERT_TRUE(ImportGraphDef(def, root.graph()).ok());
  const int before = root.graph()->num_nodes();
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {Output(root.graph()->FindNode(last), 0)},
                                  {Output(root.graph()->FindNode("x"), 0)}, &grads);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("'d0'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("kMaxExpandedNodes"), std::string::npos) << s;
  EXPECT_EQ(root.graph()->num_nodes(), before) << "nothing is expanded";
}

TEST_F(SymbolicGradientTest, InsideAWhileLoop) {
  // acc <- SymbolicGradient(cube)(acc, x) = 3 acc^2 x, twice, in a v1 loop:
  // the gradient graph is built in the loop's frame.
  Scope root = Scope::NewRootScope();
  FunctionDefLibrary library;
  library.functions = Library();
  ASSERT_TRUE(root.graph()->mutable_function_library()->AddLibrary(library).ok());
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  NameAttrList cube;
  cube.name = "cube";
  std::vector<Output> out;
  Status s = ops::WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0.5)},
      [&](const Scope& sc, const std::vector<Output>& v, Output* pred) {
        *pred = ops::Less(sc, v[0], 2);
        return Status::OK();
      },
      [&](const Scope& sc, const std::vector<Output>& v, std::vector<Output>* next) {
        Operation grad = AddOp(sc, "SymbolicGradient", {InputList{v[1], x}},
                               {{"f", AttrValue(cube)}, {"Tout", std::vector<DType>{DT_DOUBLE}}});
        *next = {ops::Add(sc, v[0], 1), grad.output(0)};
        return Status::OK();
      },
      &out);
  ASSERT_TRUE(s.ok()) << s;
  StatusOr<std::vector<Tensor>> got =
      RunGraph(root.ToGraphDef(), {{"x", Tensor::Scalar<double>(0.2)}}, {out[1].name()});
  ASSERT_TRUE(got.ok()) << got.status();
  const double acc1 = 3 * 0.5 * 0.5 * 0.2;
  EXPECT_NEAR((*got)[0].flat<double>()[0], 3 * acc1 * acc1 * 0.2, 1e-15);
}

}  // namespace
}  // namespace weir
