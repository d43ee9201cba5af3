// The array family's gradient functions against finite differences, and
// the ones that stop or refuse gradients.
#include <gtest/gtest.h>

#include "weir/framework/op_def.h"
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/standard_ops.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

Output Ints(const Scope& s, std::vector<int32_t> v, TensorShape shape) {
  return ops::Const(s, Tensor::FromVector<int32_t>(v, shape));
}
Output Ints(const Scope& s, std::vector<int32_t> v) {
  return Ints(s, v, TensorShape({static_cast<int64_t>(v.size())}));
}

// Each case: a name and y built from one [2, 3, 4] input x.
struct Case {
  const char* name;
  std::function<Output(const Scope&, const Output&)> build;
};

TEST(ArrayGradientsTest, EveryOpOfOneInput) {
  const std::vector<Case> cases = {
      {"Transpose", [](const Scope& s, const Output& x) { return ops::Transpose(s, x, {2, 0, 1}); }},
      {"Transpose dynamic perm",
       [](const Scope& s, const Output& x) { return ops::Transpose(s, x, ops::Identity(s, Ints(s, {1, 2, 0}))); }},
      {"Split", [](const Scope& s, const Output& x) {
         Operation split = ops::Split(s, 2, x, 2);
         return ops::Mul(s, split.output(0), split.output(1));
       }},
      {"Split one piece used", [](const Scope& s, const Output& x) { return ops::Split(s, -1, x, 4).output(2); }},
      {"SplitV", [](const Scope& s, const Output& x) {
         Operation split = ops::SplitV(s, x, ops::Const(s, {1, 3}), 2, 2);
         return ops::Sum(s, ops::Mul(s, split.output(1), split.output(1)), 2);
       }},
      {"Slice", [](const Scope& s, const Output& x) { return ops::Slice(s, x, {0, 1, 1}, {2, -1, 2}); }},
      {"StridedSlice", [](const Scope& s, const Output& x) {
         return ops::StridedSlice(s, x, {0, 2, 3}, {2, 0, 0}, {1, -1, -2}, {{"shrink_axis_mask", 0}});
       }},
      {"StridedSlice shrink", [](const Scope& s, const Output& x) {
         return ops::StridedSlice(s, x, {1, 0, 1}, {2, 3, 4}, {1, 2, 2}, {{"shrink_axis_mask", 1}});
       }},
      {"Unpack", [](const Scope& s, const Output& x) {
         Operation parts = ops::Unpack(s, x, 3, {{"axis", 1}});
         return ops::Mul(s, parts.output(0), parts.output(2));
       }},
      {"Tile", [](const Scope& s, const Output& x) { return ops::Tile(s, x, {2, 1, 3}); }},
      {"Pad", [](const Scope& s, const Output& x) { return ops::Pad(s, x, Ints(s, {1, 0, 0, 2, 2, 1}, {3, 2})); }},
      {"MirrorPad REFLECT", [](const Scope& s, const Output& x) {
         return ops::MirrorPad(s, x, Ints(s, {1, 0, 2, 1, 0, 3}, {3, 2}), "REFLECT");
       }},
      {"MirrorPad SYMMETRIC", [](const Scope& s, const Output& x) {
         return ops::MirrorPad(s, x, Ints(s, {2, 1, 0, 3, 1, 1}, {3, 2}), "SYMMETRIC");
       }},
      {"ExpandDims", [](const Scope& s, const Output& x) { return ops::ExpandDims(s, x, -2); }},
      {"Squeeze", [](const Scope& s, const Output& x) {
         return ops::Squeeze(s, ops::Reshape(s, x, {2, 1, 12, 1}), {{"squeeze_dims", std::vector<int64_t>{1}}});
       }},
      {"BroadcastTo", [](const Scope& s, const Output& x) {
         return ops::BroadcastTo(s, ops::Slice(s, x, {0, 0, 0}, {1, 3, 1}), {2, 2, 3, 4});
       }},
      {"ReverseV2", [](const Scope& s, const Output& x) { return ops::ReverseV2(s, x, {0, -1}); }},
      {"ReverseSequence seq 2 batch 0", [](const Scope& s, const Output& x) {
         return AddOp(s, "ReverseSequence", {x, Ints(s, {3, 4})}, {{"seq_dim", int64_t{2}}}).output(0);
       }},
      {"ReverseSequence seq 0 batch 1", [](const Scope& s, const Output& x) {
         AttrMap attrs{{"seq_dim", int64_t{0}}, {"batch_dim", int64_t{1}}};
         return AddOp(s, "ReverseSequence", {x, Ints(s, {2, 0, 1})}, attrs).output(0);
       }},
      {"SpaceToBatchND", [](const Scope& s, const Output& x) {
         return AddOp(s, "SpaceToBatchND", {x, Ints(s, {2}), Ints(s, {1, 0}, {1, 2})}).output(0);
       }},
      {"BatchToSpaceND", [](const Scope& s, const Output& x) {
         return AddOp(s, "BatchToSpaceND", {x, Ints(s, {2}), Ints(s, {1, 2}, {1, 2})}).output(0);
       }},
      {"MatrixBandPart", [](const Scope& s, const Output& x) {
         return AddOp(s, "MatrixBandPart", {x, Ints(s, {1}, {}), Ints(s, {0}, {})}).output(0);
       }},
      {"SpaceToDepth", [](const Scope& s, const Output& x) {
         return AddOp(s, "SpaceToDepth", {ops::Reshape(s, x, {1, 2, 2, 6})}, {{"block_size", int64_t{2}}})
             .output(0);
       }},
      {"DepthToSpace NCHW", [](const Scope& s, const Output& x) {
         AttrMap attrs{{"block_size", int64_t{2}}, {"data_format", std::string("NCHW")}};
         return AddOp(s, "DepthToSpace", {ops::Reshape(s, x, {2, 4, 3, 1})}, attrs).output(0);
       }},
      {"CheckNumerics", [](const Scope& s, const Output& x) {
         return AddOp(s, "CheckNumerics", {x}, {{"message", std::string("x")}}).output(0);
       }},
      {"GatherNd", [](const Scope& s, const Output& x) {
         return ops::GatherNd(s, x, Ints(s, {1, 2, 0, 1, 1, 2, 0, 0, 3}, {3, 3}));
       }},
      {"GatherNd rows, repeated", [](const Scope& s, const Output& x) {
         return ops::GatherNd(s, x, Ints(s, {1, 0, 1, 0}, {2, 2}));
       }},
      {"GatherV2 axis 1", [](const Scope& s, const Output& x) {
         return ops::GatherV2(s, x, Ints(s, {2, 0, 2}), 1);
       }},
      {"DynamicPartition", [](const Scope& s, const Output& x) {
         Operation parts = ops::DynamicPartition(s, x, Ints(s, {2, 0}), 3);
         return ops::ConcatV2(s, {parts.output(0), ops::Mul(s, parts.output(2), 2.0)}, 0);
       }},
      {"IdentityN", [](const Scope& s, const Output& x) {
         Operation both = ops::IdentityN(s, {x, ops::Neg(s, x)});
         return ops::Mul(s, both.output(0), both.output(1));
       }},
      {"Fill", [](const Scope& s, const Output& x) {
         return ops::Fill(s, {2, 2}, ops::Sum(s, x, Ints(s, {0, 1, 2})));
       }},
  };
  Tensor x = DistinctValues({2, 3, 4});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) { return c.build(s, in[0]); });
  }
}

TEST(ArrayGradientsTest, OpsOfSeveralInputs) {
  Tensor a = DistinctValues({2, 3}), b = DistinctValues({2, 1}), c = DistinctValues({2, 2});
  ExpectGradientsMatch({a, b, c}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::ConcatV2(s, {in[0], in[1], in[2]}, -1);
  });
  ExpectGradientsMatch({a, a}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Pack(s, {in[0], in[1]}, {{"axis", 1}});
  });
  ExpectGradientsMatch({a, Values({0.5}, {})}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::PadV2(s, in[0], Ints(s, {1, 1, 0, 2}, {2, 2}), in[1]);
  });
  // ScatterNd's updates; DynamicStitch with an overwritten row (row 1 is
  // taken from the second piece, so the first piece's row gets nothing).
  ExpectGradientsMatch({DistinctValues({3, 2})}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::ScatterNd(s, Ints(s, {3, 0, 3}, {3, 1}), in[0], {5, 2});
  });
  ExpectGradientsMatch({DistinctValues({2, 2}), DistinctValues({2, 2})},
                       [](const Scope& s, const std::vector<Output>& in) {
                         return ops::DynamicStitch(s, {Ints(s, {0, 1}), Ints(s, {1, 2})}, {in[0], in[1]});
                       });
}

TEST(ArrayGradientsTest, StopAndPrevent) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {ops::Mul(root, ops::StopGradient(root, x), 2.0)}, {x}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  auto stopped_and_not = ops::Mul(root, ops::StopGradient(root, x), x);
  ASSERT_TRUE(AddSymbolicGradients(root, {stopped_and_not}, {x}, &grads).ok());
  auto prevented = ops::PreventGradient(root, x, {{"message", "no second derivative here"}});
  s = AddSymbolicGradients(root, {ops::Neg(root, prevented)}, {x}, &grads);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("no second derivative here"), std::string::npos) << s;
}

// Every declared op has a gradient function or an explicit "no gradient":
// a new op cannot silently leave autodiff behind.
TEST(GradientRegistryTest, EveryOpHasAnEntry) {
  RegisterAllGradients();
  std::vector<std::string> missing;
  for (const OpDef* op : OpRegistry::Global()->ListOps()) {
    if (!GradientRegistry::Global()->HasEntry(op->name)) missing.push_back(op->name);
  }
  EXPECT_TRUE(missing.empty()) << StrJoin(missing, ", ");
}

}  // namespace
}  // namespace weir
