// Gradients of the resizes, the depthwise convolution and of NCHW
// convolution, pooling, bias and batch-norm graphs against finite
// differences.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

AttrMap ResizeAttrs(bool align_corners, bool half_pixel_centers) {
  return {{"align_corners", align_corners}, {"half_pixel_centers", half_pixel_centers}};
}

TEST(ImageGradientsTest, ResizeNearestNeighbor) {
  Tensor x = DistinctValues({2, 3, 4, 2});
  for (auto [ac, hp] : {std::pair{false, false}, {true, false}, {false, true}}) {
    for (std::vector<int32_t> size : {std::vector<int32_t>{5, 7}, {2, 3}}) {
      SCOPED_TRACE(StrCat(ac, hp, " ", size[0], "x", size[1]));
      ExpectGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
        return ops::ResizeNearestNeighbor(s, in[0], ops::Const(s, Tensor::FromVector<int32_t>(size, TensorShape({2}))), ResizeAttrs(ac, hp));
      });
    }
  }
}

TEST(ImageGradientsTest, ResizeBilinear) {
  // The forward op computes in float whatever the input: float checks.
  Tensor x = ToFloat(DistinctValues({2, 3, 4, 2}));
  for (auto [ac, hp] : {std::pair{false, false}, {true, false}, {false, true}}) {
    for (std::vector<int32_t> size : {std::vector<int32_t>{5, 7}, {2, 3}}) {
      SCOPED_TRACE(StrCat(ac, hp, " ", size[0], "x", size[1]));
      ExpectFloatGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
        return ops::ResizeBilinear(s, in[0], ops::Const(s, Tensor::FromVector<int32_t>(size, TensorShape({2}))), ResizeAttrs(ac, hp));
      });
    }
  }
}

TEST(ImageGradientsTest, ResizeBicubic) {
  Tensor x = ToFloat(DistinctValues({2, 3, 4, 2}));
  for (auto [ac, hp] : {std::pair{false, false}, {true, false}, {false, true}}) {
    for (std::vector<int32_t> size : {std::vector<int32_t>{5, 7}, {2, 3}}) {
      SCOPED_TRACE(StrCat(ac, hp, " ", size[0], "x", size[1]));
      ExpectFloatGradientsMatch({x}, [&](const Scope& s, const std::vector<Output>& in) {
        Output size_t = ops::Const(s, Tensor::FromVector<int32_t>(size, TensorShape({2})));
        return AddOp(s, "ResizeBicubic", {in[0], size_t}, ResizeAttrs(ac, hp)).output(0);
      });
    }
    // ResizeBicubicGrad is linear in grads: its gradient is the forward resize.
    ExpectFloatGradientsMatch(
        {ToFloat(DistinctValues({2, 5, 3, 2}))},
        [&](const Scope& s, const std::vector<Output>& in) {
          Output original = ops::Const(s, Tensor(DT_FLOAT, TensorShape({2, 3, 4, 2})));
          return AddOp(s, "ResizeBicubicGrad", {in[0], original}, ResizeAttrs(ac, hp)).output(0);
        });
  }
}

TEST(ImageGradientsTest, CropAndResize) {
  // Boxes whose samples stay away from pixel boundaries (the blend is
  // linear in the box there), one past the image's edge, one a point.
  Tensor image = ToFloat(DistinctValues({2, 4, 5, 2}));
  Tensor boxes = ToFloat(Tensor::FromVector<double>(
      {0.13, 0.21, 0.77, 0.93, -0.21, 0.33, 0.52, 1.27, 0.41, 0.58, 0.41, 0.58},
      TensorShape({3, 4})));
  for (const char* method : {"bilinear", "nearest"}) {
    SCOPED_TRACE(method);
    ExpectFloatGradientsMatch({image, boxes}, [&](const Scope& s, const std::vector<Output>& in) {
      Output box_ind = ops::Const(s, Tensor::FromVector<int32_t>({1, 0, 1}));
      Output size = ops::Const(s, Tensor::FromVector<int32_t>({3, 2}));
      return AddOp(s, "CropAndResize", {in[0], in[1], box_ind, size},
                   {{"method", std::string(method)}, {"extrapolation_value", 0.5f}})
          .output(0);
    });
  }
}

TEST(ImageGradientsTest, ResizeGradientOpsAreDifferentiable) {
  // Linear in grads: their gradient is the forward resize.
  Tensor grads = DistinctValues({2, 5, 3, 2});
  for (auto [ac, hp] : {std::pair{false, false}, {true, false}, {false, true}}) {
    ExpectGradientsMatch({grads}, [&](const Scope& s, const std::vector<Output>& in) {
      return ops::ResizeNearestNeighborGrad(
          s, in[0], ops::Const(s, Tensor::FromVector<int32_t>({3, 4}, TensorShape({2}))),
          ResizeAttrs(ac, hp));
    });
    ExpectFloatGradientsMatch({ToFloat(grads)}, [&](const Scope& s, const std::vector<Output>& in) {
      Output original = ops::Const(s, Tensor(DT_FLOAT, TensorShape({2, 3, 4, 2})));
      return ops::ResizeBilinearGrad(s, in[0], original, ResizeAttrs(ac, hp));
    });
  }
}

TEST(ImageGradientsTest, ResizeNearestNeighborOfUnknownShape) {
  // The gradient reads the image's rows and cols at run time.
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root, DT_DOUBLE, {{"shape", PartialShape::UnknownDims(4)}});
  auto y = ops::ResizeNearestNeighbor(root, x, ops::Const(root, Tensor::FromVector<int32_t>({4, 4}, TensorShape({2}))));
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {y}, {x}, &grads).ok()) << root.status();
  EXPECT_EQ(grads[0].node()->type_string(), "ResizeNearestNeighborGrad");
}

struct DepthwiseCase {
  std::vector<int64_t> strides;
  std::string padding;
  std::vector<int64_t> explicit_paddings;
  std::vector<int64_t> dilations;
  std::string format = "NHWC";
};

TEST(ImageGradientsTest, DepthwiseConv2dNative) {
  const std::vector<DepthwiseCase> cases = {
      {{1, 1, 1, 1}, "SAME", {}, {1, 1, 1, 1}},
      {{1, 2, 1, 1}, "VALID", {}, {1, 1, 2, 1}},
      {{1, 1, 2, 1}, "EXPLICIT", {0, 0, 1, 0, 2, 1, 0, 0}, {1, 1, 1, 1}},
      {{1, 1, 2, 1}, "SAME", {}, {1, 1, 1, 1}, "NCHW"},
      {{1, 1, 1, 2}, "EXPLICIT", {0, 0, 0, 0, 1, 1, 0, 2}, {1, 1, 2, 1}, "NCHW"},
  };
  for (const DepthwiseCase& c : cases) {
    SCOPED_TRACE(c.padding + " " + c.format);
    const bool nchw = c.format == "NCHW";
    Tensor input = DistinctValues(nchw ? TensorShape({2, 2, 5, 6}) : TensorShape({2, 5, 6, 2}));
    Tensor filter = DistinctValues({3, 2, 2, 3});
    ExpectGradientsMatch({input, filter}, [&](const Scope& s, const std::vector<Output>& in) {
      AttrMap attrs = {{"dilations", c.dilations}, {"data_format", c.format}};
      if (!c.explicit_paddings.empty()) attrs["explicit_paddings"] = c.explicit_paddings;
      return ops::DepthwiseConv2dNative(s, in[0], in[1], c.strides, c.padding, attrs);
    });
  }
}

TEST(ImageGradientsTest, DepthwiseBackpropsAreDifferentiable) {
  const AttrMap attrs = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}};
  Tensor filter = DistinctValues({3, 3, 2, 2}), out_backprop = DistinctValues({1, 4, 4, 4});
  Tensor input = DistinctValues({1, 4, 4, 2});
  ExpectGradientsMatch({filter, out_backprop}, [&](const Scope& s, const std::vector<Output>& in) {
    return AddOp(s, "DepthwiseConv2dNativeBackpropInput",
                 {ops::Const(s, {1, 4, 4, 2}), in[0], in[1]}, attrs)
        .output(0);
  });
  ExpectGradientsMatch({input, out_backprop}, [&](const Scope& s, const std::vector<Output>& in) {
    return AddOp(s, "DepthwiseConv2dNativeBackpropFilter",
                 {in[0], ops::Const(s, {3, 3, 2, 2}), in[1]}, attrs)
        .output(0);
  });
}

// A small NCHW convnet: conv (strided, explicit padding), bias, relu,
// max pool, avg pool: the gradient of every input through NCHW kernels.
TEST(ImageGradientsTest, NchwConvNet) {
  Tensor x = DistinctValues({2, 2, 6, 7});
  Tensor f = DistinctValues({3, 3, 2, 3});
  Tensor b = Values({0.5, -0.25, 0.125}, {3});
  const AttrMap nchw = {{"data_format", "NCHW"}};
  ExpectGradientsMatch({x, f, b}, [&](const Scope& s, const std::vector<Output>& in) {
    AttrMap conv_attrs = nchw;
    conv_attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, 0, 0, 1, 1, 0, 2};
    Output y = ops::Conv2D(s, in[0], in[1], {1, 1, 1, 2}, "EXPLICIT", conv_attrs);
    y = ops::BiasAdd(s, y, in[2], nchw);
    y = ops::MaxPool(s, y, {1, 1, 2, 2}, {1, 1, 2, 1}, "SAME", nchw);
    return ops::AvgPool(s, y, {1, 1, 2, 2}, {1, 1, 1, 1}, "VALID", nchw);
  });
}

TEST(ImageGradientsTest, NchwFusedBatchNormTraining) {
  Tensor x = DistinctValues({2, 3, 2, 3});  // channels in dim 1
  Tensor scale = Values({0.5, 1.5, -1}, {3}), offset = Values({0.1, 0.2, 0.3}, {3});
  ExpectGradientsMatch({x, scale, offset}, [](const Scope& s, const std::vector<Output>& in) {
    Tensor empty(DT_DOUBLE, TensorShape({0}));
    return ops::FusedBatchNormV3(s, in[0], in[1], in[2], ops::Const(s, empty), ops::Const(s, empty),
                                 {{"epsilon", 0.001f}, {"data_format", "NCHW"}})
        .output(0);
  }, 1e-5);
}

}  // namespace
}  // namespace weir
