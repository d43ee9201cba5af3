// Sparse (IndexedSlices) gradients of gathers: kept sparse when every
// partial gradient of x is, densified when mixed or flowing on, and equal
// to the dense gradient either way.
#include <gtest/gtest.h>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"
#include "weir/train/gradients.h"
#include "weir/train/gradients_test_util.h"

namespace weir {
namespace {

class SparseGradientsTest : public ::testing::Test {
 protected:
  // Runs `names` with `feeds` (after running `init`, when given).
  std::vector<Tensor> Run(const std::vector<std::string>& names,
                          const std::vector<std::pair<std::string, Tensor>>& feeds = {},
                          const std::vector<std::string>& init = {}) {
    if (!session_) {
      EXPECT_TRUE(root_.ok()) << root_.status();
      StatusOr<std::unique_ptr<Session>> session = Session::New(SessionOptions());
      EXPECT_TRUE(session.ok());
      session_ = std::move(*session);
      Status s = session_->Create(root_.ToGraphDef());
      EXPECT_TRUE(s.ok()) << s;
      std::vector<Tensor> unused;
      if (!init.empty()) EXPECT_TRUE(session_->Run({}, {}, init, &unused).ok());
    }
    std::vector<Tensor> out;
    if (names.empty()) return out;
    Status s = session_->Run(feeds, names, {}, &out);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  // The dense tensor of `shape` that `sparse` stands for, added up here.
  std::vector<double> DensifyHere(const Gradient& g, int64_t rows, int64_t cols,
                                  const std::vector<std::pair<std::string, Tensor>>& feeds = {}) {
    std::vector<Tensor> parts = Run({g.sparse.values.name(), g.sparse.indices.name(), g.sparse.dense_shape.name()}, feeds);
    std::vector<double> dense(rows * cols, 0.0);
    EXPECT_EQ(parts[2].data<int32_t>()[0], rows);
    EXPECT_EQ(parts[2].data<int32_t>()[1], cols);
    for (int64_t i = 0; i < parts[1].NumElements(); ++i) {
      int64_t row = parts[1].dtype() == DT_INT32 ? parts[1].data<int32_t>()[i] : parts[1].data<int64_t>()[i];
      for (int64_t c = 0; c < cols; ++c) dense[row * cols + c] += parts[0].data<double>()[i * cols + c];
    }
    return dense;
  }

  static std::vector<double> Flat(const Tensor& t) {
    return std::vector<double>(t.data<double>(), t.data<double>() + t.NumElements());
  }

  Scope root_ = Scope::NewRootScope();
  std::unique_ptr<Session> session_;
};

TEST_F(SparseGradientsTest, GatherOnAxisZeroIsSparseAndRepeatsAdd) {
  auto params = ops::Placeholder(root_.WithOpName("params"), DT_DOUBLE, {{"shape", PartialShape({5, 3})}});
  // Row 1 twice in one gather, row 4 in both: the two gathers' rows are
  // concatenated, still sparse.
  auto a = ops::GatherV2(root_, params, ops::Const(root_, {1, 3, 1}), 0);
  auto b = ops::GatherV2(root_, params, ops::Const(root_, Tensor::FromVector<int64_t>({0, 4, 4, 2}, {2, 2})), 0);
  auto y = ops::AddV2(root_, ops::Sum(root_, ops::Mul(root_, a, 2.0), {0, 1}),
                      ops::Sum(root_, ops::Mul(root_, b, b), {0, 1, 2}));
  std::vector<Gradient> sparse;
  ASSERT_TRUE(AddSymbolicGradients(root_, {y}, {params}, {}, &sparse).ok());
  ASSERT_TRUE(sparse[0].is_sparse);
  std::vector<Output> dense;
  ASSERT_TRUE(AddSymbolicGradients(root_, {y}, {params}, {}, &dense).ok());
  Tensor p = DistinctValues({5, 3});
  std::vector<double> expected(15, 0.0);
  for (int c = 0; c < 3; ++c) {
    expected[1 * 3 + c] += 4;  // 2 per use, used twice
    expected[3 * 3 + c] += 2;
    for (int row : {0, 4, 4, 2}) expected[row * 3 + c] += 2 * p.data<double>()[row * 3 + c];
  }
  std::vector<double> from_sparse = DensifyHere(sparse[0], 5, 3, {{"params", p}});
  std::vector<double> from_dense = Flat(Run({dense[0].name()}, {{"params", p}})[0]);
  for (int i = 0; i < 15; ++i) {
    EXPECT_NEAR(from_sparse[i], expected[i], 1e-12) << i;
    EXPECT_NEAR(from_dense[i], expected[i], 1e-12) << i;
  }
}

TEST_F(SparseGradientsTest, MixedOrFlowingOnIsDense) {
  auto params = ops::Placeholder(root_.WithOpName("params"), DT_DOUBLE, {{"shape", PartialShape({4, 2})}});
  auto gathered = ops::GatherV2(root_, params, ops::Const(root_, {3, 0, 3}), 0);
  // Mixed: a dense use of params too.
  auto mixed = ops::AddV2(root_, ops::Sum(root_, gathered, {0, 1}), ops::L2Loss(root_, params));
  // Flowing on: the gather reads Neg(params), so its rows must pass Neg's
  // (dense) gradient function.
  auto through = ops::Sum(root_, ops::GatherV2(root_, ops::Neg(root_, params), ops::Const(root_, {1, 1}), 0), {0, 1});
  std::vector<Gradient> g_mixed, g_through;
  ASSERT_TRUE(AddSymbolicGradients(root_, {mixed}, {params}, {}, &g_mixed).ok());
  ASSERT_TRUE(AddSymbolicGradients(root_, {through}, {params}, {}, &g_through).ok());
  ASSERT_FALSE(g_mixed[0].is_sparse);
  ASSERT_FALSE(g_through[0].is_sparse);
  Tensor p = DistinctValues({4, 2});
  std::vector<Tensor> out = Run({g_mixed[0].dense.name(), g_through[0].dense.name()}, {{"params", p}});
  for (int row = 0; row < 4; ++row) {
    for (int c = 0; c < 2; ++c) {
      const double count = row == 3 ? 2 : row == 0 ? 1 : 0;
      EXPECT_NEAR(out[0].data<double>()[row * 2 + c], count + p.data<double>()[row * 2 + c], 1e-12);
      EXPECT_NEAR(out[1].data<double>()[row * 2 + c], row == 1 ? -2 : 0, 1e-12);
    }
  }
  // And the dense overloads agree with finite differences.
  ExpectGradientsMatch({p}, [](const Scope& s, const std::vector<Output>& in) {
    auto g = ops::GatherV2(s, in[0], ops::Const(s, {3, 0, 3}), 0);
    return ops::AddV2(s, ops::Sum(s, ops::Mul(s, g, g), {0, 1}), ops::L2Loss(s, in[0]));
  });
}

TEST_F(SparseGradientsTest, VariableHandleAndReadValue) {
  auto var = ops::VarHandleOp(root_.WithOpName("var"), DT_DOUBLE, PartialShape({4, 2}));
  Tensor init = DistinctValues({4, 2});
  auto assign = ops::AssignVariableOp(root_.WithOpName("init"), var, ops::Const(root_, init));
  auto rows = ops::ResourceGather(root_, var, ops::Const(root_, {2, 0, 2}), DT_DOUBLE);
  auto y = ops::Sum(root_, ops::Mul(root_, rows, rows), {0, 1});
  // With respect to the handle: sparse from ResourceGather alone ...
  std::vector<Gradient> by_handle, mixed, by_value;
  ASSERT_TRUE(AddSymbolicGradients(root_, {y}, {var}, {}, &by_handle).ok());
  ASSERT_TRUE(by_handle[0].is_sparse);
  // ... dense once a read of the whole variable joins in.
  auto value = ops::ReadVariableOp(root_, var, DT_DOUBLE);
  auto y_mixed = ops::AddV2(root_, y, ops::L2Loss(root_, value));
  ASSERT_TRUE(AddSymbolicGradients(root_, {y_mixed}, {var}, {}, &mixed).ok());
  ASSERT_FALSE(mixed[0].is_sparse);
  // GatherV2 of the read value, with respect to the read value: sparse.
  auto y_value = ops::Sum(root_, ops::GatherV2(root_, value, ops::Const(root_, {1, 1, 3}), 0), {0, 1});
  ASSERT_TRUE(AddSymbolicGradients(root_, {y_value}, {value}, {}, &by_value).ok());
  ASSERT_TRUE(by_value[0].is_sparse);

  Run({}, {}, {"init"});
  std::vector<double> sparse = DensifyHere(by_handle[0], 4, 2);
  std::vector<double> dense = Flat(Run({mixed[0].dense.name()})[0]);
  std::vector<double> of_value = DensifyHere(by_value[0], 4, 2);
  for (int row = 0; row < 4; ++row) {
    for (int c = 0; c < 2; ++c) {
      const double v = init.data<double>()[row * 2 + c];
      const double expected = row == 2 ? 4 * v : row == 0 ? 2 * v : 0;
      EXPECT_NEAR(sparse[row * 2 + c], expected, 1e-12);
      EXPECT_NEAR(dense[row * 2 + c], expected + v, 1e-12);
      EXPECT_NEAR(of_value[row * 2 + c], row == 1 ? 2 : row == 3 ? 1 : 0, 1e-12);
    }
  }
}

}  // namespace
}  // namespace weir
