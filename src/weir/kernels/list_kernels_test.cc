// The TensorList and Optional kernels, each run on its own (RunKernel also
// checks the op's shape function against the outputs), and AddN/ZerosLike
// of variants.
#include <gtest/gtest.h>

#include "weir/kernels/kernel_test_util.h"
#include "weir/kernels/tensor_list.h"

namespace weir {
namespace {

Tensor I32(int32_t v) { return Tensor::Scalar<int32_t>(v); }
Tensor Shape(std::vector<int32_t> dims) { return Tensor::FromVector<int32_t>(dims); }
Tensor F32(std::vector<float> v) { return Tensor::FromVector<float>(v); }
const AttrMap kFloat = {{"element_dtype", DT_FLOAT}};

void ExpectError(const Status& status, Code code, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << status << " lacks '" << part << "'";
  }
}

Tensor Run1(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs, int output = 0) {
  StatusOr<std::vector<Tensor>> out = RunKernel(op, std::move(attrs), std::move(inputs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[output] : Tensor();
}

const TensorList& ListOf(const Tensor& t) {
  const TensorList* list = t.scalar<Variant>().get<TensorList>();
  CHECK(list != nullptr);
  return *list;
}

Tensor Reserve(int32_t n, std::vector<int32_t> shape) {
  return Run1("TensorListReserve", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
              {Shape(shape), I32(n)});
}

Tensor Empty(Tensor shape, int32_t max = -1) {
  return Run1("EmptyTensorList", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
              {std::move(shape), I32(max)});
}

TEST(ListKernelsTest, ReserveSetStackReadsUnsetAsZeros) {
  Tensor list = Reserve(3, {2});
  EXPECT_EQ(list.dtype(), DT_VARIANT);
  EXPECT_EQ(ListOf(list).tensors.size(), 3u);
  list = Run1("TensorListSetItem", kFloat, {list, I32(2), F32({5, 6})});
  Tensor stacked = Run1("TensorListStack", kFloat, {list, Shape({2})});
  EXPECT_EQ(stacked.shape(), TensorShape({3, 2}));
  EXPECT_EQ(ToDoubles(stacked), (std::vector<double>{0, 0, 0, 0, 5, 6}));
  Tensor item = Run1("TensorListGetItem", kFloat, {list, I32(0), Shape({-1})});
  EXPECT_EQ(ToDoubles(item), (std::vector<double>{0, 0}));
  EXPECT_EQ(ToDoubles(Run1("TensorListLength", {}, {list})), (std::vector<double>{3}));
}

TEST(ListKernelsTest, PushPopIsLastInFirstOut) {
  Tensor list = Empty(Tensor::Scalar<int32_t>(-1));
  list = Run1("TensorListPushBack", kFloat, {list, F32({1, 2})});
  list = Run1("TensorListPushBack", kFloat, {list, F32({3, 4})});
  StatusOr<std::vector<Tensor>> pop = RunKernel("TensorListPopBack", kFloat, {list, Shape({-1})});
  ASSERT_TRUE(pop.ok()) << pop.status();
  EXPECT_EQ(ToDoubles((*pop)[1]), (std::vector<double>{3, 4}));
  EXPECT_EQ(ListOf((*pop)[0]).tensors.size(), 1u);
  pop = RunKernel("TensorListPopBack", kFloat, {(*pop)[0], Shape({-1})});
  ASSERT_TRUE(pop.ok());
  ExpectError(RunKernel("TensorListPopBack", kFloat, {(*pop)[0], Shape({-1})}).status(),
              Code::kInvalidArgument, {"TensorListPopBack", "empty list"});
}

// A list read by two consumers: a write through one must not change what
// the other sees (TensorFlow's copy-on-write of shared lists).
TEST(ListKernelsTest, SharedListIsCopiedBeforeAWrite) {
  Tensor list = Reserve(2, {});
  list = Run1("TensorListSetItem", kFloat, {list, I32(0), Tensor::Scalar<float>(1)});
  Tensor kept = list;  // a second holder
  Tensor changed = Run1("TensorListSetItem", kFloat, {list, I32(0), Tensor::Scalar<float>(9)});
  EXPECT_EQ(ToDoubles(Run1("TensorListGetItem", kFloat, {kept, I32(0), Shape({})})),
            (std::vector<double>{1}));
  EXPECT_EQ(ToDoubles(Run1("TensorListGetItem", kFloat, {changed, I32(0), Shape({})})),
            (std::vector<double>{9}));
  Tensor pushed = Run1("TensorListPushBack", kFloat, {kept, Tensor::Scalar<float>(3)});
  EXPECT_EQ(ListOf(kept).tensors.size(), 2u);
  EXPECT_EQ(ListOf(pushed).tensors.size(), 3u);
}

TEST(ListKernelsTest, ChecksDTypeShapeAndIndexNamingTheNode) {
  Tensor list = Reserve(2, {2});
  ExpectError(RunKernel("TensorListSetItem", {{"element_dtype", DT_INT32}},
                        {list, I32(0), Tensor::FromVector<int32_t>({1, 2})})
                  .status(),
              Code::kInvalidArgument, {"'test_node'", "float", "int32"});
  ExpectError(RunKernel("TensorListSetItem", kFloat, {list, I32(0), F32({1, 2, 3})}).status(),
              Code::kInvalidArgument, {"[3]", "does not fit"});
  ExpectError(RunKernel("TensorListSetItem", kFloat, {list, I32(2), F32({1, 2})}).status(),
              Code::kInvalidArgument, {"index 2", "out of range"});
  ExpectError(RunKernel("TensorListGetItem", kFloat, {list, I32(-1), Shape({2})}).status(),
              Code::kInvalidArgument, {"index -1"});
  // Resizing on an index past the end, when asked.
  Tensor grown = Run1("TensorListSetItem",
                      {{"element_dtype", DT_FLOAT}, {"resize_if_index_out_of_bounds", true}},
                      {list, I32(4), F32({1, 2})});
  EXPECT_EQ(ListOf(grown).tensors.size(), 5u);
  ExpectError(
      RunKernel("TensorListReserve", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
                {Shape({2}), I32(-3)})
          .status(),
      Code::kInvalidArgument, {"num_elements", "-3"});
  ExpectError(
      RunKernel("TensorListReserve", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
                {Shape({2}), I32(2147483647)})
          .status(),
      Code::kResourceExhausted, {"limit"});
  // An unset element of an unknown shape cannot be read as zeros.
  Tensor unknown = Reserve(1, {-1});
  ExpectError(RunKernel("TensorListStack", kFloat, {unknown, Shape({-1})}).status(),
              Code::kInvalidArgument, {"not fully defined"});
  ExpectError(RunKernel("TensorListLength", {}, {F32({1})}).status(), Code::kInvalidArgument,
              {"variant"});
}

TEST(ListKernelsTest, MaxNumElementsIsEnforced) {
  Tensor list = Empty(Shape({}), 1);
  list = Run1("TensorListPushBack", kFloat, {list, Tensor::Scalar<float>(1)});
  ExpectError(RunKernel("TensorListPushBack", kFloat, {list, Tensor::Scalar<float>(2)}).status(),
              Code::kInvalidArgument, {"full", "1"});
}

TEST(ListKernelsTest, FromTensorGatherScatterConcatSplit) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  Tensor list = Run1("TensorListFromTensor",
                     {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}}, {t, Shape({2})});
  EXPECT_EQ(ListOf(list).tensors.size(), 3u);
  Tensor gathered =
      Run1("TensorListGather", kFloat, {list, Tensor::FromVector<int32_t>({2, 0}), Shape({2})});
  EXPECT_EQ(gathered.shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToDoubles(gathered), (std::vector<double>{5, 6, 1, 2}));
  Tensor scattered = Run1("TensorListScatterIntoExistingList", kFloat,
                          {list, Tensor::FromVector<float>({7, 8}, TensorShape({1, 2})),
                           Tensor::FromVector<int32_t>({4})});
  EXPECT_EQ(ListOf(scattered).tensors.size(), 5u);
  EXPECT_EQ(ListOf(list).tensors.size(), 3u);  // the input is unchanged
  Tensor split = Run1("TensorListSplit", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
                      {t, Shape({-1, 2}), Tensor::FromVector<int64_t>({1, 2})});
  EXPECT_EQ(ListOf(split).tensors.size(), 2u);
  EXPECT_EQ(ListOf(split).tensors[1].shape(), TensorShape({2, 2}));
  ExpectError(RunKernel("TensorListSplit", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
                        {t, Shape({-1, 2}), Tensor::FromVector<int64_t>({1, 1})})
                  .status(),
              Code::kInvalidArgument, {"sum to 2", "3 rows"});
  // Concat of the split pieces and an unset third element, whose length
  // leading_dims gives.
  Tensor three = Run1("TensorListResize", {}, {split, I32(3)});
  StatusOr<std::vector<Tensor>> concat =
      RunKernel("TensorListConcatV2", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
                {three, Shape({-1, 2}), Tensor::FromVector<int64_t>({0, 0, 1})});
  ASSERT_TRUE(concat.ok()) << concat.status();
  EXPECT_EQ((*concat)[0].shape(), TensorShape({4, 2}));
  EXPECT_EQ(ToDoubles((*concat)[0]), (std::vector<double>{1, 2, 3, 4, 5, 6, 0, 0}));
  EXPECT_EQ(ToDoubles((*concat)[1]), (std::vector<double>{1, 2, 1}));
  ExpectError(
      RunKernel("TensorListConcatV2", {{"element_dtype", DT_FLOAT}, {"shape_type", DT_INT32}},
                {three, Shape({-1, 2}), Tensor::FromVector<int64_t>({})})
          .status(),
      Code::kInvalidArgument, {"element 2", "leading_dims"});
  Tensor resized = Run1("TensorListResize", {}, {list, I32(1)});
  EXPECT_EQ(ListOf(resized).tensors.size(), 1u);
  Tensor shape = Run1("TensorListElementShape", {{"shape_type", DT_INT64}}, {list});
  EXPECT_EQ(ToDoubles(shape), (std::vector<double>{2}));
  Tensor unknown = Run1("TensorListElementShape", {{"shape_type", DT_INT32}},
                        {Empty(Tensor::Scalar<int32_t>(-1))});
  EXPECT_EQ(unknown.dims(), 0);
  EXPECT_EQ(ToDoubles(unknown), (std::vector<double>{-1}));
}

TEST(ListKernelsTest, AddNAndZerosLikeOfLists) {
  Tensor a = Reserve(2, {2});
  a = Run1("TensorListSetItem", kFloat, {a, I32(0), F32({1, 2})});
  Tensor b = Reserve(2, {2});
  b = Run1("TensorListSetItem", kFloat, {b, I32(0), F32({10, 20})});
  b = Run1("TensorListSetItem", kFloat, {b, I32(1), F32({3, 4})});
  Tensor sum = Run1("AddN", {{"N", 2}, {"T", DT_VARIANT}}, {a, b});
  Tensor stacked = Run1("TensorListStack", kFloat, {sum, Shape({2})});
  EXPECT_EQ(ToDoubles(stacked), (std::vector<double>{11, 22, 3, 4}));
  Tensor zeros = Run1("ZerosLike", {{"T", DT_VARIANT}}, {b});
  EXPECT_EQ(ToDoubles(Run1("TensorListStack", kFloat, {zeros, Shape({2})})),
            (std::vector<double>{0, 0, 0, 0}));
  ExpectError(RunKernel("AddN", {{"N", 2}, {"T", DT_VARIANT}}, {a, Reserve(3, {2})}).status(),
              Code::kInvalidArgument, {"lengths 2 and 3"});
}

TEST(OptionalKernelsTest, FromValueGetValueAndNone) {
  Tensor opt =
      Run1("OptionalFromValue", {{"Toutput_types", std::vector<DType>{DT_FLOAT, DT_INT32}}},
           {F32({1, 2}), I32(7)});
  EXPECT_EQ(ToDoubles(Run1("OptionalHasValue", {}, {opt})), (std::vector<double>{1}));
  AttrMap get = {{"output_types", std::vector<DType>{DT_FLOAT, DT_INT32}},
                 {"output_shapes", std::vector<PartialShape>{PartialShape({2}), PartialShape({})}}};
  StatusOr<std::vector<Tensor>> value = RunKernel("OptionalGetValue", get, {opt});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(ToDoubles((*value)[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(ToDoubles((*value)[1]), (std::vector<double>{7}));
  Tensor none = Run1("OptionalNone", {}, {});
  EXPECT_EQ(ToDoubles(Run1("OptionalHasValue", {}, {none})), (std::vector<double>{0}));
  ExpectError(RunKernel("OptionalGetValue", get, {none}).status(), Code::kInvalidArgument,
              {"no value"});
  Tensor doubled = Run1("AddN", {{"N", 2}, {"T", DT_VARIANT}}, {opt, opt});
  value = RunKernel("OptionalGetValue", get, {doubled});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(ToDoubles((*value)[0]), (std::vector<double>{2, 4}));
  ExpectError(RunKernel("AddN", {{"N", 2}, {"T", DT_VARIANT}}, {opt, none}).status(),
              Code::kInvalidArgument, {"only one of them"});
  ExpectError(RunKernel("OptionalHasValue", {}, {Reserve(1, {})}).status(), Code::kInvalidArgument,
              {"TensorList", "not an Optional"});
}

}  // namespace
}  // namespace weir
