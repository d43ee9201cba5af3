// Gradients of the segment reductions, the scans and TopKV2 against finite
// differences: dropped (negative) ids, empty segments, ids of rank 2,
// products with zeros, ties of max/min split evenly, every scan mode.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
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

TEST(SegmentGradientsTest, UnsortedSegmentReductions) {
  const Tensor x = DistinctValues({6, 3});
  for (const char* op :
       {"UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"}) {
    SCOPED_TRACE(op);
    // Row 2 dropped, segment 3 empty (max/min give the lowest/highest value
    // there, which the weights multiply but nothing differentiates).
    ExpectGradientsMatch({x}, [op](const Scope& s, const std::vector<Output>& in) {
      return AddOp(s, op, {in[0], Ints(s, {0, 2, -1, 0, 1, 2}), ops::Const(s, 3)}).output(0);
    });
    // Ids of rank 2 over data [2, 3, 3].
    ExpectGradientsMatch({DistinctValues({2, 3, 3})}, [op](const Scope& s,
                                                           const std::vector<Output>& in) {
      return AddOp(s, op, {in[0], Ints(s, {1, 0, 1, -1, 0, 0}, {2, 3}), ops::Const(s, int64_t{2})})
          .output(0);
    });
  }
}

TEST(SegmentGradientsTest, ProdWithZeros) {
  // Segment 0 holds one zero, segment 1 two, segment 2 none.
  const Tensor x = Values({0, 2, -1.5, 0, 0.5, 0, 3, 1.25}, {8});
  ExpectGradientsMatch({x}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::UnsortedSegmentProd(s, in[0], Ints(s, {0, 0, 0, 1, 1, 1, 2, 2}), 3);
  });
}

TEST(SegmentGradientsTest, MaxTiesShareTheGradient) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_DOUBLE);
  Output y = ops::UnsortedSegmentMax(root, x, Ints(root, {0, 0, 0, 1}), 2);
  std::vector<Output> grads;
  ASSERT_TRUE(AddSymbolicGradients(root, {y}, {x}, &grads).ok());
  auto session = Session::New(SessionOptions());
  ASSERT_TRUE((*session)->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  Status status = (*session)->Run({{"x", Values({2, 1, 2, 5}, {4})}}, {grads[0].name()}, {}, &out);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out[0].data<double>()[0], 0.5);
  EXPECT_EQ(out[0].data<double>()[1], 0.0);
  EXPECT_EQ(out[0].data<double>()[2], 0.5);
  EXPECT_EQ(out[0].data<double>()[3], 1.0);
}

TEST(SegmentGradientsTest, SegmentSum) {
  ExpectGradientsMatch({DistinctValues({5, 2})}, [](const Scope& s, const std::vector<Output>& in) {
    return ops::SegmentSum(s, in[0], Ints(s, {0, 0, 2, 3, 3}));
  });
}

TEST(SegmentGradientsTest, ScansInEveryMode) {
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      for (int axis : {0, 1, -1}) {
        SCOPED_TRACE(StrCat("exclusive ", exclusive, " reverse ", reverse, " axis ", axis));
        AttrMap attrs = {{"exclusive", exclusive}, {"reverse", reverse}};
        ExpectGradientsMatch({DistinctValues({3, 4})},
                             [&](const Scope& s, const std::vector<Output>& in) {
                               return ops::Cumsum(s, in[0], axis, attrs);
                             });
        // Cumprod's formula divides by x: no zeros in DistinctValues.
        ExpectGradientsMatch({DistinctValues({3, 4})},
                             [&](const Scope& s, const std::vector<Output>& in) {
                               return ops::Cumprod(s, in[0], axis, attrs);
                             });
      }
    }
  }
}

TEST(SegmentGradientsTest, TopK) {
  for (int k : {1, 3, 5}) {
    SCOPED_TRACE(k);
    ExpectGradientsMatch({DistinctValues({2, 3, 5})},
                         [k](const Scope& s, const std::vector<Output>& in) {
                           return ops::TopKV2(s, in[0], k).output(0);
                         });
  }
  ExpectFloatGradientsMatch(
      {ToFloat(DistinctValues({4, 6}))}, [](const Scope& s, const std::vector<Output>& in) {
        return ops::TopKV2(s, in[0], int64_t{2}, {{"index_type", DT_INT64}}).output(0);
      });
}

}  // namespace
}  // namespace weir
