// Softmax, LogSoftmax and the softmax cross-entropy losses against the
// definitions in double, written here. Tolerances: 1e-6 relative for float,
// 1e-13 for double; the losses' backprop against central differences of
// the loss, 1e-8 with step 1e-4.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/nn_test_util.h"

namespace weir {
namespace {

// Per row of `classes` values: log(sum(exp(x))) computed stably.
double LogSumExp(const double* x, int64_t classes) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < classes; ++c) m = std::max(m, x[c]);
  double sum = 0;
  for (int64_t c = 0; c < classes; ++c) sum += std::exp(x[c] - m);
  return m + std::log(sum);
}

std::vector<double> ReferenceSoftmax(const std::vector<double>& x, int64_t classes, bool log) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r * classes < x.size(); ++r) {
    const double lse = LogSumExp(&x[r * classes], classes);
    for (int64_t c = 0; c < classes; ++c) {
      const double v = x[r * classes + c] - lse;
      out[r * classes + c] = log ? v : std::exp(v);
    }
  }
  return out;
}

double Tolerance(DType dtype) { return dtype == DT_FLOAT ? 1e-6 : 1e-13; }

TEST(SoftmaxTest, MatchesDefinition) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    for (const TensorShape& shape :
         {TensorShape({7}), TensorShape({3, 10}), TensorShape({2, 3, 17}), TensorShape({1000, 33}),
          TensorShape({4, 1}), TensorShape({0, 5}), TensorShape({5, 0})}) {
      SCOPED_TRACE(StrCat(shape, " ", dtype));
      const int64_t classes = shape.dim_size(shape.rank() - 1);
      const Tensor logits = RandomTensor(dtype, shape, 1, -5, 5);
      const std::vector<double> x = ToDoubles(logits);
      auto out = RunKernel("Softmax", {{"T", dtype}}, {logits});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), shape);
      ExpectAllNear((*out)[0], ReferenceSoftmax(x, classes, false), Tolerance(dtype), "Softmax");
      out = RunKernel("LogSoftmax", {{"T", dtype}}, {logits});
      ASSERT_TRUE(out.ok()) << out.status();
      // log-probabilities near 0 are compared on the scale of the logits.
      ExpectAllNear((*out)[0], ReferenceSoftmax(x, classes, true), Tolerance(dtype) * 10,
                    "LogSoftmax", std::vector<double>(x.size(), 10.0));
    }
  }
}

TEST(SoftmaxTest, HugeLogitsStayFinite) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    const Tensor logits =
        MakeTensor(dtype, TensorShape({2, 3}), {1e4, 1e4 - 1, -1e4, -1e4, -1e4 - 2, 1e4});
    auto out = RunKernel("Softmax", {{"T", dtype}}, {logits});
    ASSERT_TRUE(out.ok()) << out.status();
    const double e = std::exp(-1.0);
    ExpectAllNear((*out)[0], {1 / (1 + e), e / (1 + e), 0, 0, 0, 1}, Tolerance(dtype), "Softmax");
    out = RunKernel("LogSoftmax", {{"T", dtype}}, {logits});
    ASSERT_TRUE(out.ok()) << out.status();
    const double l = std::log1p(e);
    ExpectAllNear((*out)[0], {-l, -1 - l, -2e4 - l, -2e4, -2e4 - 2, 0}, Tolerance(dtype),
                  "LogSoftmax", std::vector<double>(6, 2e4));
    for (double v : ToDoubles((*out)[0])) EXPECT_TRUE(std::isfinite(v)) << v;
  }
}

TEST(SoftmaxTest, NaNRowsStayNaNAndRank0IsAnError) {
  const Tensor logits = MakeTensor(DT_FLOAT, TensorShape({2, 2}), {NAN, 1, 2, 3});
  auto out = RunKernel("Softmax", {{"T", DT_FLOAT}}, {logits});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = ToDoubles((*out)[0]);
  EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1]));
  EXPECT_FALSE(std::isnan(got[2]) || std::isnan(got[3]));
  out = RunKernel("Softmax", {{"T", DT_FLOAT}}, {Tensor::Scalar(1.f)});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_NE(out.status().message().find("Softmax"), std::string::npos) << out.status();
}

// loss[r] = -sum(labels * log_softmax(features)), backprop = softmax - labels.
void ReferenceCrossEntropy(const std::vector<double>& x, const std::vector<double>& p,
                           int64_t classes, std::vector<double>* loss,
                           std::vector<double>* backprop) {
  const std::vector<double> log_p = ReferenceSoftmax(x, classes, true);
  loss->assign(x.size() / classes, 0);
  backprop->resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    (*loss)[i / classes] -= p[i] * log_p[i];
    (*backprop)[i] = std::exp(log_p[i]) - p[i];
  }
}

// `values` of shape [rows, cols] broadcast to [r, c].
std::vector<double> Broadcast(const std::vector<double>& values, int64_t rows, int64_t cols,
                              int64_t r, int64_t c) {
  std::vector<double> out(r * c);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      out[i * c + j] = values[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
  return out;
}

TEST(SoftmaxCrossEntropyTest, MatchesDefinitionWithBroadcasting) {
  struct Case {
    int64_t feature_rows, feature_cols, label_rows, label_cols;
  };
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    for (const Case& c : {Case{4, 10, 4, 10}, Case{1, 6, 3, 6}, Case{3, 6, 1, 6}, Case{3, 1, 3, 5},
                          Case{300, 40, 300, 40}, Case{0, 4, 0, 4}}) {
      SCOPED_TRACE(StrCat(c.feature_rows, "x", c.feature_cols, " vs ", c.label_rows, "x",
                          c.label_cols, " ", dtype));
      const int64_t rows = std::max(c.feature_rows, c.label_rows);
      const int64_t classes = std::max(c.feature_cols, c.label_cols);
      const Tensor features =
          RandomTensor(dtype, TensorShape({c.feature_rows, c.feature_cols}), 1, -3, 3);
      const Tensor labels = RandomTensor(dtype, TensorShape({c.label_rows, c.label_cols}), 2, 0, 1);
      auto out = RunKernel("SoftmaxCrossEntropyWithLogits", {{"T", dtype}}, {features, labels});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].shape(), TensorShape({rows}));
      ASSERT_EQ((*out)[1].shape(), TensorShape({rows, classes}));
      std::vector<double> loss, backprop;
      ReferenceCrossEntropy(
          Broadcast(ToDoubles(features), c.feature_rows, c.feature_cols, rows, classes),
          Broadcast(ToDoubles(labels), c.label_rows, c.label_cols, rows, classes), classes, &loss,
          &backprop);
      ExpectAllNear((*out)[0], loss, Tolerance(dtype) * 10, "loss",
                    std::vector<double>(loss.size(), 3.0 * classes));
      ExpectAllNear((*out)[1], backprop, Tolerance(dtype), "backprop",
                    std::vector<double>(backprop.size(), 1.0));
    }
  }
}

TEST(SoftmaxCrossEntropyTest, BackpropIsTheGradientOfTheLoss) {
  const TensorShape shape({3, 5});
  const std::vector<double> x = RandomValues(15, 3, -2, 2);
  // Label rows are distributions (backprop = softmax - labels assumes so).
  std::vector<double> p = RandomValues(15, 4, 0, 1);
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    for (int c = 0; c < 5; ++c) sum += p[r * 5 + c];
    for (int c = 0; c < 5; ++c) p[r * 5 + c] /= sum;
  }
  const Tensor labels = MakeTensor(DT_DOUBLE, shape, p);
  auto total_loss = [&](const std::vector<double>& v) {
    auto out = RunKernel("SoftmaxCrossEntropyWithLogits", {{"T", DT_DOUBLE}},
                         {MakeTensor(DT_DOUBLE, shape, v), labels});
    CHECK(out.ok()) << out.status();
    return Dot((*out)[0], {1, 1, 1});
  };
  auto out = RunKernel("SoftmaxCrossEntropyWithLogits", {{"T", DT_DOUBLE}},
                       {MakeTensor(DT_DOUBLE, shape, x), labels});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectAllNear((*out)[1], NumericGradient(total_loss, x, 1e-4), 1e-8, "backprop");
}

TEST(SparseSoftmaxCrossEntropyTest, MatchesDenseLabels) {
  for (DType dtype : {DT_FLOAT, DT_DOUBLE}) {
    for (DType label_type : {DT_INT32, DT_INT64}) {
      const int64_t rows = 6, classes = 7;
      const Tensor features = RandomTensor(dtype, TensorShape({rows, classes}), 5, -4, 4);
      std::vector<double> one_hot(rows * classes, 0);
      Tensor labels(label_type, TensorShape({rows}));
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t label = (r * 5 + 2) % classes;
        if (label_type == DT_INT32)
          labels.data<int32_t>()[r] = static_cast<int32_t>(label);
        else
          labels.data<int64_t>()[r] = label;
        one_hot[r * classes + label] = 1;
      }
      auto out = RunKernel("SparseSoftmaxCrossEntropyWithLogits",
                           {{"T", dtype}, {"Tlabels", label_type}}, {features, labels});
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<double> loss, backprop;
      ReferenceCrossEntropy(ToDoubles(features), one_hot, classes, &loss, &backprop);
      ExpectAllNear((*out)[0], loss, Tolerance(dtype) * 10, "loss");
      ExpectAllNear((*out)[1], backprop, Tolerance(dtype), "backprop",
                    std::vector<double>(backprop.size(), 1.0));
    }
  }
  // Huge logits: finite loss.
  auto out = RunKernel("SparseSoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}},
                       {MakeTensor(DT_FLOAT, TensorShape({1, 3}), {1e4, -1e4, 0}),
                        Tensor::FromVector<int64_t>({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR(ToDoubles((*out)[0])[0], 2e4, 1e-2);
}

TEST(SparseSoftmaxCrossEntropyTest, LabelsOutOfRangeAreInvalidArguments) {
  const Tensor features = RandomTensor(DT_FLOAT, TensorShape({3, 4}), 1);
  for (const Tensor& labels :
       {Tensor::FromVector<int32_t>({0, 4, 1}), Tensor::FromVector<int32_t>({0, 1, -1})}) {
    auto out = RunKernel("SparseSoftmaxCrossEntropyWithLogits",
                         {{"T", DT_FLOAT}, {"Tlabels", DT_INT32}}, {features, labels});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
    const std::string& message = out.status().message();
    const int32_t bad = labels.data<int32_t>()[1] == 4 ? 4 : -1;
    const int index = bad == 4 ? 1 : 2;
    EXPECT_NE(message.find(StrCat("labels[", index, "] = ", bad)), std::string::npos) << message;
    EXPECT_NE(message.find("[0, 4)"), std::string::npos) << message;
  }
  // A huge int64 label is caught too, and no class means no valid label.
  auto out = RunKernel("SparseSoftmaxCrossEntropyWithLogits", {{"T", DT_DOUBLE}},
                       {RandomTensor(DT_DOUBLE, TensorShape({1, 4}), 1),
                        Tensor::FromVector<int64_t>({int64_t{1} << 40})});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  out = RunKernel("SparseSoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({2, 0})), Tensor::FromVector<int64_t>({0, 0})});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  // Empty batch: nothing to check, empty outputs.
  out = RunKernel("SparseSoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({0, 3})), Tensor(DT_INT64, TensorShape({0}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape(), TensorShape({0, 3}));
}

TEST(SoftmaxCrossEntropyTest, BadShapes) {
  auto out =
      RunKernel("SoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}},
                {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({2, 4}))});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status()));
  EXPECT_NE(out.status().message().find("[2,4]"), std::string::npos) << out.status();
  out = RunKernel("SoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({6})), Tensor(DT_FLOAT, TensorShape({6}))});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  out = RunKernel("SoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({2, 0})), Tensor(DT_FLOAT, TensorShape({2, 0}))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("at least one class"), std::string::npos) << out.status();
  out = RunKernel("SparseSoftmaxCrossEntropyWithLogits", {{"T", DT_FLOAT}},
                  {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor::FromVector<int64_t>({0, 1, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("SparseSoftmaxCrossEntropyWithLogits"), std::string::npos);
}

}  // namespace
}  // namespace weir
