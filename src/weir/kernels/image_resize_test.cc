// ResizeBilinear and ResizeNearestNeighbor against values TensorFlow 2.21
// computed for the same image (tf.raw_ops, CPU; fixtures below), for each
// attr combination TF allows; the gradient kernels by the adjoint identity
// sum(resize(x) * g) == sum(x * grad(g)), which holds exactly for these
// linear maps; and bad inputs as InvalidArgument naming op and shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

// [1, 3, 4, 2]
const std::vector<double> kImage = {7,   -5.5, -4,  2.5,  -1,  0.5,   -2,  3.5,
                                    5,   -6.5, 8,   9.5,  -11, 12.5,  14,  -15.5,
                                    17,  18.5, -20, 21.5, 23,  -24.5, 26,  27.5};

struct Fixture {
  const char* op;
  bool align_corners, half_pixel_centers;
  std::vector<double> want;  // resized to [5, 3]
};

const std::vector<Fixture>& Fixtures() {
  static const std::vector<Fixture> fixtures = {
      {"ResizeBilinear", false, false,
       {7, -5.5, -3, 1.833333, -1.666667, 2.5, 5.8, -6.1, -0.2000003, 7.033334,
        2.733334, -2.700001, 7.400001, -1.499999, 0.1999995, 9.633333, 9.533335, -2.899999,
        14.6, 13.5, -4.199999, 7.033332, 21.13334, 6.900005, 17, 18.5, -5.666665, 6.166665, 25,
        10.16667}},
      {"ResizeBilinear", true, false,
       {7, -5.5, -2.5, 1.5, -2, 3.5, 6, -6, -2, 6.25, 6, -6, 5, -6.5, -1.5, 11, 14, -15.5, 11, 6,
        0, 4.75, 20, 6, 17, 18.5, 1.5, -1.5, 26, 27.5}},
      {"ResizeBilinear", false, true,
       {5.166667, -4.166667, -2.5, 1.5, -1.833333, 3, 5.3, -4.033333, -2.1, 5.3, 2.833335,
        -2.533335, 5.5, -3.833333, -1.5, 11, 9.833338, -10.83334, 8.7, 9.86667, 0.3000004,
        3.499998, 19.23334, 6.966675, 10.83333, 19, 1.5, -1.5, 25.5, 18.83334}},
      {"ResizeNearestNeighbor", false, false,
       {7, -5.5, -4, 2.5, -1, 0.5, 7, -5.5, -4, 2.5, -1, 0.5, 5, -6.5, 8, 9.5, -11, 12.5, 5,
        -6.5, 8, 9.5, -11, 12.5, 17, 18.5, -20, 21.5, 23, -24.5}},
      {"ResizeNearestNeighbor", true, false,
       {7, -5.5, -1, 0.5, -2, 3.5, 5, -6.5, -11, 12.5, 14, -15.5, 5, -6.5, -11, 12.5, 14, -15.5,
        17, 18.5, 23, -24.5, 26, 27.5, 17, 18.5, 23, -24.5, 26, 27.5}},
      {"ResizeNearestNeighbor", false, true,
       {7, -5.5, -1, 0.5, -2, 3.5, 7, -5.5, -1, 0.5, -2, 3.5, 5, -6.5, -11, 12.5, 14, -15.5, 17,
        18.5, 23, -24.5, 26, 27.5, 17, 18.5, 23, -24.5, 26, 27.5}},
  };
  return fixtures;
}

AttrMap Attrs(DType dtype, bool align_corners, bool half_pixel_centers) {
  return {{"T", dtype},
          {"align_corners", align_corners},
          {"half_pixel_centers", half_pixel_centers}};
}

TEST(ImageResizeTest, MatchesTensorFlow) {
  for (const Fixture& f : Fixtures()) {
    // The fixture's values are exact in every dtype here but int (the
    // halves): int32 images are checked with nearest only.
    for (DType dtype : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT32}) {
      const bool nearest = std::string(f.op) == "ResizeNearestNeighbor";
      if (dtype == DT_INT32 && !nearest) continue;
      SCOPED_TRACE(StrCat(f.op, " ", dtype, " align_corners ", f.align_corners,
                          " half_pixel_centers ", f.half_pixel_centers));
      std::vector<double> image = kImage, want = f.want;
      if (dtype == DT_INT32) {
        for (double& v : image) v = std::floor(v);
        for (double& v : want) v = std::floor(v);
      }
      auto cast = RunKernel("Cast", {{"SrcT", DT_DOUBLE}, {"DstT", dtype}},
                            {MakeTensor(DT_DOUBLE, TensorShape({1, 3, 4, 2}), image)});
      ASSERT_TRUE(cast.ok()) << cast.status();
      const Tensor images = (*cast)[0];
      auto out = RunKernel(f.op, Attrs(dtype, f.align_corners, f.half_pixel_centers),
                           {images, Int32Vector({5, 3})});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), TensorShape({1, 5, 3, 2}));
      EXPECT_EQ((*out)[0].dtype(), nearest ? dtype : DT_FLOAT);
      // bfloat16 rounds the image's 8.5-style values: 2^-8 relative.
      const double tol = dtype == DT_BFLOAT16 ? 1e-2 : 2e-6;
      const std::vector<double> got = ToDoubles((*out)[0]);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], tol * (std::abs(want[i]) + 1)) << "element " << i;
      }
    }
  }
}

TEST(ImageResizeTest, BicubicMatchesTensorFlow) {
  // TensorFlow 2.21: tf.raw_ops.ResizeBicubic of arange(12) ** 1.5 as a
  // [1, 3, 4, 1] image to size [5, 3].
  std::vector<double> image(12);
  for (int i = 0; i < 12; ++i) image[i] = std::pow(i, 1.5);
  struct Case {
    bool align_corners, half_pixel_centers;
    std::vector<double> want;
  };
  const Case cases[] = {
      {false,
       false,
       {0., 1.5547347, 4.5530233, 3.3132856, 6.4505086, 10.568184, 11.345628, 16.333559, 21.87608,
        20.24249, 26.069494, 32.404312, 24.206661, 30.423534, 37.121758}},
      {true,
       false,
       {0., 1.7859892, 5.1961527, 2.6286798, 5.7958627, 10.17421, 8., 12.878359, 18.520258,
        16.063707, 22.11193, 28.750698, 22.627417, 29.265682, 36.482872}},
      {false,
       true,
       {-0.5276006, 0.99268353, 3.9509914, 2.3230274, 4.9818864, 8.773167, 8.324143, 12.898453,
        18.122776, 18.263784, 24.023735, 30.298878, 24.189499, 30.518213, 37.327896}},
  };
  for (const Case& c : cases) {
    for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(StrCat(dtype, " align_corners ", c.align_corners, " half_pixel_centers ",
                          c.half_pixel_centers));
      auto out =
          RunKernel("ResizeBicubic", Attrs(dtype, c.align_corners, c.half_pixel_centers),
                    {MakeTensor(dtype, TensorShape({1, 3, 4, 1}), image), Int32Vector({5, 3})});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), TensorShape({1, 5, 3, 1}));
      const std::vector<double> got = ToDoubles((*out)[0]);
      for (size_t i = 0; i < c.want.size(); ++i) {
        EXPECT_NEAR(got[i], c.want[i], 1e-6 * (std::abs(c.want[i]) + 1)) << "element " << i;
      }
    }
  }
}

// TensorFlow 2.21's tf.image.crop_and_resize (extrapolation_value -1) and
// its gradients for arange(80) ** 1.3 as a [2, 4, 5, 2] image and four boxes:
// inside, past the image's edges, a point, and upside down.
TEST(ImageResizeTest, CropAndResizeMatchesTensorFlow) {
  std::vector<double> pixels(80);
  for (int i = 0; i < 80; ++i) pixels[i] = std::pow(static_cast<float>(i), 1.3f);
  const Tensor image = MakeTensor(DT_FLOAT, TensorShape({2, 4, 5, 2}), pixels);
  const Tensor boxes =
      MakeTensor(DT_FLOAT, TensorShape({4, 4}),
                 {0.1, 0.2, 0.8, 0.9, -0.2, 0.3, 0.5, 1.3, 0.5, 0.5, 0.5, 0.5, 0.9, 0.1, 0.2, 0.7});
  const Tensor box_ind = Int32Vector({0, 1, 1, 0});
  auto expect_near = [](const Tensor& got, const std::vector<double>& want) {
    const std::vector<double> values = ToDoubles(got);
    ASSERT_EQ(values.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(values[i], want[i], 2e-6 * (std::abs(want[i]) + 1)) << "element " << i;
    }
  };
  struct Case {
    const char* method;
    std::vector<int32_t> size;
    std::vector<double> want;
  };
  const Case cases[] = {
      {"bilinear",
       {3, 2},
       {8.64545345, 10.5659227, 21.2680397, 23.8667946, 34.7539482, 37.689682,  51.9167442,
        55.1492767, 68.2092209, 71.6552505, 88.012207,  91.6694031, -1,         -1,
        -1,         -1,         149.106796, 153.238815, -1,         -1,         193.751205,
        198.140503, -1,         -1,         200.777832, 205.203445, 200.777832, 205.203445,
        200.777832, 205.203445, 200.777832, 205.203445, 200.777832, 205.203445, 200.777832,
        205.203445, 75.8138885, 79.3465042, 93.1020203, 96.8080673, 41.3493767, 44.4051132,
        56.4813347, 59.7762985, 13.6463223, 15.7728033, 25.1236954, 27.8109512}},
      {"bilinear", {1, 3}, {34.753952,  37.6896858, 43.1191635, 46.2122841, 51.916748,
                            55.1492805, 149.106796, 153.238815, 165.790359, 170.02478,
                            -1,         -1,         200.777832, 205.203445, 200.777832,
                            205.203445, 200.777832, 205.203445, 41.3493843, 44.4051208,
                            48.7731552, 51.9540405, 56.4813423, 59.7763062}},
      {"nearest", {3, 2}, {2.46228862, 4.17116737, 14.9285269, 17.3986359, 25.2892284, 28.0624962,
                           42.8404694, 45.9599571, 55.6095543, 58.9177475, 76.0861053, 79.6374435,
                           -1,         -1,         -1,         -1,         128.891418, 132.895081,
                           -1,         -1,         170.13916,  174.404846, -1,         -1,
                           222.860901, 227.398331, 222.860901, 227.398331, 222.860901, 227.398331,
                           222.860901, 227.398331, 222.860901, 227.398331, 222.860901, 227.398331,
                           83.2257233, 86.8500595, 105.485596, 109.310577, 49.1291161, 52.3461838,
                           69.0979691, 72.5726242, 19.9526196, 22.5844975, 36.7583389, 39.7725563}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(StrCat(c.method, " ", c.size[0], "x", c.size[1]));
    auto out = RunKernel(
        "CropAndResize",
        {{"T", DT_FLOAT}, {"method", std::string(c.method)}, {"extrapolation_value", -1.0f}},
        {image, boxes, box_ind, Int32Vector(c.size)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), TensorShape({4, c.size[0], c.size[1], 2}));
    expect_near((*out)[0], c.want);
  }
  std::vector<double> g(48);
  for (int i = 0; i < 48; ++i) g[i] = static_cast<float>(i) * 0.1f - 1.0f;
  const Tensor grads = MakeTensor(DT_FLOAT, TensorShape({4, 3, 2, 2}), g);
  auto dimage = RunKernel("CropAndResizeGradImage", {{"T", DT_FLOAT}},
                          {grads, boxes, box_ind, Int32Vector({2, 4, 5, 2})});
  ASSERT_TRUE(dimage.ok()) << dimage.status();
  std::vector<double> want_image = {0.676000297,
                                    0.714000225,
                                    -0.0159998536,
                                    0.0560001135,
                                    0.288000137,
                                    0.296000183,
                                    0.928000152,
                                    0.988000333,
                                    -0.335999936,
                                    -0.29399994,
                                    1.71600008,
                                    1.79200006,
                                    0.684000015,
                                    0.797999978,
                                    0.656000197,
                                    0.67500025,
                                    2.42400002,
                                    2.53800011,
                                    -0.299999952,
                                    -0.243000001,
                                    1.57200027,
                                    1.648,
                                    0.828000069,
                                    0.942000031,
                                    0.58400017,
                                    0.603000224,
                                    2.27999997,
                                    2.39400005,
                                    -0.0839999616,
                                    -0.0269999616,
                                    1.07599974,
                                    1.12599969,
                                    0.663999915,
                                    0.723999798,
                                    0.39199999,
                                    0.405999988,
                                    1.56799948,
                                    1.63999951,
                                    0,
                                    0.0239999928,
                                    0,
                                    0,
                                    0.264000028,
                                    0.308000058,
                                    0.066000022,
                                    0.0770000368,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0.616000056,
                                    0.692000031,
                                    5.85400009,
                                    6.17300034,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0,
                                    0.399999887,
                                    0.439999938,
                                    5.80000019,
                                    6.11000013};
  want_image.resize(80, 0.0);
  expect_near((*dimage)[0], want_image);
  auto dboxes =
      RunKernel("CropAndResizeGradBoxes", {{"T", DT_FLOAT}}, {grads, image, boxes, box_ind});
  ASSERT_TRUE(dboxes.ok()) << dboxes.status();
  const std::vector<double> want_boxes = {-339.279846, -60.8913193, -105.025757, -46.0719948,
                                          80.9095459,  117.126846,  357.613525,  0,
                                          1341.72266,  0,           1766.79102,  0,
                                          1762.81006,  420.549286,  1622.37061,  492.209473};
  const std::vector<double> got_boxes = ToDoubles((*dboxes)[0]);
  for (size_t i = 0; i < want_boxes.size(); ++i) {
    EXPECT_NEAR(got_boxes[i], want_boxes[i], 2e-5 * (std::abs(want_boxes[i]) + 1)) << i;
  }
  // A NaN or infinite box extrapolates, in every op, and never indexes.
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  Tensor odd_boxes(DT_FLOAT, TensorShape({2, 4}));
  const float odd[] = {nan, 0.1f, 0.5f, 0.9f, 0.2f, -inf, 0.7f, inf};
  std::copy(odd, odd + 8, odd_boxes.data<float>());
  auto odd_crops = RunKernel("CropAndResize", {{"T", DT_FLOAT}, {"extrapolation_value", 7.0f}},
                             {image, odd_boxes, Int32Vector({0, 1}), Int32Vector({2, 2})});
  ASSERT_TRUE(odd_crops.ok()) << odd_crops.status();
  for (double v : ToDoubles((*odd_crops)[0])) EXPECT_EQ(v, 7.0);
  const Tensor odd_grads(DT_FLOAT, TensorShape({2, 2, 2, 2}));
  EXPECT_TRUE(RunKernel("CropAndResizeGradImage", {{"T", DT_FLOAT}},
                        {odd_grads, odd_boxes, Int32Vector({0, 1}), Int32Vector({2, 4, 5, 2})})
                  .ok());
  EXPECT_TRUE(RunKernel("CropAndResizeGradBoxes", {{"T", DT_FLOAT}},
                        {odd_grads, image, odd_boxes, Int32Vector({0, 1})})
                  .ok());
  // A box of another image than the batch has is an error naming it.
  auto bad = RunKernel("CropAndResize", {{"T", DT_FLOAT}},
                       {image, boxes, Int32Vector({0, 1, 2, 0}), Int32Vector({2, 2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("box_ind[2] = 2 is outside [0, 2)"), std::string::npos)
      << bad.status();
}

// sum(resize(x) * g) == sum(x * grad(g)) for random x and g.
TEST(ImageResizeTest, GradientsAreAdjoints) {
  struct Case {
    TensorShape image;
    std::vector<int32_t> size;
  };
  for (const Case& c : std::vector<Case>{{TensorShape({2, 3, 4, 2}), {5, 7}},
                                         {TensorShape({1, 6, 5, 3}), {4, 2}},
                                         {TensorShape({1, 1, 1, 1}), {3, 3}},
                                         {TensorShape({1, 4, 4, 1}), {1, 1}}}) {
    for (bool ac : {false, true}) {
      for (bool hp : {false, true}) {
        if (ac && hp) continue;
        SCOPED_TRACE(StrCat(c.image, " -> ", c.size[0], "x", c.size[1], " ", ac, hp));
        const TensorShape resized({c.image.dim_size(0), c.size[0], c.size[1], c.image.dim_size(3)});
        const std::vector<double> x = RandomValues(c.image.num_elements(), 1);
        const std::vector<double> g = RandomValues(resized.num_elements(), 2);
        // Bilinear: forward in double images (float math inside), grad in double.
        auto y = RunKernel("ResizeBilinear", Attrs(DT_DOUBLE, ac, hp),
                           {MakeTensor(DT_DOUBLE, c.image, x), Int32Vector(c.size)});
        ASSERT_TRUE(y.ok()) << y.status();
        auto dx = RunKernel("ResizeBilinearGrad", Attrs(DT_DOUBLE, ac, hp),
                            {MakeTensor(DT_FLOAT, resized, g), MakeTensor(DT_DOUBLE, c.image, x)});
        ASSERT_TRUE(dx.ok()) << dx.status();
        EXPECT_EQ((*dx)[0].shape(), c.image);
        const std::vector<double> gf = RoundTo(DT_FLOAT, g);
        EXPECT_NEAR(Dot((*y)[0], gf), Dot((*dx)[0], x), 1e-4);
        // Bicubic alike.
        auto cy = RunKernel("ResizeBicubic", Attrs(DT_DOUBLE, ac, hp),
                            {MakeTensor(DT_DOUBLE, c.image, x), Int32Vector(c.size)});
        ASSERT_TRUE(cy.ok()) << cy.status();
        auto cdx = RunKernel("ResizeBicubicGrad", Attrs(DT_DOUBLE, ac, hp),
                             {MakeTensor(DT_FLOAT, resized, g), MakeTensor(DT_DOUBLE, c.image, x)});
        ASSERT_TRUE(cdx.ok()) << cdx.status();
        EXPECT_EQ((*cdx)[0].shape(), c.image);
        EXPECT_NEAR(Dot((*cy)[0], gf), Dot((*cdx)[0], x), 1e-4);
        auto ny = RunKernel("ResizeNearestNeighbor", Attrs(DT_DOUBLE, ac, hp),
                            {MakeTensor(DT_DOUBLE, c.image, x), Int32Vector(c.size)});
        ASSERT_TRUE(ny.ok()) << ny.status();
        auto ndx = RunKernel(
            "ResizeNearestNeighborGrad", Attrs(DT_DOUBLE, ac, hp),
            {MakeTensor(DT_DOUBLE, resized, g),
             Int32Vector({static_cast<int32_t>(c.image.dim_size(1)),
                          static_cast<int32_t>(c.image.dim_size(2))})});
        ASSERT_TRUE(ndx.ok()) << ndx.status();
        EXPECT_EQ((*ndx)[0].shape(), c.image);
        EXPECT_NEAR(Dot((*ny)[0], g), Dot((*ndx)[0], x), 1e-10);
      }
    }
  }
}

void ExpectInvalid(const std::string& op, const AttrMap& attrs, std::vector<Tensor> inputs,
                   const std::vector<std::string>& parts) {
  auto out = RunKernel(op, attrs, std::move(inputs));
  ASSERT_FALSE(out.ok()) << op;
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  for (const std::string& part : parts) {
    EXPECT_NE(out.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << out.status();
  }
}

TEST(ImageResizeTest, BadInputsAreInvalidArguments) {
  const Tensor image = RandomTensor(DT_FLOAT, TensorShape({1, 3, 4, 2}), 1);
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    const AttrMap attrs = Attrs(DT_FLOAT, false, false);
    ExpectInvalid(op, Attrs(DT_FLOAT, true, true), {image, Int32Vector({2, 2})},
                  {op, "half_pixel_centers", "align_corners"});
    ExpectInvalid(op, attrs, {RandomTensor(DT_FLOAT, TensorShape({3, 4, 2}), 1),
                              Int32Vector({2, 2})},
                  {op, "[3,4,2]", "rank 4"});
    ExpectInvalid(op, attrs, {image, Int32Vector({2, 2, 2})}, {op, "size", "[3]"});
    ExpectInvalid(op, attrs, {image, Int32Vector({0, 2})}, {op, "size [0,2]", "positive"});
    ExpectInvalid(op, attrs, {image, Int32Vector({-3, 2})}, {op, "positive"});
    ExpectInvalid(op, attrs, {Tensor(DT_FLOAT, TensorShape({1, 0, 4, 2})), Int32Vector({2, 2})},
                  {op, "[1,0,4,2]"});
    // An output whose element count overflows int64.
    ExpectInvalid(op, attrs, {RandomTensor(DT_FLOAT, TensorShape({4, 1, 1, 1}), 1),
                              Int32Vector({2147483647, 2147483647})},
                  {op});
  }
  ExpectInvalid("ResizeBilinearGrad", Attrs(DT_FLOAT, false, false),
                {RandomTensor(DT_FLOAT, TensorShape({1, 5, 5, 3}), 1), image},
                {"ResizeBilinearGrad", "[1,5,5,3]", "[1,3,4,2]", "channels"});
  ExpectInvalid("ResizeNearestNeighborGrad", Attrs(DT_FLOAT, false, false),
                {image, Int32Vector({1})}, {"ResizeNearestNeighborGrad", "size"});
}

}  // namespace
}  // namespace weir
