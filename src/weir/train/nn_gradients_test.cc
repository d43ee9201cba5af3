// The nn family's and the reductions' gradient functions against finite
// differences.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

TEST(NnGradientsTest, Relu) {
  // No element at 0, where Relu has no derivative.
  Tensor x = Values({-1.5, -0.3, 0.2, 0.7, 2, -4}, {2, 3});
  ExpectGradientsMatch({x}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::Relu(s, in[0]);
  });
}

TEST(NnGradientsTest, BiasAdd) {
  for (TensorShape shape : {TensorShape({2, 3}), TensorShape({2, 2, 2, 3})}) {
    ExpectGradientsMatch({DistinctValues(shape), Values({0.5, -1, 2}, {3})},
                         [](const Scope& s, const std::vector<Output>& in) {
                           return ops::BiasAdd(s, in[0], in[1]);
                         });
  }
}

struct ConvCase {
  std::vector<int64_t> strides;
  std::string padding;
  std::vector<int64_t> explicit_paddings;
  std::vector<int64_t> dilations;
};

Output Conv(const Scope& s, const Output& input, const Output& filter, const ConvCase& c) {
  AttrMap attrs = {{"dilations", c.dilations}};
  if (!c.explicit_paddings.empty()) attrs["explicit_paddings"] = c.explicit_paddings;
  return ops::Conv2D(s, input, filter, c.strides, c.padding, attrs);
}

const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      {{1, 1, 1, 1}, "SAME", {}, {1, 1, 1, 1}},
      {{1, 2, 2, 1}, "VALID", {}, {1, 1, 1, 1}},
      {{1, 2, 1, 1}, "SAME", {}, {1, 1, 1, 1}},
      {{1, 1, 2, 1}, "EXPLICIT", {0, 0, 1, 2, 2, 0, 0, 0}, {1, 1, 1, 1}},
      {{1, 1, 1, 1}, "SAME", {}, {1, 2, 2, 1}},
      {{1, 2, 2, 1}, "VALID", {}, {1, 1, 2, 1}},
  };
  return cases;
}

TEST(NnGradientsTest, Conv2DAllAttrs) {
  Tensor input = DistinctValues({2, 5, 6, 2});
  Tensor filter = DistinctValues({3, 3, 2, 3});
  for (const ConvCase& c : ConvCases()) {
    SCOPED_TRACE(c.padding + " strides " + std::to_string(c.strides[1]) + "," +
                 std::to_string(c.strides[2]) + " dilations " + std::to_string(c.dilations[1]) +
                 "," + std::to_string(c.dilations[2]));
    ExpectGradientsMatch({input, filter}, [&](const Scope& s, const std::vector<Output>& in) {
      return Conv(s, in[0], in[1], c);
    });
  }
}

TEST(NnGradientsTest, BackwardOpsAreDifferentiable) {
  // What second derivatives of conv nets pass through.
  ExpectGradientsMatch({DistinctValues({2, 3, 4})}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::BiasAddGrad(s, in[0]);
  });
  Tensor input = DistinctValues({2, 5, 6, 2}), filter = DistinctValues({3, 3, 2, 3});
  for (int i : {0, 1}) {
    const ConvCase& c = ConvCases()[i];
    Tensor out_backprop = DistinctValues(i == 0 ? TensorShape({2, 5, 6, 3}) : TensorShape({2, 2, 2, 3}));
    AttrMap attrs = {{"strides", c.strides}, {"padding", c.padding}};
    ExpectGradientsMatch({filter, out_backprop}, [&](const Scope& s, const std::vector<Output>& in) {
      return AddOp(s, "Conv2DBackpropInput", {ops::Const(s, {2, 5, 6, 2}), in[0], in[1]}, attrs).output(0);
    });
    ExpectGradientsMatch({input, out_backprop}, [&](const Scope& s, const std::vector<Output>& in) {
      return AddOp(s, "Conv2DBackpropFilter", {in[0], ops::Const(s, {3, 3, 2, 3}), in[1]}, attrs).output(0);
    });
  }
  ExpectGradientsMatch({DistinctValues({2, 2, 2, 2})}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::AvgPoolGrad(s, ops::Const(s, {2, 5, 5, 2}), in[0], {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  });
}

TEST(NnGradientsTest, Conv2DFloat) {
  // float (oneDNN): round-off of ~1e-7 relative over a step of 1e-2 and
  // sums of ~20 products of magnitude 4: errors ~1e-3.
  ExpectFloatGradientsMatch({DistinctValues({1, 5, 5, 2}), DistinctValues({3, 3, 2, 2})},
                            [](const Scope& s, const std::vector<Output>& in) {
                              return Conv(s, in[0], in[1], ConvCases()[3]);
                            });
}

TEST(NnGradientsTest, Conv2DBackpropsKeepTheDataFormat) {
  // The backprops must carry every attr, the data format included.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_FLOAT, {{"shape", PartialShape({1, 2, 5, 5})}});
  auto f = ops::Placeholder(root, DT_FLOAT, {{"shape", PartialShape({3, 3, 2, 4})}});
  auto y = ops::Conv2D(root, x, f, {1, 1, 2, 2}, "EXPLICIT",
                       {{"data_format", "NCHW"},
                        {"dilations", std::vector<int64_t>{1, 1, 2, 1}},
                        {"explicit_paddings", std::vector<int64_t>{0, 0, 0, 0, 1, 1, 2, 2}}});
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {y}, {x, f}, &grads).ok()) << root.status();
  for (const Output& g : grads) {
    const AttrMap& attrs = g.node()->def().attrs;
    EXPECT_EQ(attrs.at("data_format"), AttrValue("NCHW"));
    EXPECT_EQ(attrs.at("padding"), AttrValue("EXPLICIT"));
    EXPECT_EQ(attrs.at("strides"), AttrValue(std::vector<int64_t>{1, 1, 2, 2}));
    EXPECT_EQ(attrs.at("dilations"), AttrValue(std::vector<int64_t>{1, 1, 2, 1}));
  }
  EXPECT_EQ(grads[0].shape(), PartialShape({1, 2, 5, 5}));
  EXPECT_EQ(grads[1].shape(), PartialShape({3, 3, 2, 4}));
}

TEST(NnGradientsTest, MaxPoolAndAvgPool) {
  // Distinct inputs: at a tie the max has no derivative.
  Tensor x = DistinctValues({2, 5, 5, 2});
  struct Case {
    std::vector<int64_t> ksize, strides;
    std::string padding;
  };
  for (const Case& c : std::vector<Case>{{{1, 2, 2, 1}, {1, 2, 2, 1}, "VALID"},
                                         {{1, 3, 3, 1}, {1, 2, 2, 1}, "SAME"},
                                         {{1, 3, 2, 1}, {1, 1, 1, 1}, "SAME"},
                                         {{1, 2, 3, 1}, {1, 2, 1, 1}, "VALID"}}) {
    SCOPED_TRACE(c.padding);
    ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
      return ops::MaxPool(s, in[0], c.ksize, c.strides, c.padding);
    });
    ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
      return ops::AvgPool(s, in[0], c.ksize, c.strides, c.padding);
    });
  }
  ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
    return ops::MaxPool(s, in[0], {1, 2, 2, 1}, {1, 2, 2, 1}, "EXPLICIT",
                        {{"explicit_paddings", std::vector<int64_t>{0, 0, 1, 0, 0, 1, 0, 0}}});
  });
  ExpectFloatGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
    return ops::MaxPool(s, in[0], {1, 2, 2, 1}, {1, 1, 1, 1}, "SAME");
  });
}

TEST(NnGradientsTest, SoftmaxLogSoftmaxL2Loss) {
  for (TensorShape shape : {TensorShape({3, 4}), TensorShape({2, 2, 3}), TensorShape({5})}) {
    Tensor x = DistinctValues(shape);
    ExpectGradientsMatch({x}, [](const Scope& s, const std::vector<Output>& in) {
      return ops::Softmax(s, in[0]);
    });
    ExpectGradientsMatch({x}, [](const Scope& s, const std::vector<Output>& in) {
      return ops::LogSoftmax(s, in[0]);
    });
    ExpectGradientsMatch({x}, [](const Scope& s, const std::vector<Output>& in) {
      return ops::L2Loss(s, in[0]);
    });
  }
}

TEST(NnGradientsTest, SoftmaxCrossEntropyBothInputsWithBroadcasting) {
  Tensor full = DistinctValues({3, 4});
  Tensor labels = Values({0.1, 0.2, 0.3, 0.4, 1, 0, 0, 0, 0.25, 0.25, 0.5, 0}, {3, 4});
  Tensor row = Values({0.3, -1, 0.5, 2}, {1, 4});
  Tensor row_labels = Values({0.1, 0.6, 0.3, 0}, {1, 4});
  // Labels are distributions (rows summing to 1, after broadcasting): the
  // kernel's backprop, softmax - labels, is d loss / d features only then,
  // and the gradient uses it, as TensorFlow does.
  for (const auto& [f, l] : std::vector<std::pair<Tensor, Tensor>>{
           {full, labels}, {row, labels}, {full, row_labels}, {full, Values({0.25}, {1, 1})}}) {
    SCOPED_TRACE(StrCat("features ", f.shape(), " labels ", l.shape()));
    // The loss alone, and the loss plus a function of backprop, which
    // differentiates backprop: the loss's second derivative.
    ExpectGradientsMatch({f, l}, [](const Scope& s, const std::vector<Output>& in) {
      return ops::SoftmaxCrossEntropyWithLogits(s, in[0], in[1]).output(0);
    });
    ExpectGradientsMatch({f, l}, [](const Scope& s, const std::vector<Output>& in) {
      Operation op = ops::SoftmaxCrossEntropyWithLogits(s, in[0], in[1]);
      Output backprop = op.output(1);
      return ops::AddV2(s, op.output(0), ops::Sum(s, ops::Mul(s, backprop, backprop), 1));
    });
  }
}

TEST(NnGradientsTest, SparseSoftmaxCrossEntropy) {
  for (DType label_type : {DT_INT32, DT_INT64}) {
    ExpectGradientsMatch({DistinctValues({3, 4})}, [&](const Scope& s, const std::vector<Output>& in) {
      Output labels = ops::Cast(s, ops::Const(s, {2, 0, 3}), label_type);
      return ops::SparseSoftmaxCrossEntropyWithLogits(s, in[0], labels).output(0);
    });
  }
}

TEST(NnGradientsTest, SparseSoftmaxCrossEntropyRefusesSecondDerivative) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE, {{"shape", PartialShape({2, 3})}});
  Operation op = ops::SparseSoftmaxCrossEntropyWithLogits(root, x, ops::Const(root, {1, 2}));
  std::vector<Output> grads;
  Status s = AddSymbolicGradients(root, {op.output(1)}, {x}, &grads);
  EXPECT_EQ(s.code(), Code::kUnimplemented) << s;
  // The loss's gradient itself, even with a zero seed for backprop, is fine.
  s = AddSymbolicGradients(root, {op.output(0), op.output(1)}, {x},
                           {ops::OnesLike(root, op.output(0)), ops::ZerosLike(root, op.output(1))},
                           &grads);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(ReductionGradientsTest, SumAndMeanOverAnyAxes) {
  Tensor x = DistinctValues({2, 3, 4});
  std::vector<std::vector<int>> axes_cases = {{1}, {-1}, {0, 2}, {0, 1, 2}, {-3, 1}, {}};
  for (const char* op : {"Sum", "Mean"}) {
    for (const auto& axes : axes_cases) {
      for (bool keep_dims : {false, true}) {
        // Constant axes take the static path; axes through Identity are
        // known only at run time and take the dynamic one.
        for (bool dynamic : {false, true}) {
          SCOPED_TRACE(StrCat(op, " axes ", StrJoin(axes, ","), keep_dims ? " keep" : "",
                              dynamic ? " dynamic" : ""));
          ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
            Output a = ops::Const(s, Tensor::FromVector<int32_t>(
                                         std::vector<int32_t>(axes.begin(), axes.end())));
            if (dynamic) a = ops::Identity(s, a);
            return AddOp(s, op, {in[0], a}, {{"keep_dims", keep_dims}}).output(0);
          });
        }
      }
    }
  }
  // A scalar int64 axis.
  ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
    return ops::Mean(s, in[0], ops::Identity(s, ops::Cast(s, -2, DT_INT64)));
  });
}

}  // namespace
}  // namespace weir
