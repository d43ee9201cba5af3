// Declarations take TensorFlow's type lists (tests/tf_compat/op_def_parity.py
// checks them), which can be wider than Weir's CPU kernels: such a node still
// validates and its shapes infer, and creating its kernel is NotFound naming
// the node, the op and the dtype; kernels that read index values take int8
// and int16 as TensorFlow does. Where TensorFlow's list is narrower, Weir's
// now refuses the node.
#include <gtest/gtest.h>

#include "weir/framework/op_kernel.h"
#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

void ExpectNoKernel(const std::string& op, AttrMap attrs, int num_inputs,
                    const std::string& attr_and_dtype) {
  ASSERT_TRUE(MakeTestNode(op, attrs, num_inputs).ok()) << op << " must validate";
  StatusOr<std::unique_ptr<OpKernel>> kernel = CreateTestKernel(op, attrs, num_inputs);
  ASSERT_FALSE(kernel.ok()) << op;
  EXPECT_EQ(kernel.status().code(), Code::kNotFound) << kernel.status();
  for (const std::string& m : {std::string("no CPU kernel"), std::string("'test_node'"), op,
                               attr_and_dtype}) {
    EXPECT_NE(kernel.status().message().find(m), std::string::npos)
        << "'" << m << "' not in: " << kernel.status();
  }
}

void ExpectRefused(const std::string& op, AttrMap attrs, int num_inputs,
                   const std::string& attr) {
  StatusOr<NodeDef> node = MakeTestNode(op, attrs, num_inputs);
  ASSERT_FALSE(node.ok()) << op;
  EXPECT_EQ(node.status().code(), Code::kInvalidArgument) << node.status();
  EXPECT_NE(node.status().message().find(attr), std::string::npos) << node.status();
}

// Kernels that read their index args as values (IntTensorValues) take
// TensorFlow's int8 and int16 too.
TEST(TfTypeListsTest, SmallIntegerIndexValuesRun) {
  std::vector<float> values(20);
  for (int i = 0; i < 20; ++i) values[i] = static_cast<float>(i);
  Tensor input = Tensor::FromVector(values, TensorShape({5, 4}));
  auto sliced = RunKernel("StridedSlice", {{"T", DT_FLOAT}, {"Index", DT_INT16}},
                          {input, Tensor::FromVector<int16_t>({1}, TensorShape({1})),
                           Tensor::FromVector<int16_t>({3}, TensorShape({1})),
                           Tensor::FromVector<int16_t>({1}, TensorShape({1}))});
  ASSERT_TRUE(sliced.ok()) << sliced.status();
  EXPECT_EQ((*sliced)[0].shape(), TensorShape({2, 4}));
  EXPECT_EQ(ToDoubles((*sliced)[0]), (std::vector<double>{4, 5, 6, 7, 8, 9, 10, 11}));

  Tensor row = Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6}, TensorShape({1, 7}));
  auto parts = RunKernel("SplitV", {{"T", DT_FLOAT}, {"Tlen", DT_INT8}, {"num_split", int64_t{2}}},
                         {row, Tensor::FromVector<int8_t>({3, -1}, TensorShape({2})),
                          Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(ToDoubles((*parts)[0]), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(ToDoubles((*parts)[1]), (std::vector<double>{3, 4, 5, 6}));

  // Duplicate index 1 sums.
  auto scattered = RunKernel(
      "ScatterNd", {{"T", DT_FLOAT}, {"Tindices", DT_INT16}},
      {Tensor::FromVector<int16_t>({1, 4, 1}, TensorShape({3, 1})),
       Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
       Tensor::FromVector<int16_t>({6, 2}, TensorShape({2}))});
  ASSERT_TRUE(scattered.ok()) << scattered.status();
  EXPECT_EQ(ToDoubles((*scattered)[0]),
            (std::vector<double>{0, 0, 6, 8, 0, 0, 0, 0, 3, 4, 0, 0}));
}

TEST(TfTypeListsTest, Int16GatherIndicesInferShapesButHaveNoKernel) {
  AttrMap gather = {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT16}, {"Taxis", DT_INT32}};
  Tensor axis = Tensor::Scalar<int32_t>(0);
  auto shapes = InferShapes("GatherV2", gather, {{5, 3}, {2}, {}}, {nullptr, nullptr, &axis});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({2, 3}));
  ExpectNoKernel("GatherV2", gather, 3, "Tindices=int16");
  ExpectNoKernel("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT16}}, 2,
                 "Tindices=int16");
}

TEST(TfTypeListsTest, WiderNumericListsHaveNoKernel) {
  ExpectNoKernel("MatMul", {{"T", DT_UINT8}}, 2, "T=uint8");
  ExpectNoKernel("MatMul", {{"T", DT_UINT64}}, 2, "T=uint64");
  Tensor start = Tensor::Scalar<uint64_t>(0), limit = Tensor::Scalar<uint64_t>(5);
  Tensor delta = Tensor::Scalar<uint64_t>(1);
  auto shapes = InferShapes("Range", {{"Tidx", DT_UINT64}}, {{}, {}, {}}, {&start, &limit, &delta});
  ASSERT_TRUE(shapes.ok()) << shapes.status();  // the size stays unknown for uint64
  ExpectNoKernel("Range", {{"Tidx", DT_UINT64}}, 3, "Tidx=uint64");
  ExpectNoKernel("FusedBatchNormV3", {{"T", DT_BFLOAT16}, {"U", DT_BFLOAT16}}, 5, "U=bfloat16");
}

TEST(TfTypeListsTest, NarrowerListsRefuseTheNode) {
  ExpectRefused("ArgMax", {{"T", DT_COMPLEX64}}, 2, "'T'");
  ExpectRefused("ArgMin", {{"T", DT_FLOAT}, {"Tidx", DT_INT16}}, 2, "'Tidx'");
  ExpectRefused("ArgMin", {{"T", DT_FLOAT}, {"output_type", DT_UINT16}}, 2, "'output_type'");
  ASSERT_TRUE(MakeTestNode("ArgMax", {{"T", DT_FLOAT}, {"Tidx", DT_INT16}}, 2).ok());
  ExpectRefused("ResourceScatterAdd", {{"dtype", DT_STRING}, {"Tindices", DT_INT32}}, 3,
                "'dtype'");
  ASSERT_TRUE(
      MakeTestNode("ResourceScatterUpdate", {{"dtype", DT_STRING}, {"Tindices", DT_INT32}}, 3)
          .ok());
  ExpectRefused("ReverseV2", {{"T", DT_RESOURCE}}, 2, "'T'");
  ExpectRefused("SaveV2", {{"dtypes", std::vector<DType>{}}}, 3, "dtypes");
}

}  // namespace
}  // namespace weir
