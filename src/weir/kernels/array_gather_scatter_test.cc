// GatherV2, GatherNd, ScatterNd and OneHot: references by index loops, and
// bad indices reported by position and value.
#include <gtest/gtest.h>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

Tensor Gather(const Tensor& params, const Tensor& indices, int32_t axis, int64_t batch_dims = 0) {
  return Run1("GatherV2",
              {{"Tparams", params.dtype()}, {"Tindices", indices.dtype()}, {"Taxis", DT_INT32},
               {"batch_dims", batch_dims}},
              {params, indices, I32Scalar(axis)});
}

// out[p..., i..., q...] = params[p..., indices[i...], q...].
template <typename T>
Tensor ReferenceGather(const Tensor& params, const Tensor& indices, int axis) {
  std::vector<int64_t> dims(params.shape().dim_sizes().begin(),
                            params.shape().dim_sizes().begin() + axis);
  dims.insert(dims.end(), indices.shape().dim_sizes().begin(), indices.shape().dim_sizes().end());
  dims.insert(dims.end(), params.shape().dim_sizes().begin() + axis + 1,
              params.shape().dim_sizes().end());
  TensorShape shape(dims);
  Tensor out(params.dtype(), shape);
  for (int64_t o = 0; o < out.NumElements(); ++o) {
    std::vector<int64_t> oi = Unravel(o, shape);
    std::vector<int64_t> ii(oi.begin() + axis, oi.begin() + axis + indices.dims());
    std::vector<int64_t> pi(oi.begin(), oi.begin() + axis);
    pi.push_back(indices.data<int32_t>()[Ravel(ii, indices.shape())]);
    pi.insert(pi.end(), oi.begin() + axis + indices.dims(), oi.end());
    out.data<T>()[o] = params.data<T>()[Ravel(pi, params.shape())];
  }
  return out;
}

TEST(GatherV2OpTest, HandComputed) {
  Tensor p = Iota<float>(TensorShape({3, 2}));  // 0 1 / 2 3 / 4 5
  ExpectTensor<float>(Gather(p, I32({2, 0, 2}), 0), TensorShape({3, 2}), {4, 5, 0, 1, 4, 5});
  ExpectTensor<float>(Gather(p, I32({1}), 1), TensorShape({3, 1}), {1, 3, 5});
  ExpectTensor<float>(Gather(p, I32({1, 0}), -1), TensorShape({3, 2}), {1, 0, 3, 2, 5, 4});
  ExpectTensor<float>(Gather(p, I32Scalar(1), 0), TensorShape({2}), {2, 3});
  ExpectTensor<float>(Gather(p, I64({2}), 0), TensorShape({1, 2}), {4, 5});
  ExpectTensor<float>(Gather(p, I32({}), 0), TensorShape({0, 2}), {});
  ExpectTensor<std::string>(Gather(StringIota(TensorShape({3})), I32({2, 2, 0}), 0),
                            TensorShape({3}), {"s2", "s2", "s0"});
}

TEST(GatherV2OpTest, EveryAxisMatchesReference) {
  Tensor p = Iota<int32_t>(TensorShape({4, 3, 5}));
  Tensor indices = Tensor::FromVector<int32_t>({0, 2, 1, 1, 2, 0}, TensorShape({2, 3}));
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_TRUE(Gather(p, indices, axis).ContentEquals(ReferenceGather<int32_t>(p, indices, axis)))
        << "axis " << axis;
  }
  Tensor big = Iota<float>(TensorShape({1000, 64}));
  std::vector<int32_t> rows;
  for (int i = 0; i < 5000; ++i) rows.push_back((i * 7919) % 1000);
  Tensor many = I32(rows);
  EXPECT_TRUE(Gather(big, many, 0).ContentEquals(ReferenceGather<float>(big, many, 0)));
  EXPECT_TRUE(Gather(Iota<float>(TensorShape({64, 1000})), many, 1)
                  .ContentEquals(ReferenceGather<float>(Iota<float>(TensorShape({64, 1000})), many,
                                                        1)));
}

TEST(GatherV2OpTest, BatchDims) {
  Tensor p = Iota<int32_t>(TensorShape({2, 3}));  // 0 1 2 / 3 4 5
  Tensor indices = Tensor::FromVector<int32_t>({2, 0, 1, 1}, TensorShape({2, 2}));
  ExpectTensor<int32_t>(Gather(p, indices, 1, 1), TensorShape({2, 2}), {2, 0, 4, 4});
  ExpectTensor<int32_t>(Gather(p, indices, 1, -1), TensorShape({2, 2}), {2, 0, 4, 4});
  RunError("GatherV2", {{"Tparams", DT_INT32}, {"Tindices", DT_INT32}, {"Taxis", DT_INT32},
                        {"batch_dims", 1}},
           {p, I32({0, 1, 2}), I32Scalar(1)}, {"GatherV2", "batch dim 0", "[2,3]", "[3]"});
  RunError("GatherV2", {{"Tparams", DT_INT32}, {"Tindices", DT_INT32}, {"Taxis", DT_INT32},
                        {"batch_dims", 2}},
           {p, indices, I32Scalar(1)}, {"GatherV2", "batch_dims 2"});
}

TEST(GatherV2OpTest, OutOfRangeIndicesAreErrorsNamingPositionAndValue) {
  Tensor p = Iota<float>(TensorShape({3, 2}));
  AttrMap attrs = {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}, {"Taxis", DT_INT32}};
  Tensor indices = Tensor::FromVector<int32_t>({0, 1, 2, 3}, TensorShape({2, 2}));
  RunError("GatherV2", attrs, {p, indices, I32Scalar(0)},
           {"GatherV2", "indices[1,1] = 3", "[0, 3)", "[3,2]", "[2,2]"});
  RunError("GatherV2", attrs, {p, I32({-1}), I32Scalar(0)}, {"GatherV2", "indices[0] = -1"});
  RunError("GatherV2", attrs, {p, I32({2}), I32Scalar(1)}, {"indices[0] = 2", "[0, 2)"});
  AttrMap attrs64 = {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT64}, {"Taxis", DT_INT32}};
  RunError("GatherV2", attrs64, {p, I64({int64_t{1} << 40}), I32Scalar(0)},
           {"indices[0] = 1099511627776"});
  RunError("GatherV2", attrs, {p, I32({0}), I32Scalar(2)}, {"GatherV2", "axis 2", "[3,2]"});
  RunError("GatherV2", attrs, {Tensor::Scalar<float>(1), I32({0}), I32Scalar(0)},
           {"GatherV2", "rank at least 1"});
  // Gathering from an empty dim: every index is out of range.
  RunError("GatherV2", attrs, {Tensor(DT_FLOAT, TensorShape({0, 2})), I32({0}), I32Scalar(0)},
           {"indices[0] = 0", "[0, 0)"});
}

Tensor GatherNd(const Tensor& params, const Tensor& indices, std::string policy = "") {
  return Run1("GatherNd", {{"Tparams", params.dtype()}, {"Tindices", indices.dtype()},
                           {"bad_indices_policy", policy}},
              {params, indices});
}

TEST(GatherNdOpTest, ElementsSlicesAndEmptyTuples) {
  Tensor p = Iota<float>(TensorShape({3, 2}));  // 0 1 / 2 3 / 4 5
  ExpectTensor<float>(GatherNd(p, Tensor::FromVector<int32_t>({2, 1, 0, 0}, TensorShape({2, 2}))),
                      TensorShape({2}), {5, 0});
  ExpectTensor<float>(GatherNd(p, Tensor::FromVector<int64_t>({1, 2}, TensorShape({2, 1}))),
                      TensorShape({2, 2}), {2, 3, 4, 5});
  ExpectTensor<float>(GatherNd(p, I32({1, 0})), TensorShape(), {2});
  // A tuple of no indices selects all of params.
  ExpectTensor<float>(GatherNd(p, Tensor(DT_INT32, TensorShape({2, 0}))), TensorShape({2, 3, 2}),
                      {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  ExpectTensor<float>(GatherNd(p, Tensor(DT_INT32, TensorShape({0, 2}))), TensorShape({0}), {});
  ExpectTensor<std::string>(
      GatherNd(StringIota(TensorShape({2, 2})),
               Tensor::FromVector<int32_t>({1, 1, 0, 1}, TensorShape({2, 1, 2}))),
      TensorShape({2, 1}), {"s3", "s1"});
}

TEST(GatherNdOpTest, BadIndices) {
  Tensor p = Iota<float>(TensorShape({3, 2}));
  Tensor bad = Tensor::FromVector<int32_t>({0, 0, 1, 2}, TensorShape({2, 2}));
  RunError("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}}, {p, bad},
           {"GatherNd", "indices[1] = [1,2]", "[3,2]"});
  RunError("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}},
           {p, Tensor::FromVector<int32_t>({-1}, TensorShape({1, 1}))},
           {"GatherNd", "indices[0] = [-1]"});
  ExpectTensor<float>(GatherNd(p, bad, "IGNORE"), TensorShape({2}), {0, 0});
  RunError("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}},
           {p, Tensor::FromVector<int32_t>({0, 0, 0}, TensorShape({1, 3}))},
           {"GatherNd", "is 3", "only 2 dims"});
  RunError("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT32}}, {p, I32Scalar(0)},
           {"GatherNd", "rank at least 1"});
}

Tensor ScatterNd(const Tensor& indices, const Tensor& updates, std::vector<int32_t> shape,
                 std::string policy = "") {
  return Run1("ScatterNd", {{"T", updates.dtype()}, {"Tindices", DT_INT32},
                            {"bad_indices_policy", policy}},
              {indices, updates, I32(shape)});
}

TEST(ScatterNdOpTest, DuplicatesAreSummed) {
  Tensor indices = Tensor::FromVector<int32_t>({4, 3, 1, 7, 1}, TensorShape({5, 1}));
  Tensor updates = Tensor::FromVector<float>({9, 10, 11, 12, 100});
  ExpectTensor<float>(ScatterNd(indices, updates, {8}), TensorShape({8}),
                      {0, 111, 0, 10, 9, 0, 0, 12});
  Tensor ints = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5});
  ExpectTensor<int32_t>(ScatterNd(indices, ints, {8}), TensorShape({8}), {0, 8, 0, 2, 1, 0, 0, 4});
  Tensor bools = Tensor::FromVector<bool>({false, true, false, false, false});
  ExpectTensor<bool>(ScatterNd(indices, bools, {8}), TensorShape({8}),
                     {false, false, false, true, false, false, false, false});
}

TEST(ScatterNdOpTest, SlicesAndEmpty) {
  Tensor indices = Tensor::FromVector<int32_t>({2, 0, 2}, TensorShape({3, 1}));
  Tensor updates = Iota<double>(TensorShape({3, 2}), 1);  // 1 2 / 3 4 / 5 6
  ExpectTensor<double>(ScatterNd(indices, updates, {3, 2}), TensorShape({3, 2}),
                       {3, 4, 0, 0, 6, 8});
  Tensor pairs = Tensor::FromVector<int32_t>({0, 1, 1, 0}, TensorShape({2, 2}));
  ExpectTensor<int64_t>(ScatterNd(pairs, Tensor::FromVector<int64_t>({5, 6}), {2, 2}),
                        TensorShape({2, 2}), {0, 5, 6, 0});
  ExpectTensor<float>(ScatterNd(Tensor(DT_INT32, TensorShape({0, 1})),
                                Tensor(DT_FLOAT, TensorShape({0})), {3}),
                      TensorShape({3}), {0, 0, 0});
}

TEST(ScatterNdOpTest, BadIndicesAndShapes) {
  Tensor indices = Tensor::FromVector<int32_t>({1, 5}, TensorShape({2, 1}));
  Tensor updates = Tensor::FromVector<float>({1, 2});
  RunError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}}, {indices, updates, I32({4})},
           {"ScatterNd", "indices[1] = [5]", "[4]"});
  ExpectTensor<float>(ScatterNd(indices, updates, {4}, "IGNORE"), TensorShape({4}), {0, 1, 0, 0});
  RunError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
           {indices, Tensor::FromVector<float>({1, 2, 3}), I32({4})},
           {"ScatterNd", "updates has shape [3]", "[2,1]"});
  RunError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
           {Tensor::FromVector<int32_t>({0, 0}, TensorShape({1, 2})),
            Tensor::FromVector<float>({1}), I32({4})},
           {"ScatterNd", "only 1 dims"});
  RunError("ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT32}},
           {indices, updates, I32({-4})}, {"ScatterNd", "negative"});
}

Tensor OneHot(const Tensor& indices, int32_t depth, float on, float off, int64_t axis) {
  return Run1("OneHot", {{"T", DT_FLOAT}, {"TI", indices.dtype()}, {"axis", axis}},
              {indices, I32Scalar(depth), Tensor::Scalar<float>(on), Tensor::Scalar<float>(off)});
}

TEST(OneHotOpTest, Axes) {
  Tensor indices = Tensor::FromVector<int64_t>({0, 2, -1, 1});
  ExpectTensor<float>(OneHot(indices, 3, 5, 0, -1), TensorShape({4, 3}),
                      {5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 0});
  ExpectTensor<float>(OneHot(indices, 3, 1, -1, 0), TensorShape({3, 4}),
                      {1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1});
  Tensor m = Tensor::FromVector<int32_t>({0, 1, 1, 0}, TensorShape({2, 2}));
  ExpectTensor<float>(OneHot(m, 2, 1, 0, 1), TensorShape({2, 2, 2}), {1, 0, 0, 1, 0, 1, 1, 0});
  ExpectTensor<float>(OneHot(Tensor::Scalar<uint8_t>(1), 2, 1, 0, -1), TensorShape({2}), {0, 1});
  ExpectTensor<float>(OneHot(Tensor::FromVector<int8_t>({3}), 3, 1, 0, -1), TensorShape({1, 3}),
                      {0, 0, 0});
  ExpectTensor<float>(OneHot(indices, 0, 1, 0, -1), TensorShape({4, 0}), {});
  Tensor s = Run1("OneHot", {{"T", DT_STRING}, {"TI", DT_INT32}},
                  {I32({1}), I32Scalar(2), Tensor::Scalar<std::string>("on"),
                   Tensor::Scalar<std::string>("off")});
  ExpectTensor<std::string>(s, TensorShape({1, 2}), {"off", "on"});
}

TEST(OneHotOpTest, Errors) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"TI", DT_INT32}};
  RunError("OneHot", attrs,
           {I32({0}), I32Scalar(-2), Tensor::Scalar<float>(1), Tensor::Scalar<float>(0)},
           {"OneHot", "depth -2"});
  attrs["axis"] = 2;
  RunError("OneHot", attrs,
           {I32({0}), I32Scalar(2), Tensor::Scalar<float>(1), Tensor::Scalar<float>(0)},
           {"OneHot", "axis 2", "[1]"});
  attrs["axis"] = -1;
  RunError("OneHot", attrs,
           {I32({0}), I32Scalar(2), Tensor::FromVector<float>({1}), Tensor::Scalar<float>(0)},
           {"OneHot", "scalars"});
}

}  // namespace
}  // namespace weir
