// ResourceScatter{Mul,Div,Min,Max} and ResourceScatterNd{Update,Add,Sub}
// (what TF1's ScatterMul... and ScatterNdUpdate... run as on import) against
// values worked out by hand, and their errors: integer division by zero,
// indices out of range, updates of the wrong shape, arithmetic on half.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/graph/scope.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/const_op.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

// A variable set to `initial`, updated once by `op` with `indices` and
// `updates`; gives the variable's value after, or the update's error.
template <typename T, typename Index = int32_t>
StatusOr<std::vector<T>> Scatter(const std::string& op, const std::vector<T>& initial,
                                 const TensorShape& shape, const std::vector<Index>& indices,
                                 const TensorShape& indices_shape, const std::vector<T>& updates,
                                 const TensorShape& updates_shape, AttrMap attrs = {}) {
  RegisterAllOps();
  RegisterAllKernels();
  Scope root = Scope::NewRootScope();
  const DType dtype = DTypeOf<T>::value;
  Operation handle =
      AddOp(root.WithOpName("var"), "VarHandleOp", {},
            {{"dtype", AttrValue(dtype)}, {"shape", AttrValue(PartialShape(shape))}});
  Operation init =
      AddOp(root.WithOpName("init"), "AssignVariableOp",
            {handle.output(0), ops::Const(root, Tensor::FromVector<T>(initial, shape))});
  attrs[op.find("Nd") == std::string::npos ? "dtype" : "T"] = AttrValue(dtype);
  Operation update =
      AddOp(root.WithOpName("update"), op,
            {handle.output(0), ops::Const(root, Tensor::FromVector<Index>(indices, indices_shape)),
             ops::Const(root, Tensor::FromVector<T>(updates, updates_shape))},
            attrs);
  Operation read = AddOp(root.WithOpName("read"), "ReadVariableOp", {handle.output(0)},
                         {{"dtype", AttrValue(dtype)}});
  WEIR_RETURN_IF_ERROR(root.status());
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(SessionOptions()));
  WEIR_RETURN_IF_ERROR(session->Create(root.ToGraphDef()));
  std::vector<Tensor> out;
  WEIR_RETURN_IF_ERROR(session->Run({}, {}, {init.name()}, &out));
  Status status = session->Run({}, {}, {update.name()}, &out);
  WEIR_RETURN_IF_ERROR(session->Run({}, {read.name()}, {}, &out));
  // A failed update must leave the variable as it was.
  if (!status.ok()) {
    std::vector<T> after(out[0].data<T>(), out[0].data<T>() + out[0].NumElements());
    EXPECT_EQ(after, initial) << op << " changed the variable before failing";
    return status;
  }
  return std::vector<T>(out[0].data<T>(), out[0].data<T>() + out[0].NumElements());
}

TEST(ScatterVariableKernelsTest, RowsCombineByMulDivMinMaxRepeatsInTurn) {
  const std::vector<float> initial = {1, 2, 3, 4, 5, 6};  // [3, 2]
  const TensorShape shape({3, 2}), updates_shape({3, 2});
  const std::vector<int32_t> indices = {2, 0, 2};  // row 2 twice
  const std::vector<float> updates = {2, 0.5, -1, 10, 3, 4};
  auto run = [&](const std::string& op) {
    auto got =
        Scatter<float>(op, initial, shape, indices, TensorShape({3}), updates, updates_shape);
    EXPECT_TRUE(got.ok()) << op << ": " << got.status();
    return got.ok() ? *got : std::vector<float>{};
  };
  EXPECT_EQ(run("ResourceScatterMul"), (std::vector<float>{-1, 20, 3, 4, 30, 12}));
  EXPECT_EQ(run("ResourceScatterDiv"), (std::vector<float>{-1, 0.2f, 3, 4, 5.0f / 6, 3}));
  EXPECT_EQ(run("ResourceScatterMin"), (std::vector<float>{-1, 2, 3, 4, 2, 0.5}));
  EXPECT_EQ(run("ResourceScatterMax"), (std::vector<float>{1, 10, 3, 4, 5, 6}));
}

TEST(ScatterVariableKernelsTest, IntegerDivisionByZeroIsAnErrorBeforeAnyWrite) {
  // Row 0 divides fine, row 1 by zero: nothing is written (Scatter checks).
  auto zero = Scatter<int32_t>("ResourceScatterDiv", {6, 8}, TensorShape({2}), {0, 1},
                               TensorShape({2}), {2, 0}, TensorShape({2}));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), Code::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("ResourceScatterDiv: integer division by zero"),
            std::string::npos)
      << zero.status();
  auto nd = Scatter<int64_t>("ResourceScatterNdUpdate", {6, 8}, TensorShape({2}), {1},
                             TensorShape({1, 1}), {0}, TensorShape({1}));
  ASSERT_TRUE(nd.ok()) << "only division refuses zero: " << nd.status();
  // Truncation toward zero; the lowest value over -1 wraps to itself (no trap).
  auto ints = Scatter<int32_t>("ResourceScatterDiv", {7, -9, INT32_MIN}, TensorShape({3}),
                               {1, 0, 2}, TensorShape({3}), {2, 2, -1}, TensorShape({3}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(*ints, (std::vector<int32_t>{3, -4, INT32_MIN}));
  auto bytes = Scatter<int8_t>("ResourceScatterDiv", {-128, 100}, TensorShape({2}), {0, 1},
                               TensorShape({2}), {-1, -1}, TensorShape({2}));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, (std::vector<int8_t>{-128, -100}));
}

TEST(ScatterVariableKernelsTest, ArithmeticOnHalfIsRefusedAndUpdateCopiesIt) {
  auto add = Scatter<Eigen::half>("ResourceScatterNdAdd", {Eigen::half(1), Eigen::half(2)},
                                  TensorShape({2}), {1}, TensorShape({1, 1}), {Eigen::half(3)},
                                  TensorShape({1}));
  ASSERT_FALSE(add.ok());
  EXPECT_NE(add.status().message().find("does not support"), std::string::npos) << add.status();
  auto update = Scatter<Eigen::half>("ResourceScatterUpdate", {Eigen::half(1), Eigen::half(2)},
                                     TensorShape({2}), {1}, TensorShape({1}), {Eigen::half(3)},
                                     TensorShape({1}));
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_EQ(static_cast<float>((*update)[1]), 3.0f);
}

TEST(ScatterVariableKernelsTest, ScatterNdWritesSlicesNamedByIndexPrefixes) {
  // Variable [2, 2, 2] = 0..7; indices [2, 2] name the slices [1, 0, :] and [0, 1, :].
  std::vector<float> initial(8);
  for (int i = 0; i < 8; ++i) initial[i] = static_cast<float>(i);
  const TensorShape shape({2, 2, 2});
  const std::vector<int64_t> indices = {1, 0, 0, 1};
  const std::vector<float> updates = {10, 20, 30, 40};
  auto update = Scatter<float, int64_t>("ResourceScatterNdUpdate", initial, shape, indices,
                                        TensorShape({2, 2}), updates, TensorShape({2, 2}));
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_EQ(*update, (std::vector<float>{0, 1, 30, 40, 10, 20, 6, 7}));
  auto add = Scatter<float, int64_t>("ResourceScatterNdAdd", initial, shape, indices,
                                     TensorShape({2, 2}), updates, TensorShape({2, 2}));
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(*add, (std::vector<float>{0, 1, 32, 43, 14, 25, 6, 7}));
  auto min = Scatter<float, int64_t>("ResourceScatterNdMin", initial, shape, indices,
                                     TensorShape({2, 2}), {0, 30, 3, -1}, TensorShape({2, 2}));
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(*min, (std::vector<float>{0, 1, 2, -1, 0, 5, 6, 7}));
  auto max = Scatter<float, int64_t>("ResourceScatterNdMax", initial, shape, indices,
                                     TensorShape({2, 2}), {0, 30, 3, -1}, TensorShape({2, 2}));
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(*max, (std::vector<float>{0, 1, 3, 3, 4, 30, 6, 7}));
  // Full indices [1, 3]: single elements; repeats subtract twice.
  auto sub = Scatter<float, int64_t>("ResourceScatterNdSub", initial, shape, {1, 1, 1, 1, 1, 1},
                                     TensorShape({2, 3}), {1, 2}, TensorShape({2}));
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(sub->back(), 4);
}

TEST(ScatterVariableKernelsTest, ScatterNdErrorsNameShapesAndIndices) {
  const std::vector<float> initial = {0, 1, 2, 3};
  const TensorShape shape({2, 2});
  auto out_of_range = Scatter<float>("ResourceScatterNdUpdate", initial, shape, {0, 2},
                                     TensorShape({1, 2}), {5}, TensorShape({1}));
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_EQ(out_of_range.status().code(), Code::kInvalidArgument);
  EXPECT_NE(out_of_range.status().message().find("not in [0, 2)"), std::string::npos)
      << out_of_range.status();
  auto ignored =
      Scatter<float>("ResourceScatterNdUpdate", initial, shape, {0, 2, 1, 1}, TensorShape({2, 2}),
                     {5, 6}, TensorShape({2}), {{"bad_indices_policy", AttrValue("IGNORE")}});
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  EXPECT_EQ(*ignored, (std::vector<float>{0, 1, 2, 6}));
  auto bad_shape = Scatter<float>("ResourceScatterNdAdd", initial, shape, {0}, TensorShape({1, 1}),
                                  {1, 2, 3}, TensorShape({3}));
  ASSERT_FALSE(bad_shape.ok());
  EXPECT_NE(bad_shape.status().message().find("need [1,2]"), std::string::npos)
      << bad_shape.status();
  auto too_deep = Scatter<float>("ResourceScatterNdAdd", initial, shape, {0, 0, 0},
                                 TensorShape({1, 3}), {1}, TensorShape({1}));
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.status().message().find("longer than the rank"), std::string::npos)
      << too_deep.status();
}

}  // namespace
}  // namespace weir
