// The TensorArray*V3 kernels, run as nodes of one step (step_test_util.h);
// values against hand-computed ones, errors against TensorFlow's rules.
#include <gtest/gtest.h>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/step_test_util.h"

namespace weir {
namespace {

Tensor F(std::vector<float> values, TensorShape shape) {
  return Tensor::FromVector<float>(values, shape);
}
Tensor F(std::vector<float> values) { return Tensor::FromVector<float>(values); }
Tensor Index(int32_t i) { return Tensor::Scalar<int32_t>(i); }
Tensor Indices(std::vector<int32_t> v) { return Tensor::FromVector<int32_t>(v); }
Tensor Flow(float f = 0.0f) { return Tensor::Scalar<float>(f); }

void ExpectError(const Status& status, Code code, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << status << " lacks '" << part << "'";
  }
}

class TensorArrayTest : public ::testing::Test {
 protected:
  // A float array of `size`; `attrs` add to or override the defaults.
  Tensor Create(int size, AttrMap attrs = {}) {
    attrs.emplace("dtype", DT_FLOAT);
    attrs.emplace("tensor_array_name", "ta");
    StatusOr<std::vector<Tensor>> out = step_.Run("TensorArrayV3", attrs, {Index(size)});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return Tensor();
    EXPECT_EQ((*out)[1].scalar<float>(), 0.0f);
    return (*out)[0];
  }
  Status Write(const Tensor& handle, int index, Tensor value) {
    DType dtype = value.dtype();
    return step_.Run("TensorArrayWriteV3", {{"T", dtype}}, {handle, Index(index), value, Flow()})
        .status();
  }
  StatusOr<Tensor> Read(const Tensor& handle, int index, DType dtype = DT_FLOAT) {
    WEIR_ASSIGN_OR_RETURN(
        std::vector<Tensor> out,
        step_.Run("TensorArrayReadV3", {{"dtype", dtype}}, {handle, Index(index), Flow()}));
    return out[0];
  }
  StatusOr<int> Size(const Tensor& handle) {
    WEIR_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                          step_.Run("TensorArraySizeV3", {}, {handle, Flow()}));
    return out[0].scalar<int32_t>();
  }
  StatusOr<Tensor> Gather(const Tensor& handle, std::vector<int32_t> indices, AttrMap attrs = {}) {
    attrs.emplace("dtype", DT_FLOAT);
    WEIR_ASSIGN_OR_RETURN(std::vector<Tensor> out, step_.Run("TensorArrayGatherV3", attrs,
                                                             {handle, Indices(indices), Flow()}));
    return out[0];
  }
  Status Scatter(const Tensor& handle, std::vector<int32_t> indices, Tensor value) {
    DType dtype = value.dtype();
    return step_
        .Run("TensorArrayScatterV3", {{"T", dtype}}, {handle, Indices(indices), value, Flow()})
        .status();
  }
  // The gradient array of `handle` for `source`.
  Tensor Grad(const Tensor& handle, const std::string& source = "gradients") {
    StatusOr<std::vector<Tensor>> out =
        step_.Run("TensorArrayGradV3", {{"source", source}}, {handle, Flow(3.0f)});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return Tensor();
    EXPECT_EQ((*out)[1].scalar<float>(), 3.0f);  // the flow passes through
    return (*out)[0];
  }

  TestStep step_;
};

TEST_F(TensorArrayTest, WritesAndReadsByIndex) {
  Tensor ta = Create(3);
  ASSERT_TRUE(Write(ta, 2, F({5, 6})).ok());
  ASSERT_TRUE(Write(ta, 0, F({1, 2})).ok());
  StatusOr<std::vector<Tensor>> flow =
      step_.Run("TensorArrayWriteV3", {{"T", DT_FLOAT}}, {ta, Index(1), F({3, 4}), Flow(7.5f)});
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ((*flow)[0].scalar<float>(), 7.5f);  // flow_out is flow_in
  for (int i = 0; i < 3; ++i) {
    StatusOr<Tensor> value = Read(ta, i);
    ASSERT_TRUE(value.ok()) << value.status();
    EXPECT_EQ(ToDoubles(*value), (std::vector<double>{2.0 * i + 1, 2.0 * i + 2}));
  }
  EXPECT_EQ(*Size(ta), 3);
}

TEST_F(TensorArrayTest, EachRunMakesANewArray) {
  Tensor a = Create(2);
  Tensor b = Create(2);
  EXPECT_NE(a.scalar<ResourceHandle>().name(), b.scalar<ResourceHandle>().name());
  ASSERT_TRUE(Write(a, 0, F({1})).ok());
  EXPECT_TRUE(Write(b, 0, F({2})).ok());
  EXPECT_EQ(ToDoubles(*Read(b, 0)), (std::vector<double>{2}));
}

TEST_F(TensorArrayTest, IndexOutOfRangeNamesIndexAndSize) {
  Tensor ta = Create(3);
  ExpectError(Write(ta, 3, F({1})), Code::kInvalidArgument,
              {"TensorArray ta_", "index 3", "size is 3", "cannot grow"});
  ExpectError(Write(ta, -1, F({1})), Code::kInvalidArgument, {"index -1", "size is 3"});
  ExpectError(Read(ta, 5).status(), Code::kInvalidArgument, {"read index 5", "size is 3"});
  ExpectError(Read(ta, -2).status(), Code::kInvalidArgument, {"read index -2"});
}

TEST_F(TensorArrayTest, AnIndexIsWrittenOnceAndNotAfterARead) {
  Tensor ta = Create(2, {{"element_shape", PartialShape({1})}});
  ASSERT_TRUE(Write(ta, 0, F({1})).ok());
  ExpectError(Write(ta, 0, F({2})), Code::kInvalidArgument, {"index 0", "already been written"});
  ASSERT_TRUE(Read(ta, 1).ok());  // zeros: the element shape is known
  ExpectError(Write(ta, 1, F({2})), Code::kInvalidArgument, {"index 1", "already been read"});
}

TEST_F(TensorArrayTest, ClearAfterReadAllowsOneRead) {
  Tensor ta = Create(1);
  ASSERT_TRUE(Write(ta, 0, F({1})).ok());
  ASSERT_TRUE(Read(ta, 0).ok());
  ExpectError(Read(ta, 0).status(), Code::kInvalidArgument, {"index 0 twice", "clear_after_read"});

  Tensor kept = Create(1, {{"clear_after_read", false}});
  ASSERT_TRUE(Write(kept, 0, F({4})).ok());
  ASSERT_TRUE(Read(kept, 0).ok());
  StatusOr<Tensor> again = Read(kept, 0);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(ToDoubles(*again), (std::vector<double>{4}));
}

TEST_F(TensorArrayTest, UnwrittenIndexReadsZerosOnlyWhenTheShapeIsKnown) {
  Tensor unknown = Create(2);
  ExpectError(Read(unknown, 1).status(), Code::kInvalidArgument,
              {"index 1 was never written", "not fully defined"});
  Tensor known = Create(2, {{"element_shape", PartialShape({2, 1})}});
  StatusOr<Tensor> zeros = Read(known, 1);
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_EQ(zeros->shape(), TensorShape({2, 1}));
  EXPECT_EQ(ToDoubles(*zeros), (std::vector<double>{0, 0}));
}

TEST_F(TensorArrayTest, ChecksDTypeAndElementShape) {
  Tensor ta = Create(2, {{"element_shape", PartialShape({-1, 2})}});
  ExpectError(Write(ta, 0, Tensor::FromVector<int32_t>({1, 2})), Code::kInvalidArgument,
              {"int32", "float"});
  ExpectError(Write(ta, 0, F({1, 2, 3}, {1, 3})), Code::kInvalidArgument, {"[1,3]", "[?,2]"});
  EXPECT_TRUE(Write(ta, 0, F({1, 2, 3, 4}, {2, 2})).ok());
  ASSERT_TRUE(Write(ta, 1, F({1, 2}, {1, 2})).ok());
  ExpectError(Read(ta, 1, DT_DOUBLE).status(), Code::kInvalidArgument, {"float", "double"});

  // The first element written fixes the shape of the others.
  Tensor identical = Create(2, {{"identical_element_shapes", true}});
  ASSERT_TRUE(Write(identical, 1, F({1, 2})).ok());
  ExpectError(Write(identical, 0, F({1, 2, 3})), Code::kInvalidArgument, {"[3]", "[2]"});
}

TEST_F(TensorArrayTest, DynamicSizeGrowsOnWrite) {
  Tensor ta = Create(0, {{"dynamic_size", true}});
  EXPECT_EQ(*Size(ta), 0);
  ASSERT_TRUE(Write(ta, 4, F({9})).ok());
  EXPECT_EQ(*Size(ta), 5);
  ASSERT_TRUE(Write(ta, 1, F({8})).ok());
  EXPECT_EQ(*Size(ta), 5);
  EXPECT_EQ(ToDoubles(*Read(ta, 4)), (std::vector<double>{9}));
  ExpectError(Read(ta, 5).status(), Code::kInvalidArgument, {"size is 5"});
  ExpectError(Write(ta, -1, F({1})), Code::kInvalidArgument, {"index -1"});
  // A hostile index is refused, not allocated for.
  ExpectError(Write(ta, 2147483647, F({1})), Code::kResourceExhausted, {"index 2147483647"});
  EXPECT_EQ(*Size(ta), 5);
}

// A size from input costs nothing until used, and using it far out is
// refused, not allocated for (each stored element is some 200 bytes).
TEST_F(TensorArrayTest, HostileSizesAreRefusedNotAllocated) {
  Tensor ta = Create(2147483647, {{"element_shape", PartialShape({})}});
  EXPECT_EQ(*Size(ta), 2147483647);
  ExpectError(Read(ta, 16777214).status(), Code::kResourceExhausted, {"index 16777214"});
  ExpectError(step_.Run("TensorArrayConcatV3", {{"dtype", DT_FLOAT}}, {ta, Flow()}).status(),
              Code::kResourceExhausted, {"2147483647 elements"});
  ExpectError(Gather(ta, {0, 2000000000}).status(), Code::kResourceExhausted,
              {"index 2000000000"});
  // Below the bound the array still works.
  ASSERT_TRUE(Write(ta, 3, Tensor::Scalar<float>(7)).ok());
  EXPECT_EQ(ToDoubles(*Read(ta, 3)), (std::vector<double>{7}));
}

TEST_F(TensorArrayTest, GatherStacksElements) {
  Tensor ta = Create(3);
  ASSERT_TRUE(Write(ta, 0, F({1, 2})).ok());
  ASSERT_TRUE(Write(ta, 1, F({3, 4})).ok());
  ASSERT_TRUE(Write(ta, 2, F({5, 6})).ok());
  StatusOr<Tensor> gathered = Gather(ta, {2, 0}, {{"element_shape", PartialShape({2})}});
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  EXPECT_EQ(gathered->shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToDoubles(*gathered), (std::vector<double>{5, 6, 1, 2}));
  ExpectError(Gather(ta, {0}).status(), Code::kInvalidArgument, {"index 0 twice"});

  Tensor ragged = Create(2);
  ASSERT_TRUE(Write(ragged, 0, F({1, 2})).ok());
  ASSERT_TRUE(Write(ragged, 1, F({3})).ok());
  ExpectError(Gather(ragged, {0, 1}).status(), Code::kInvalidArgument,
              {"inconsistent shapes", "[2]", "[1]"});
  Tensor declared = Create(1);
  ASSERT_TRUE(Write(declared, 0, F({1, 2})).ok());
  ExpectError(Gather(declared, {0}, {{"element_shape", PartialShape({3})}}).status(),
              Code::kInvalidArgument, {"[3]", "[2]"});
}

TEST_F(TensorArrayTest, GatherOfNoIndicesNeedsAKnownShape) {
  Tensor known = Create(2, {{"element_shape", PartialShape({3})}});
  StatusOr<Tensor> empty = Gather(known, {});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), TensorShape({0, 3}));
  Tensor unknown = Create(2);
  ExpectError(Gather(unknown, {}).status(), Code::kInvalidArgument, {"fully defined"});
  StatusOr<Tensor> from_attr = Gather(unknown, {}, {{"element_shape", PartialShape({1, 2})}});
  ASSERT_TRUE(from_attr.ok()) << from_attr.status();
  EXPECT_EQ(from_attr->shape(), TensorShape({0, 1, 2}));
}

TEST_F(TensorArrayTest, ScatterWritesRows) {
  Tensor ta = Create(4);
  ASSERT_TRUE(Scatter(ta, {3, 0, 1}, F({1, 2, 3, 4, 5, 6}, {3, 2})).ok());
  EXPECT_EQ(ToDoubles(*Read(ta, 3)), (std::vector<double>{1, 2}));
  EXPECT_EQ(ToDoubles(*Read(ta, 0)), (std::vector<double>{3, 4}));
  EXPECT_EQ(ToDoubles(*Read(ta, 1)), (std::vector<double>{5, 6}));
  ExpectError(Scatter(ta, {2}, F({1, 2, 3, 4}, {2, 2})), Code::kInvalidArgument,
              {"1 indices", "[2,2]"});
  ExpectError(Scatter(ta, {4}, F({1, 2}, {1, 2})), Code::kInvalidArgument,
              {"index 4", "size is 4"});
  ExpectError(Scatter(ta, {0}, F({1, 2}, {1, 2})), Code::kInvalidArgument, {"already been read"});

  Tensor dynamic = Create(1, {{"dynamic_size", true}});
  ASSERT_TRUE(Scatter(dynamic, {5, 2}, F({1, 2}, {2, 1})).ok());
  EXPECT_EQ(*Size(dynamic), 6);
  EXPECT_EQ(ToDoubles(*Read(dynamic, 2)), (std::vector<double>{2}));
}

TEST_F(TensorArrayTest, SplitAndConcatRoundTrip) {
  Tensor ta = Create(0, {{"dynamic_size", true}});
  Tensor value = F({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {6, 2});
  Tensor lengths = Tensor::FromVector<int64_t>({1, 2, 0, 3});
  StatusOr<std::vector<Tensor>> split =
      step_.Run("TensorArraySplitV3", {{"T", DT_FLOAT}}, {ta, value, lengths, Flow(2.0f)});
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ((*split)[0].scalar<float>(), 2.0f);
  EXPECT_EQ(*Size(ta), 4);
  StatusOr<Tensor> piece = Read(ta, 1);
  ASSERT_TRUE(piece.ok()) << piece.status();
  EXPECT_EQ(piece->shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToDoubles(*piece), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(Read(ta, 2)->shape(), TensorShape({0, 2}));

  Tensor again = Create(4, {{"clear_after_read", false}});
  ASSERT_TRUE(
      step_.Run("TensorArraySplitV3", {{"T", DT_FLOAT}}, {again, value, lengths, Flow()}).ok());
  StatusOr<std::vector<Tensor>> concat = step_.Run(
      "TensorArrayConcatV3", {{"dtype", DT_FLOAT}, {"element_shape_except0", PartialShape({2})}},
      {again, Flow()});
  ASSERT_TRUE(concat.ok()) << concat.status();
  EXPECT_TRUE((*concat)[0].ContentEquals(value)) << (*concat)[0].DebugString();
  EXPECT_EQ(ToDoubles((*concat)[1]), (std::vector<double>{1, 2, 0, 3}));
}

TEST_F(TensorArrayTest, SplitChecksLengthsAndSize) {
  Tensor ta = Create(2);
  Tensor value = F({1, 2, 3}, {3});
  auto split = [&](std::vector<int64_t> lengths) {
    return step_
        .Run("TensorArraySplitV3", {{"T", DT_FLOAT}},
             {ta, value, Tensor::FromVector<int64_t>(lengths), Flow()})
        .status();
  };
  ExpectError(split({1, 1}), Code::kInvalidArgument, {"sum to 2", "3 rows"});
  ExpectError(split({4, -1}), Code::kInvalidArgument, {"do not split"});
  ExpectError(split({1, 1, 1}), Code::kInvalidArgument, {"3 pieces", "size is 2", "cannot grow"});
  EXPECT_TRUE(split({3, 0}).ok());
}

TEST_F(TensorArrayTest, ConcatChecksShapes) {
  auto concat = [&](const Tensor& ta, AttrMap attrs = {}) {
    attrs.emplace("dtype", DT_FLOAT);
    return step_.Run("TensorArrayConcatV3", attrs, {ta, Flow()});
  };
  Tensor scalars = Create(1);
  ASSERT_TRUE(Write(scalars, 0, Tensor::Scalar<float>(1)).ok());
  ExpectError(concat(scalars).status(), Code::kInvalidArgument, {"rank >= 1", "index 0"});
  Tensor mixed = Create(2);
  ASSERT_TRUE(Write(mixed, 0, F({1, 2}, {1, 2})).ok());
  ASSERT_TRUE(Write(mixed, 1, F({1, 2, 3}, {1, 3})).ok());
  ExpectError(concat(mixed).status(), Code::kInvalidArgument, {"inconsistent", "index 1", "[1,3]"});
  Tensor empty = Create(0);
  ExpectError(concat(empty).status(), Code::kInvalidArgument, {"element_shape_except0"});
  StatusOr<std::vector<Tensor>> none =
      concat(empty, {{"element_shape_except0", PartialShape({4})}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ((*none)[0].shape(), TensorShape({0, 4}));
  EXPECT_EQ((*none)[1].shape(), TensorShape({0}));
}

TEST_F(TensorArrayTest, StringElements) {
  StatusOr<std::vector<Tensor>> made =
      step_.Run("TensorArrayV3", {{"dtype", DT_STRING}}, {Index(2)});
  ASSERT_TRUE(made.ok()) << made.status();
  Tensor ta = (*made)[0];
  ASSERT_TRUE(Write(ta, 0, Tensor::FromVector<std::string>({"a", "b"})).ok());
  ASSERT_TRUE(Write(ta, 1, Tensor::FromVector<std::string>({"c"})).ok());
  StatusOr<std::vector<Tensor>> concat =
      step_.Run("TensorArrayConcatV3", {{"dtype", DT_STRING}}, {ta, Flow()});
  ASSERT_TRUE(concat.ok()) << concat.status();
  EXPECT_TRUE((*concat)[0].ContentEquals(Tensor::FromVector<std::string>({"a", "b", "c"})));
}

TEST_F(TensorArrayTest, ClosedArrayRefusesEveryUse) {
  Tensor ta = Create(2);
  ASSERT_TRUE(Write(ta, 0, F({1})).ok());
  ASSERT_TRUE(step_.Run("TensorArrayCloseV3", {}, {ta}).ok());
  ExpectError(Read(ta, 0).status(), Code::kInvalidArgument, {"already been closed"});
  ExpectError(Write(ta, 1, F({1})), Code::kInvalidArgument, {"already been closed"});
  ExpectError(Size(ta).status(), Code::kInvalidArgument, {"already been closed"});
}

TEST_F(TensorArrayTest, HandlesLiveForOneStep) {
  Tensor ta = Create(1);
  TestStep other;
  Status status = other.Run("TensorArraySizeV3", {}, {ta, Flow()}).status();
  ExpectError(status, Code::kNotFound, {"does not exist in this step"});
  // Without per-step resources (an executor that keeps none) the ops fail
  // cleanly.
  ExpectError(RunKernel("TensorArrayV3", {{"dtype", DT_FLOAT}}, {Index(1)}).status(),
              Code::kFailedPrecondition, {"step_resources"});
  // A handle of another kind of resource is refused.
  Tensor stack = step_.RunOrDie("StackV2", {{"elem_type", DT_FLOAT}}, {Index(-1)});
  ExpectError(Size(stack).status(), Code::kInvalidArgument, {"Stack", "TensorArray"});
}

TEST_F(TensorArrayTest, GradientArrayIsMadeOncePerSource) {
  Tensor ta = Create(3, {{"dynamic_size", true}});
  ASSERT_TRUE(Write(ta, 0, F({1, 2})).ok());
  ASSERT_TRUE(Write(ta, 2, F({3})).ok());
  Tensor grad = Grad(ta);
  Tensor same = Grad(ta);
  Tensor other = Grad(ta, "gradients_1");
  EXPECT_EQ(grad.scalar<ResourceHandle>(), same.scalar<ResourceHandle>());
  EXPECT_NE(grad.scalar<ResourceHandle>(), other.scalar<ResourceHandle>());
  EXPECT_EQ(*Size(grad), 3);
  // The forward array can no longer grow.
  ExpectError(Write(ta, 3, F({1})), Code::kInvalidArgument, {"index 3", "cannot grow"});

  // Writes to one index add up; an index never written reads zeros of the
  // forward element's shape.
  ASSERT_TRUE(Write(grad, 0, F({1, 1})).ok());
  ASSERT_TRUE(Write(same, 0, F({0.5, 2})).ok());
  ExpectError(Write(grad, 0, F({1})), Code::kInvalidArgument, {"[1]", "[2]"});
  EXPECT_EQ(ToDoubles(*Read(grad, 0)), (std::vector<double>{1.5, 3}));
  StatusOr<Tensor> zeros = Read(grad, 2);
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_EQ(ToDoubles(*zeros), (std::vector<double>{0}));
  // Index 1 was never written forward and the element shape is unknown.
  ExpectError(Read(grad, 1).status(), Code::kInvalidArgument, {"index 1 was never written"});
  // The other source's array is separate.
  EXPECT_EQ(ToDoubles(*Read(other, 0)), (std::vector<double>{0, 0}));
  // A gradient array's size does not bound its reads (the forward array
  // may have grown where no gradient flowed).
  Tensor known = Create(1, {{"element_shape", PartialShape({2})}});
  Tensor known_grad = Grad(known);
  EXPECT_EQ(ToDoubles(*Read(known_grad, 3)), (std::vector<double>{0, 0}));
  EXPECT_EQ(*Size(known_grad), 4);
  // An array whose writes were added up has no gradient array of its own.
  Status status =
      step_.Run("TensorArrayGradV3", {{"source", "gradients"}}, {grad, Flow()}).status();
  ExpectError(status, Code::kInvalidArgument, {"added up", "no gradient array"});
}

TEST_F(TensorArrayTest, GradientGatherReadsZerosForUnwrittenRows) {
  Tensor ta = Create(3);
  ASSERT_TRUE(Scatter(ta, {0, 1, 2}, F({1, 2, 3, 4, 5, 6}, {3, 2})).ok());
  Tensor grad = Grad(ta);
  ASSERT_TRUE(Write(grad, 1, F({7, 8})).ok());
  StatusOr<Tensor> gathered = Gather(grad, {0, 1, 2});
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  EXPECT_EQ(ToDoubles(*gathered), (std::vector<double>{0, 0, 7, 8, 0, 0}));
}

TEST(TensorArrayShapeTest, ShapeFunctions) {
  auto infer = [](const std::string& op, AttrMap attrs, std::vector<PartialShape> shapes) {
    return InferShapes(op, std::move(attrs), std::move(shapes));
  };
  const PartialShape s = PartialShape(std::vector<int64_t>{});
  auto made = infer("TensorArrayV3", {{"dtype", DT_FLOAT}}, {s});
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ((*made)[0], s);
  EXPECT_EQ((*made)[1], s);
  EXPECT_FALSE(infer("TensorArrayV3", {{"dtype", DT_FLOAT}}, {PartialShape({2})}).ok());
  auto gather =
      infer("TensorArrayGatherV3", {{"dtype", DT_FLOAT}, {"element_shape", PartialShape({-1, 3})}},
            {s, PartialShape({5}), s});
  ASSERT_TRUE(gather.ok()) << gather.status();
  EXPECT_EQ((*gather)[0], PartialShape({5, -1, 3}));
  auto unknown = infer("TensorArrayGatherV3", {{"dtype", DT_FLOAT}}, {s, PartialShape({5}), s});
  EXPECT_FALSE((*unknown)[0].known_rank());
  auto concat = infer("TensorArrayConcatV3",
                      {{"dtype", DT_FLOAT}, {"element_shape_except0", PartialShape({4})}}, {s, s});
  ASSERT_TRUE(concat.ok()) << concat.status();
  EXPECT_EQ((*concat)[0], PartialShape({-1, 4}));
  EXPECT_EQ((*concat)[1], PartialShape({-1}));
  Status rows = infer("TensorArrayScatterV3", {{"T", DT_FLOAT}},
                      {s, PartialShape({3}), PartialShape({2, 5}), s})
                    .status();
  EXPECT_EQ(rows.code(), Code::kInvalidArgument) << rows;
  EXPECT_TRUE(infer("TensorArrayScatterV3", {{"T", DT_FLOAT}},
                    {s, PartialShape::UnknownRank(), PartialShape::UnknownRank(), s})
                  .ok());
  EXPECT_FALSE(
      infer("TensorArrayWriteV3", {{"T", DT_FLOAT}}, {s, PartialShape({1}), PartialShape({2}), s})
          .ok());  // index not a scalar
  EXPECT_FALSE(infer("TensorArrayReadV3", {{"dtype", DT_FLOAT}}, {PartialShape({2}), s, s}).ok());
  EXPECT_FALSE(infer("TensorArraySplitV3", {{"T", DT_FLOAT}}, {s, s, PartialShape({2}), s}).ok());
  auto grad = infer("TensorArrayGradV3", {{"source", "gradients"}}, {s, s});
  ASSERT_TRUE(grad.ok()) << grad.status();
  EXPECT_EQ(grad->size(), 2u);
  EXPECT_EQ((*grad)[1], s);
}

}  // namespace
}  // namespace weir
