// Cond and WhileLoop build TensorFlow control flow v1's node structure (the
// names and inputs below are those of tf.compat.v1's cond and while_loop
// with control flow v2 disabled), capture outside tensors once, and report
// mismatched branches and loop-variable shapes with both sides named.
#include "weir/ops/control_flow_builder.h"

#include <gtest/gtest.h>

#include <map>

#include "weir/graph/graph_constructor.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

// `text` contains `needle`; shows `text` otherwise.
#define EXPECT_HAS(text, needle) \
  EXPECT_NE(std::string(text).find(needle), std::string::npos) << (text)

const PartialShape kScalar(std::vector<int64_t>{});

class ControlFlowBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }

  // The graph as NodeDefs by name, with inputs as GraphDef spells them.
  static std::map<std::string, NodeDef> Defs(const Scope& scope) {
    std::map<std::string, NodeDef> defs;
    for (NodeDef& def : scope.ToGraphDef().nodes) defs[def.name] = def;
    return defs;
  }
  static int Count(const std::map<std::string, NodeDef>& defs, const std::string& op) {
    int n = 0;
    for (const auto& [name, def] : defs) n += def.op == op;
    return n;
  }
  // The built graph must also pass import's checks (cycles only through
  // NextIteration, dtypes, shape functions).
  static void ExpectImports(const Scope& scope) {
    Graph graph;
    Status imported = ImportGraphDef(scope.ToGraphDef(), &graph);
    EXPECT_TRUE(imported.ok()) << imported;
  }
};

using Inputs = std::vector<std::string>;

Status Returns(std::vector<Output>* out, std::vector<Output> values) {
  *out = std::move(values);
  return Status::OK();
}

TEST_F(ControlFlowBuilderTest, CondHasTensorFlowsStructure) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL, {{"shape", kScalar}});
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({2})}});
  std::vector<Output> y;
  ASSERT_TRUE(ops::Cond(
                  root, p,
                  [&](const Scope& s, std::vector<Output>* out) {
                    return Returns(out, {ops::Mul(s.WithOpName("mul"), x, 2.f)});
                  },
                  [&](const Scope& s, std::vector<Output>* out) {
                    return Returns(out, {ops::Const(s, {7.f, 8.f})});
                  },
                  &y)
                  .ok())
      << root.status();
  ASSERT_EQ(y.size(), 1u);
  auto defs = Defs(root);
  EXPECT_EQ(defs["cond/Switch"].op, "Switch");
  EXPECT_EQ(defs["cond/Switch"].inputs, Inputs({"p", "p"}));
  EXPECT_EQ(defs["cond/switch_t"].inputs, Inputs({"cond/Switch:1"}));
  EXPECT_EQ(defs["cond/switch_f"].inputs, Inputs({"cond/Switch"}));
  EXPECT_EQ(defs["cond/pred_id"].inputs, Inputs({"p"}));
  // x reaches the then branch through Switch(x, pred_id):1; the literal 2
  // and the else branch's Const wait on their pivots.
  const NodeDef& mul = defs["cond/mul"];
  ASSERT_EQ(mul.inputs.size(), 2u);
  EXPECT_EQ(mul.inputs[0], "cond/Switch_1:1");
  EXPECT_EQ(defs["cond/Switch_1"].inputs, Inputs({"x", "cond/pred_id"}));
  EXPECT_EQ(defs[mul.inputs[1]].inputs, Inputs({"^cond/switch_t"}));
  EXPECT_EQ(defs["cond/Const_1"].inputs, Inputs({"^cond/switch_f"}));
  EXPECT_EQ(y[0].name(), "cond/Merge");
  EXPECT_EQ(defs["cond/Merge"].inputs, Inputs({"cond/Const_1", "cond/mul"}));  // (else, then)
  EXPECT_EQ(y[0].shape(), PartialShape({2}));
  ExpectImports(root);
}

TEST_F(ControlFlowBuilderTest, CondSwitchesATensorUsedInBothBranchesOnce) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL);
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  std::vector<Output> y;
  ASSERT_TRUE(ops::Cond(
                  root, p,
                  [&](const Scope& s, std::vector<Output>* out) {
                    return Returns(out, {ops::Square(s, x), x});  // x itself is switched too
                  },
                  [&](const Scope& s, std::vector<Output>* out) {
                    return Returns(out, {ops::Neg(s, x), ops::Neg(s, x)});
                  },
                  &y)
                  .ok())
      << root.status();
  auto defs = Defs(root);
  EXPECT_EQ(Count(defs, "Switch"), 2);  // the predicate's and x's
  EXPECT_EQ(defs["cond/Square"].inputs, Inputs({"cond/Switch_1:1"}));
  EXPECT_EQ(defs["cond/Neg"].inputs, Inputs({"cond/Switch_1"}));
  EXPECT_EQ(defs["cond/Merge_1"].inputs, Inputs({"cond/Neg_1", "cond/Switch_1:1"}));
  ExpectImports(root);
}

TEST_F(ControlFlowBuilderTest, CondBranchesMustAgree) {
  Scope root = Scope::NewRootScope();
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL);
  auto f = ops::Placeholder(root.WithOpName("f"), DT_FLOAT);
  auto i = ops::Placeholder(root.WithOpName("i"), DT_INT32);
  std::vector<Output> y;
  auto just = [](Output v) {
    return [v](const Scope&, std::vector<Output>* out) { return Returns(out, {v}); };
  };
  Status types = ops::Cond(root, p, just(f), just(i), &y);
  EXPECT_HAS(types.message(), "Cond 'cond'");
  EXPECT_HAS(types.message(), "'f' (float");
  EXPECT_HAS(types.message(), "'i' (int32");
  EXPECT_FALSE(root.ok());  // kept in the scope too

  Scope other = Scope::NewRootScope();
  auto q = ops::Placeholder(other.WithOpName("q"), DT_BOOL);
  auto g = ops::Placeholder(other.WithOpName("g"), DT_FLOAT);
  Status counts = ops::Cond(
      other, q,
      [&](const Scope&, std::vector<Output>* out) {
        return Returns(out, {g, g});
      },
      just(g), &y);
  EXPECT_HAS(counts.message(), "returns 2 values but the else branch 1");
}

TEST_F(ControlFlowBuilderTest, CondErrorsNameThePredicateTheBranchAndTheOtherBranchsTensor) {
  {
    Scope root = Scope::NewRootScope();
    auto f = ops::Placeholder(root.WithOpName("f"), DT_FLOAT);
    std::vector<Output> y;
    Status s = ops::Cond(
        root, f, [&](const Scope&, std::vector<Output>* out) { return Returns(out, {f}); },
        [&](const Scope&, std::vector<Output>* out) { return Returns(out, {f}); }, &y);
    EXPECT_HAS(s.message(), "pred must be a bool scalar but is 'f' (float");
  }
  {
    Scope root = Scope::NewRootScope();
    auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL);
    std::vector<Output> y;
    Status s = ops::Cond(
        root, p,
        [&](const Scope&, std::vector<Output>*) { return errors::NotFound("no such thing"); },
        [&](const Scope&, std::vector<Output>* out) { return Returns(out, {p}); }, &y);
    EXPECT_EQ(s.code(), Code::kNotFound);
    EXPECT_HAS(s.message(), "Cond 'cond', then branch: no such thing");
  }
  {
    Scope root = Scope::NewRootScope();
    auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL);
    auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    Output from_then;
    std::vector<Output> y;
    Status s = ops::Cond(
        root, p,
        [&](const Scope& b, std::vector<Output>* out) {
          from_then = ops::Square(b, x);
          return Returns(out, {from_then});
        },
        [&](const Scope& b, std::vector<Output>* out) {
          return Returns(out, {ops::Neg(b.WithOpName("neg"), from_then)});
        },
        &y);
    EXPECT_HAS(s.message(), "'cond/neg' in the else branch uses 'cond/Square'");
  }
}

TEST_F(ControlFlowBuilderTest, WhileLoopHasTensorFlowsStructure) {
  // tf.compat.v1.while_loop(lambda i, s: i < n, lambda i, s: [i + 1, s + c],
  //                         [0, 0.0], maximum_iterations=5)
  Scope root = Scope::NewRootScope();
  auto n = ops::Placeholder(root.WithOpName("n"), DT_INT32, {{"shape", kScalar}});
  auto c = ops::Const(root.WithOpName("c"), 3.f);
  auto i0 = ops::Const(root.WithOpName("i0"), 0);
  auto s0 = ops::Const(root.WithOpName("s0"), 0.f);
  ops::WhileLoopOptions options;
  options.maximum_iterations = ops::Const(root.WithOpName("max"), 5);
  options.parallel_iterations = 7;
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {i0, s0},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s.WithOpName("less"), v[0], n);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next, {ops::AddV2(s.WithOpName("inc"), v[0], 1),
                                          ops::AddV2(s.WithOpName("acc"), v[1], c)});
                  },
                  &out, options)
                  .ok())
      << root.status();
  ASSERT_EQ(out.size(), 2u);
  auto defs = Defs(root);
  // Three variables: the iteration counter, then i and s.
  EXPECT_EQ(Count(defs, "Merge"), 3);
  EXPECT_EQ(Count(defs, "Switch"), 3);
  EXPECT_EQ(Count(defs, "NextIteration"), 3);
  EXPECT_EQ(Count(defs, "Exit"), 3);
  EXPECT_EQ(Count(defs, "LoopCond"), 1);
  EXPECT_EQ(defs["while/Enter"].inputs, Inputs({"while/iteration_counter"}));
  EXPECT_EQ(defs["while/Enter_1"].inputs, Inputs({"i0"}));
  const AttrMap& enter = defs["while/Enter_1"].attrs;
  EXPECT_EQ(enter.at("frame_name").s(), "while");
  EXPECT_FALSE(enter.at("is_constant").b());
  EXPECT_EQ(enter.at("parallel_iterations").i(), 7);
  EXPECT_EQ(defs["while/Merge_1"].inputs, Inputs({"while/Enter_1", "while/NextIteration_1"}));
  EXPECT_EQ(defs["while/NextIteration_1"].inputs, Inputs({"while/inc"}));
  // The condition: i < n with n captured, and-ed with counter < max.
  const NodeDef& less = defs["while/less"];
  ASSERT_EQ(less.inputs.size(), 2u);
  EXPECT_EQ(less.inputs[0], "while/Merge_1");
  const NodeDef& n_enter = defs[less.inputs[1]];
  EXPECT_EQ(n_enter.op, "Enter");
  EXPECT_EQ(n_enter.inputs, Inputs({"n"}));
  EXPECT_TRUE(n_enter.attrs.at("is_constant").b());
  const NodeDef& loop_cond = defs["while/LoopCond"];
  const NodeDef& both = defs[loop_cond.inputs.at(0)];
  EXPECT_EQ(both.op, "LogicalAnd");
  ASSERT_EQ(both.inputs.size(), 2u);
  EXPECT_EQ(both.inputs[1], "while/less");
  const NodeDef& bound = defs[both.inputs[0]];
  EXPECT_EQ(bound.op, "Less");
  EXPECT_EQ(bound.inputs[0], "while/Merge");
  EXPECT_EQ(defs[bound.inputs[1]].inputs, Inputs({"max"}));
  // Switch(merge, LoopCond); the body reads Identity(Switch:1); Exit(Switch:0).
  EXPECT_EQ(defs["while/Switch_1"].inputs, Inputs({"while/Merge_1", "while/LoopCond"}));
  EXPECT_EQ(defs["while/Identity_1"].inputs, Inputs({"while/Switch_1:1"}));
  EXPECT_EQ(defs["while/Exit_1"].inputs, Inputs({"while/Switch_1"}));
  EXPECT_EQ(out[0].name(), "while/Exit_1");
  EXPECT_EQ(out[1].name(), "while/Exit_2");
  // The literal 1 lives in the frame: it waits on the body's pivot, the
  // counter's Identity; c comes in through a constant Enter.
  const NodeDef& inc = defs["while/inc"];
  EXPECT_EQ(inc.inputs[0], "while/Identity_1");
  EXPECT_EQ(defs[inc.inputs[1]].inputs, Inputs({"^while/Identity"}));
  const NodeDef& acc = defs["while/acc"];
  EXPECT_EQ(defs[acc.inputs[1]].inputs, Inputs({"c"}));
  EXPECT_TRUE(defs[acc.inputs[1]].attrs.at("is_constant").b());
  // The counter's increment.
  EXPECT_EQ(defs["while/add"].inputs, Inputs({"while/Identity", "while/add/y"}));
  EXPECT_EQ(defs["while/add/y"].inputs, Inputs({"^while/Identity"}));
  ExpectImports(root);
}

TEST_F(ControlFlowBuilderTest, WhileLoopCapturesEachOutsideTensorOnce) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", kScalar}});
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0.f)},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], x);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next, {ops::AddV2(s, ops::AddV2(s, v[0], x), ops::Neg(s, x))});
                  },
                  &out)
                  .ok())
      << root.status();
  auto defs = Defs(root);
  int x_enters = 0;
  for (const auto& [name, def] : defs) {
    x_enters += def.op == "Enter" && def.inputs == Inputs({"x"});
  }
  EXPECT_EQ(x_enters, 1);
  // Neg(x) reads only a loop invariant, so it waits on the pivot to run
  // once per iteration, not once per frame.
  const NodeDef& neg = defs["while/Neg"];
  ASSERT_EQ(neg.inputs.size(), 2u);
  EXPECT_EQ(neg.inputs[1], "^while/Identity");
  ExpectImports(root);
}

TEST_F(ControlFlowBuilderTest, NestedLoopsEnterOutsideTensorsThroughEachFrame) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", kScalar}});
  auto limit = [](const Scope& s, const std::vector<Output>& v, Output* pred) {
    *pred = ops::Less(s, v[0], 3);
    return Status::OK();
  };
  std::vector<Output> out;
  ops::WhileLoopOptions inner_options;
  inner_options.name = "inner";
  ASSERT_TRUE(ops::WhileLoop(
                  root.NewSubScope("outer"), {ops::Const(root, 0), ops::Const(root, 0.f)}, limit,
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    std::vector<Output> inner;
                    WEIR_RETURN_IF_ERROR(ops::WhileLoop(
                        s, {ops::Const(s, 0), v[1]}, limit,
                        [&](const Scope& t, const std::vector<Output>& w, std::vector<Output>* n) {
                          return Returns(n, {ops::AddV2(t, w[0], 1),
                                             ops::AddV2(t.WithOpName("use_x"), w[1], x)});
                        },
                        &inner, inner_options));
                    return Returns(next, {ops::AddV2(s, v[0], 1), inner[1]});
                  },
                  &out)
                  .ok())
      << root.status();
  auto defs = Defs(root);
  const NodeDef& use_x = defs["outer/while/inner/use_x"];
  const NodeDef& inner_enter = defs[use_x.inputs.at(1)];
  EXPECT_EQ(inner_enter.op, "Enter");
  EXPECT_EQ(inner_enter.attrs.at("frame_name").s(), "outer/while/inner");
  ASSERT_EQ(inner_enter.inputs.size(), 2u);
  // The inner Enter reads only an outer invariant: it waits on the outer pivot.
  EXPECT_EQ(inner_enter.inputs[1], "^outer/while/Identity");
  const NodeDef& outer_enter = defs[inner_enter.inputs[0]];
  EXPECT_EQ(outer_enter.op, "Enter");
  EXPECT_EQ(outer_enter.attrs.at("frame_name").s(), "outer/while");
  EXPECT_EQ(outer_enter.inputs, Inputs({"x"}));
  ExpectImports(root);
}

TEST_F(ControlFlowBuilderTest, CondInsideLoopAndLoopInsideCond) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", kScalar}});
  auto p = ops::Placeholder(root.WithOpName("p"), DT_BOOL, {{"shape", kScalar}});
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  root, {ops::Const(root, 0.f)},
                  [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], 10.f);
                    return Status::OK();
                  },
                  [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return ops::Cond(
                        s, p,
                        [&](const Scope& b, std::vector<Output>* o) {
                          return Returns(o, {ops::AddV2(b.WithOpName("plus_x"), v[0], x)});
                        },
                        [&](const Scope& b, std::vector<Output>* o) {
                          return Returns(o, {ops::AddV2(b, v[0], 1.f)});
                        },
                        next);
                  },
                  &out)
                  .ok())
      << root.status();
  auto defs = Defs(root);
  // p enters the loop, then feeds the Cond's Switch; x enters, then is switched.
  const NodeDef& pred_switch = defs["while/cond/Switch"];
  EXPECT_EQ(defs[pred_switch.inputs[0]].op, "Enter");
  const NodeDef& plus_x = defs["while/cond/plus_x"];
  const NodeDef& x_switch = defs[plus_x.inputs[1].substr(0, plus_x.inputs[1].find(':'))];
  EXPECT_EQ(x_switch.op, "Switch");
  EXPECT_EQ(defs[x_switch.inputs[0]].inputs, Inputs({"x"}));
  ExpectImports(root);

  Scope other = Scope::NewRootScope();
  auto q = ops::Placeholder(other.WithOpName("q"), DT_BOOL, {{"shape", kScalar}});
  auto y = ops::Placeholder(other.WithOpName("y"), DT_FLOAT, {{"shape", kScalar}});
  std::vector<Output> z;
  ASSERT_TRUE(
      ops::Cond(
          other, q,
          [&](const Scope& b, std::vector<Output>* o) {
            return ops::WhileLoop(
                b, {y},
                [&](const Scope& s, const std::vector<Output>& v, Output* pred) {
                  *pred = ops::Less(s, v[0], 10.f);
                  return Status::OK();
                },
                [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                  return Returns(next, {ops::AddV2(s, v[0], 1.f)});
                },
                o);
          },
          [&](const Scope&, std::vector<Output>* o) { return Returns(o, {y}); }, &z)
          .ok())
      << other.status();
  defs = Defs(other);
  // The loop's variable enters from the then side of y's Switch.
  EXPECT_EQ(defs["cond/while/Enter"].inputs, Inputs({"cond/Switch_1:1"}));
  EXPECT_EQ(defs["cond/Switch_1"].inputs, Inputs({"y", "cond/pred_id"}));
  ExpectImports(other);
}

TEST_F(ControlFlowBuilderTest, LoopVariableShapesMustMeetTheirInvariants) {
  auto grow = [](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
    return Returns(next, {ops::ConcatV2(s, {v[0], v[0]}, 0)});
  };
  auto small = [](const Scope& s, const std::vector<Output>& v, Output* pred) {
    *pred = ops::Less(s, ops::Sum(s, v[0], 0), 100.f);
    return Status::OK();
  };
  {
    Scope root = Scope::NewRootScope();
    auto x = ops::Const(root.WithOpName("x"), {1.f, 2.f});
    std::vector<Output> out;
    Status s = ops::WhileLoop(root, {x}, small, grow, &out);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_HAS(s.message(), "WhileLoop 'while': loop variable 0 'x' (float [2])");
    EXPECT_HAS(s.message(), "enters the loop with shape [2] but has shape [4]");
    EXPECT_HAS(s.message(), "shape_invariants");
  }
  {
    Scope root = Scope::NewRootScope();
    auto x = ops::Const(root.WithOpName("x"), {1.f, 2.f});
    ops::WhileLoopOptions options;
    options.shape_invariants = {PartialShape({-1})};
    std::vector<Output> out;
    Status s = ops::WhileLoop(
        root, {x},
        [&](const Scope& sc, const std::vector<Output>& v, Output* pred) {
          EXPECT_EQ(v[0].shape(), PartialShape({-1}));  // the Merge has the invariant's shape
          return small(sc, v, pred);
        },
        grow, &out, options);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].shape(), PartialShape({-1}));
    ExpectImports(root);
  }
  {
    Scope root = Scope::NewRootScope();
    auto x = ops::Const(root.WithOpName("x"), {1.f, 2.f});
    ops::WhileLoopOptions options;
    options.shape_invariants = {PartialShape({3})};
    std::vector<Output> out;
    Status s = ops::WhileLoop(root, {x}, small, grow, &out, options);
    EXPECT_HAS(s.message(),
               "loop variable 0 'x' (float [2]) does not have the shape "
               "of its shape invariant [3]");
  }
  {
    Scope root = Scope::NewRootScope();
    auto x = ops::Const(root.WithOpName("x"), {1.f, 2.f});
    ops::WhileLoopOptions options;
    options.shape_invariants = {PartialShape({-1, 2})};  // a rank the body's result lacks
    std::vector<Output> out;
    Status s = ops::WhileLoop(root, {x}, small, grow, &out, options);
    EXPECT_FALSE(s.ok());
  }
}

TEST_F(ControlFlowBuilderTest, LoopErrorsNameTheLoop) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Const(root.WithOpName("x"), 1.f);
  auto keep_going = [](const Scope& s, const std::vector<Output>& v, Output* pred) {
    *pred = ops::Less(s, v[0], 10.f);
    return Status::OK();
  };
  std::vector<Output> out;
  Status count = ops::WhileLoop(
      root, {x}, keep_going,
      [](const Scope&, const std::vector<Output>& v, std::vector<Output>* next) {
        return Returns(next, {v[0], v[0]});
      },
      &out);
  EXPECT_HAS(count.message(), "the body returns 2 values for 1 loop variables");

  Scope r2 = Scope::NewRootScope();
  auto y = ops::Const(r2.WithOpName("y"), 1.f);
  Status dtype = ops::WhileLoop(
      r2, {y}, keep_going,
      [](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
        return Returns(next, {ops::Cast(s.WithOpName("as_int"), v[0], DT_INT32)});
      },
      &out);
  EXPECT_HAS(dtype.message(),
             "loop variable 0 'y' (float []) becomes 'while/as_int' "
             "(int32");

  Scope r3 = Scope::NewRootScope();
  auto z = ops::Const(r3.WithOpName("z"), 1.f);
  Status pred = ops::WhileLoop(
      r3, {z},
      [](const Scope&, const std::vector<Output>& v, Output* p) {
        *p = v[0];
        return Status::OK();
      },
      [](const Scope&, const std::vector<Output>& v, std::vector<Output>* next) {
        return Returns(next, {v[0]});
      },
      &out);
  EXPECT_HAS(pred.message(), "the condition must be a bool scalar but is 'while/Merge'");

  // An error inside the body (a bad op) comes back with the loop named.
  Scope r4 = Scope::NewRootScope();
  auto w = ops::Const(r4.WithOpName("w"), {1.f, 2.f});
  auto m = ops::Const(r4.WithOpName("m"), {1.f, 2.f, 3.f});
  Status inner = ops::WhileLoop(
      r4, {w},
      [](const Scope& s, const std::vector<Output>& v, Output* p) {
        *p = ops::Less(s, ops::Sum(s, v[0], 0), 10.f);
        return Status::OK();
      },
      [&](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
        return Returns(next, {ops::AddV2(s, v[0], m)});  // [2] + [3]
      },
      &out);
  EXPECT_EQ(inner.code(), Code::kInvalidArgument);
  EXPECT_HAS(inner.message(), "WhileLoop 'while', body: ");
  EXPECT_HAS(inner.message(), "control_flow_builder_test.cc");

  Scope r5 = Scope::NewRootScope();
  ops::WhileLoopOptions bad;
  bad.maximum_iterations = ops::Const(r5, 2.f);
  Status limit = ops::WhileLoop(
      r5, {ops::Const(r5, 1.f)}, keep_going,
      [](const Scope&, const std::vector<Output>& v, std::vector<Output>* next) {
        return Returns(next, {v[0]});
      },
      &out, bad);
  EXPECT_HAS(limit.message(), "maximum_iterations must be an int32 scalar");
}

TEST_F(ControlFlowBuilderTest, OutsideControlDependenciesEnterTheFrame) {
  Scope root = Scope::NewRootScope();
  auto init = ops::NoOp(root.WithOpName("init"));
  Scope after = root.WithControlDependencies({init});
  std::vector<Output> out;
  ASSERT_TRUE(ops::WhileLoop(
                  after, {ops::Const(root, 0)},
                  [](const Scope& s, const std::vector<Output>& v, Output* pred) {
                    *pred = ops::Less(s, v[0], 3);
                    return Status::OK();
                  },
                  [](const Scope& s, const std::vector<Output>& v, std::vector<Output>* next) {
                    return Returns(next, {ops::AddV2(s, v[0], 1)});
                  },
                  &out)
                  .ok())
      << root.status();
  auto defs = Defs(root);
  // No node inside the frame waits on `init` directly (it is in the parent
  // frame); the loop's Enter does, and body nodes through a constant Enter.
  for (const auto& [name, def] : defs) {
    bool waits_on_init = false;
    for (const std::string& in : def.inputs) waits_on_init |= in == "^init";
    const bool outside_frame = def.op == "Enter" || name == "while/control";
    EXPECT_TRUE(!waits_on_init || outside_frame) << name << " (" << def.op << ") waits on init";
  }
  EXPECT_EQ(defs["while/Enter"].inputs, Inputs({"Const", "^init"}));
  ExpectImports(root);
}

}  // namespace
}  // namespace weir
