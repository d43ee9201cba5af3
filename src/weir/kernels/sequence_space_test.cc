// ReverseSequence, SpaceToBatchND, BatchToSpaceND and CheckNumerics[V2]
// against index-arithmetic references and TensorFlow's error texts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "weir/kernels/array_test_util.h"

namespace weir {
namespace {

using namespace array_test;

// The type attrs of these ops, from their inputs (the kernel tests name
// every attr).
AttrMap WithTypes(const std::string& op, AttrMap attrs, const std::vector<Tensor>& in) {
  attrs["T"] = in[0].dtype();
  const std::map<std::string, std::vector<const char*>> index_attrs = {
      {"ReverseSequence", {"Tlen"}},
      {"SpaceToBatchND", {"Tblock_shape", "Tpaddings"}},
      {"BatchToSpaceND", {"Tblock_shape", "Tcrops"}},
      {"MatrixBandPart", {"Tindex"}},
      {"Transpose", {"Tperm"}}};
  auto it = index_attrs.find(op);
  if (it != index_attrs.end()) {
    for (size_t i = 0; i < it->second.size(); ++i) attrs[it->second[i]] = in[1 + i].dtype();
  }
  return attrs;
}

Tensor RunT(const std::string& op, AttrMap attrs, std::vector<Tensor> in) {
  AttrMap typed = WithTypes(op, std::move(attrs), in);
  return Run1(op, std::move(typed), std::move(in));
}

void ErrT(const std::string& op, AttrMap attrs, std::vector<Tensor> in,
          std::initializer_list<std::string> parts) {
  AttrMap typed = WithTypes(op, std::move(attrs), in);
  RunError(op, std::move(typed), std::move(in), parts);
}

// out[..., b (batch_dim), ..., t (seq_dim), ...] = in[..., b, ..., t'] with
// t' = len[b] - 1 - t for t < len[b], else t.
template <typename T>
Tensor ReferenceReverseSequence(const Tensor& in, const std::vector<int64_t>& lengths, int seq_dim,
                                int batch_dim) {
  Tensor out(in.dtype(), in.shape());
  for (int64_t flat = 0; flat < in.NumElements(); ++flat) {
    std::vector<int64_t> index = Unravel(flat, in.shape());
    const int64_t length = lengths[index[batch_dim]];
    if (index[seq_dim] < length) index[seq_dim] = length - 1 - index[seq_dim];
    out.data<T>()[flat] = in.data<T>()[Ravel(index, in.shape())];
  }
  return out;
}

TEST(ReverseSequenceOpTest, EveryDimPairMatchesReference) {
  const TensorShape shape({3, 4, 2, 5});
  const Tensor x = Iota<float>(shape);
  for (int seq = 0; seq < 4; ++seq) {
    for (int batch = 0; batch < 4; ++batch) {
      if (seq == batch) continue;
      SCOPED_TRACE(StrCat("seq_dim ", seq, " batch_dim ", batch));
      std::vector<int64_t> lengths;
      for (int64_t b = 0; b < shape.dim_size(batch); ++b) {
        lengths.push_back((b * 3 + 1) % (shape.dim_size(seq) + 1));
      }
      Tensor y = RunT("ReverseSequence", {{"seq_dim", int64_t{seq}}, {"batch_dim", int64_t{batch}}},
                      {x, I64(lengths)});
      EXPECT_TRUE(y.ContentEquals(ReferenceReverseSequence<float>(x, lengths, seq, batch)))
          << y.DebugString(200);
    }
  }
}

TEST(ReverseSequenceOpTest, Int32LengthsStringsAndBool) {
  // TensorFlow 2.21: tf.reverse_sequence([["a","b","c"],["d","e","f"]], [2, 3], 1, 0).
  Tensor s = StringIota(TensorShape({2, 3}));
  ExpectTensor<std::string>(RunT("ReverseSequence", {{"seq_dim", int64_t{1}}}, {s, I32({2, 3})}),
                            TensorShape({2, 3}), {"s1", "s0", "s2", "s5", "s4", "s3"});
  Tensor flags(DT_BOOL, TensorShape({2, 2}));
  const bool flag_values[] = {true, false, false, true};
  std::copy(flag_values, flag_values + 4, flags.data<bool>());
  Tensor expected_flags(DT_BOOL, TensorShape({2, 2}));
  const bool expected_values[] = {false, false, true, true};
  std::copy(expected_values, expected_values + 4, expected_flags.data<bool>());
  EXPECT_TRUE(RunT("ReverseSequence", {{"seq_dim", int64_t{0}}, {"batch_dim", int64_t{1}}},
                   {flags, I32({2, 0})})
                  .ContentEquals(expected_flags));
  // Empty input, zero lengths.
  Tensor empty(DT_DOUBLE, TensorShape({2, 0}));
  EXPECT_EQ(RunT("ReverseSequence", {{"seq_dim", int64_t{1}}}, {empty, I64({0, 0})}).shape(),
            TensorShape({2, 0}));
}

TEST(ReverseSequenceOpTest, BadLengthsAndDims) {
  const Tensor x = Iota<float>(TensorShape({2, 3}));
  ErrT("ReverseSequence", {{"seq_dim", int64_t{1}}}, {x, I64({2, 4})},
       {"ReverseSequence", "seq_lengths[1] = 4", "[0, 3]"});
  ErrT("ReverseSequence", {{"seq_dim", int64_t{1}}}, {x, I32({-1, 0})}, {"seq_lengths[0] = -1"});
  ErrT("ReverseSequence", {{"seq_dim", int64_t{1}}}, {x, I64({1, 1, 1})},
       {"seq_lengths has 3 entries"});
  ErrT("ReverseSequence", {{"seq_dim", int64_t{0}}}, {x, I64({1, 1})}, {"two different dims"});
  ErrT("ReverseSequence", {{"seq_dim", int64_t{2}}}, {x, I64({1, 1})}, {"seq_dim 2"});
  ErrT("ReverseSequence", {{"seq_dim", int64_t{-1}}}, {x, I64({1, 1})}, {"seq_dim -1"});
}

// SpaceToBatchND by its definition: output [r * batch + b, q1, ..., qM, rest]
// = padded input [b, q1 * b1 + r1, ..., rest] (zero in the padding), with r
// the row-major index of (r1, ..., rM) in the blocks.
Tensor ReferenceSpaceToBatch(const Tensor& in, const std::vector<int64_t>& block,
                             const std::vector<int64_t>& pads, const TensorShape& out_shape) {
  Tensor out(DT_FLOAT, out_shape);
  const size_t m = block.size();
  const int64_t batch = in.dim_size(0);
  for (int64_t flat = 0; flat < out.NumElements(); ++flat) {
    std::vector<int64_t> o = Unravel(flat, out_shape);
    std::vector<int64_t> i = o;
    int64_t r = o[0] / batch;
    i[0] = o[0] % batch;
    bool inside = true;
    for (size_t k = m; k-- > 0;) {
      const int64_t offset = r % block[k];
      r /= block[k];
      i[k + 1] = o[k + 1] * block[k] + offset - pads[2 * k];
      inside &= i[k + 1] >= 0 && i[k + 1] < in.dim_size(static_cast<int>(k + 1));
    }
    out.data<float>()[flat] = inside ? in.data<float>()[Ravel(i, in.shape())] : 0.0f;
  }
  return out;
}

TEST(SpaceToBatchNDOpTest, MatchesReferenceAndInverts) {
  struct Case {
    TensorShape shape;
    std::vector<int64_t> block, pads;
    TensorShape out;
  };
  const Case cases[] = {
      {TensorShape({2, 4, 6, 3}), {2, 3}, {0, 0, 0, 0}, TensorShape({12, 2, 2, 3})},
      {TensorShape({2, 3, 5, 2}), {2, 2}, {1, 0, 2, 1}, TensorShape({8, 2, 4, 2})},
      {TensorShape({3, 5, 2}), {4}, {2, 1}, TensorShape({12, 2, 2})},  // a conv1d's dilation
      {TensorShape({1, 2, 2, 2, 1}), {1, 2, 1}, {0, 0, 1, 1, 0, 0}, TensorShape({2, 2, 2, 2, 1})},
      {TensorShape({2, 3}), {}, {}, TensorShape({2, 3})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.DebugString());
    const Tensor x = Iota<float>(c.shape, 1);
    const int64_t m = static_cast<int64_t>(c.block.size());
    Tensor pads = Tensor::FromVector(c.pads, TensorShape({m, 2}));
    Tensor y = RunT("SpaceToBatchND", {}, {x, I64(c.block), pads});
    ASSERT_EQ(y.shape(), c.out);
    EXPECT_TRUE(y.ContentEquals(ReferenceSpaceToBatch(x, c.block, c.pads, c.out)))
        << y.DebugString(400);
    // BatchToSpaceND with the paddings as crops gives the input back.
    Tensor back = RunT("BatchToSpaceND", {},
                       {y, I32(std::vector<int32_t>(c.block.begin(), c.block.end())), pads});
    EXPECT_TRUE(back.ContentEquals(x)) << back.DebugString(400);
  }
}

TEST(SpaceToBatchNDOpTest, StringsAndTensorFlowValues) {
  // tf.space_to_batch_nd([[[[1], [2]], [[3], [4]]]], [2, 2], [[0, 0], [0, 0]])
  // is [[[[1]]], [[[2]]], [[[3]]], [[[4]]]]; BatchToSpaceND with crops
  // [[0, 0], [0, 1]] of that is [[[[1]], [[3]]]].
  Tensor x = Tensor::FromVector(std::vector<float>{1, 2, 3, 4}, TensorShape({1, 2, 2, 1}));
  Tensor zero = Tensor::FromVector(std::vector<int32_t>{0, 0, 0, 0}, TensorShape({2, 2}));
  Tensor y = RunT("SpaceToBatchND", {}, {x, I32({2, 2}), zero});
  ExpectTensor<float>(y, TensorShape({4, 1, 1, 1}), {1, 2, 3, 4});
  Tensor crop = Tensor::FromVector(std::vector<int32_t>{0, 0, 0, 1}, TensorShape({2, 2}));
  ExpectTensor<float>(RunT("BatchToSpaceND", {}, {y, I32({2, 2}), crop}), TensorShape({1, 2, 1, 1}),
                      {1, 3});
  // Strings pad with empty strings.
  Tensor s = StringIota(TensorShape({1, 3}));
  Tensor pad = Tensor::FromVector(std::vector<int64_t>{1, 0}, TensorShape({1, 2}));
  ExpectTensor<std::string>(RunT("SpaceToBatchND", {}, {s, I64({2}), pad}), TensorShape({2, 2}),
                            {"", "s1", "s0", "s2"});
}

TEST(SpaceToBatchNDOpTest, BadArguments) {
  const Tensor x = Iota<float>(TensorShape({2, 5, 3}));
  auto table = [](std::vector<int32_t> v) {
    return Tensor::FromVector(v, TensorShape({static_cast<int64_t>(v.size() / 2), 2}));
  };
  ErrT("SpaceToBatchND", {}, {x, I32({2}), table({0, 0})},
       {"SpaceToBatchND", "not divisible by its block 2"});
  ErrT("SpaceToBatchND", {}, {x, I32({0}), table({0, 1})}, {"block_shape [0]"});
  ErrT("SpaceToBatchND", {}, {x, I32({2}), table({-1, 2})}, {"paddings [-1,2]"});
  ErrT("SpaceToBatchND", {}, {x, I32({1, 1, 1}), table({0, 0, 0, 0, 0, 0})}, {"rank >= 1 + M = 4"});
  ErrT("SpaceToBatchND", {}, {x, I32({2, 2}), table({0, 0})}, {"[M, 2]"});
  ErrT("BatchToSpaceND", {}, {x, I32({3}), table({0, 0})},
       {"BatchToSpaceND", "batch 2 is not divisible"});
  ErrT("BatchToSpaceND", {}, {x, I32({2}), table({6, 5})}, {"exceed its uncropped size"});
  // A huge padding of an empty input gives an empty output, no huge work.
  ExpectTensor<float>(
      RunT("SpaceToBatchND", {},
           {Iota<float>(TensorShape({0, 2})), I64({1}),
            Tensor::FromVector(std::vector<int64_t>{0, int64_t{1} << 40}, TensorShape({1, 2}))}),
      TensorShape({0, (int64_t{1} << 40) + 2}), {});
  // A padding too large for memory is ResourceExhausted before any index map
  // of its size is built.
  {
    const std::vector<Tensor> in = {
        Iota<float>(TensorShape({1, 5, 1})), I64({1}),
        Tensor::FromVector(std::vector<int64_t>{0, int64_t{1} << 62}, TensorShape({1, 2}))};
    auto huge = RunKernel("SpaceToBatchND", WithTypes("SpaceToBatchND", {}, in), in);
    ASSERT_FALSE(huge.ok());
    EXPECT_TRUE(errors::IsResourceExhausted(huge.status())) << huge.status();
  }
  // A block product past int64 is an error, not an overflow.
  ErrT("SpaceToBatchND", {},
       {x, I64({int64_t{1} << 62, 4}),
        Tensor::FromVector(std::vector<int64_t>{0, 0, 0, 0}, TensorShape({2, 2}))},
       {"overflows"});
}

// SpaceToDepth NHWC by TensorFlow's definition: out[n, h, w, (by * b + bx)
// * c + k] = in[n, h * b + by, w * b + bx, k].
Tensor ReferenceSpaceToDepth(const Tensor& in, int64_t b) {
  const int64_t n = in.dim_size(0), h = in.dim_size(1) / b, w = in.dim_size(2) / b,
                c = in.dim_size(3);
  Tensor out(DT_FLOAT, TensorShape({n, h, w, c * b * b}));
  for (int64_t flat = 0; flat < out.NumElements(); ++flat) {
    std::vector<int64_t> o = Unravel(flat, out.shape());
    const int64_t offset = o[3] / c, k = o[3] % c;
    out.data<float>()[flat] = in.data<float>()[Ravel(
        {o[0], o[1] * b + offset / b, o[2] * b + offset % b, k}, in.shape())];
  }
  return out;
}

// NHWC <-> NCHW.
Tensor ToNchw(const Tensor& nhwc) { return RunT("Transpose", {}, {nhwc, I32({0, 3, 1, 2})}); }

TEST(DepthSpaceOpTest, MatchesReferenceInBothLayoutsAndInverts) {
  for (int64_t b : {2, 3}) {
    SCOPED_TRACE(b);
    const Tensor x = Iota<float>(TensorShape({2, 2 * b, 3 * b, 3}));
    const Tensor want = ReferenceSpaceToDepth(x, b);
    Tensor y = RunT("SpaceToDepth", {{"block_size", b}}, {x});
    EXPECT_TRUE(y.ContentEquals(want)) << y.DebugString(100);
    EXPECT_TRUE(RunT("DepthToSpace", {{"block_size", b}}, {y}).ContentEquals(x));
    // NCHW gives the same values, transposed.
    AttrMap nchw{{"block_size", b}, {"data_format", std::string("NCHW")}};
    Tensor y_nchw = RunT("SpaceToDepth", nchw, {ToNchw(x)});
    EXPECT_TRUE(y_nchw.ContentEquals(ToNchw(want))) << y_nchw.DebugString(100);
    EXPECT_TRUE(RunT("DepthToSpace", nchw, {y_nchw}).ContentEquals(ToNchw(x)));
  }
  // tf.nn.space_to_depth([[[[1], [2]], [[3], [4]]]], 2) == [[[[1, 2, 3, 4]]]].
  Tensor small = Tensor::FromVector(std::vector<float>{1, 2, 3, 4}, TensorShape({1, 2, 2, 1}));
  ExpectTensor<float>(RunT("SpaceToDepth", {{"block_size", int64_t{2}}}, {small}),
                      TensorShape({1, 1, 1, 4}), {1, 2, 3, 4});
  ErrT("SpaceToDepth", {{"block_size", int64_t{2}}}, {Iota<float>(TensorShape({1, 3, 2, 1}))},
       {"SpaceToDepth", "rows 3 is not divisible by 2"});
  ErrT("DepthToSpace", {{"block_size", int64_t{2}}}, {Iota<float>(TensorShape({1, 1, 1, 6}))},
       {"DepthToSpace", "channels 6 is not divisible by 4"});
}

TEST(MatrixBandPartOpTest, MatchesReference) {
  const Tensor x = Iota<float>(TensorShape({2, 4, 5}), 1);
  for (int64_t lower : {-1, 0, 1, 4}) {
    for (int64_t upper : {-1, 0, 2, 5}) {
      SCOPED_TRACE(StrCat(lower, " ", upper));
      Tensor y = RunT("MatrixBandPart", {},
                      {x, Tensor::Scalar<int64_t>(lower), Tensor::Scalar<int64_t>(upper)});
      for (int64_t flat = 0; flat < x.NumElements(); ++flat) {
        std::vector<int64_t> i = Unravel(flat, x.shape());
        const bool in_band =
            (lower < 0 || i[1] - i[2] <= lower) && (upper < 0 || i[2] - i[1] <= upper);
        EXPECT_EQ(y.data<float>()[flat], in_band ? x.data<float>()[flat] : 0.0f) << flat;
      }
    }
  }
  Tensor s = StringIota(TensorShape({2, 2}));
  ExpectTensor<std::string>(
      RunT("MatrixBandPart", {}, {s, Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(-1)}),
      TensorShape({2, 2}), {"s0", "s1", "", "s3"});
  ErrT("MatrixBandPart", {}, {x, Tensor::Scalar<int64_t>(5), Tensor::Scalar<int64_t>(0)},
       {"num_lower 5 must be <= 4"});
}

template <typename T>
Tensor Values(std::vector<T> values) {
  return Tensor::FromVector(values);
}

TEST(CheckNumericsOpTest, PassesFiniteAndNamesWhatItFound) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  Tensor finite = Values<float>({1, -2, 3e38f});
  Tensor y = RunT("CheckNumerics", {{"message", std::string("m")}}, {finite});
  EXPECT_TRUE(y.SharesBufferWith(finite));
  ErrT("CheckNumerics", {{"message", std::string("my msg")}}, {Values<float>({1, nan})},
       {"my msg : Tensor had NaN values"});
  ErrT("CheckNumerics", {{"message", std::string("my msg")}}, {Values<float>({-inf, 1})},
       {"my msg : Tensor had Inf values"});
  ErrT("CheckNumerics", {{"message", std::string("my msg")}}, {Values<double>({inf, NAN})},
       {"my msg : Tensor had Inf and NaN values"});
  // V2 tells the signs apart (TensorFlow 2.21's texts).
  ErrT("CheckNumericsV2", {{"message", std::string("v2")}}, {Values<float>({inf, 1})},
       {"v2 : Tensor had +Inf values"});
  ErrT("CheckNumericsV2", {{"message", std::string("v2")}}, {Values<float>({-inf, nan, inf})},
       {"v2 : Tensor had -Inf, +Inf, and NaN values"});
  ErrT("CheckNumericsV2", {{"message", std::string("v2")}}, {Values<double>({-inf, NAN})},
       {"v2 : Tensor had -Inf and NaN values"});
  EXPECT_TRUE(RunT("CheckNumericsV2", {{"message", std::string("")}}, {Values<double>({0.5})})
                  .ContentEquals(Values<double>({0.5})));
}

}  // namespace
}  // namespace weir
