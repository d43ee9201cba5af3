// Declarations take TensorFlow's type lists (tests/tf_compat/op_def_parity.py
// checks them), which are wider than Weir's CPU kernels: such a node still
// validates and its shapes infer (int8/int16 index values included), and
// creating its kernel is NotFound naming the node, the op and the dtype.
// Where TensorFlow's list is narrower, Weir's now refuses the node.
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

TEST(TfTypeListsTest, Int16IndicesInferShapesButHaveNoKernel) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"Index", DT_INT16}};
  Tensor begin = Tensor::FromVector<int16_t>({1}, TensorShape({1}));
  Tensor end = Tensor::FromVector<int16_t>({3}, TensorShape({1}));
  Tensor strides = Tensor::FromVector<int16_t>({1}, TensorShape({1}));
  auto shapes = InferShapes("StridedSlice", attrs, {{5, 4}, {1}, {1}, {1}},
                            {nullptr, &begin, &end, &strides});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({2, 4}));
  ExpectNoKernel("StridedSlice", attrs, 4, "Index=int16");

  AttrMap gather = {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT16}, {"Taxis", DT_INT32}};
  ExpectNoKernel("GatherV2", gather, 3, "Tindices=int16");
  ExpectNoKernel("GatherNd", {{"Tparams", DT_FLOAT}, {"Tindices", DT_INT16}}, 2, "Tindices=int16");

  AttrMap scatter = {{"T", DT_FLOAT}, {"Tindices", DT_INT16}};
  Tensor shape = Tensor::FromVector<int16_t>({6, 2}, TensorShape({2}));
  shapes = InferShapes("ScatterNd", scatter, {{3, 1}, {3, 2}, {2}}, {nullptr, nullptr, &shape});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({6, 2}));
  ExpectNoKernel("ScatterNd", scatter, 3, "Tindices=int16");
}

TEST(TfTypeListsTest, Int8SplitSizesInferShapesButHaveNoKernel) {
  AttrMap attrs = {{"T", DT_FLOAT}, {"Tlen", DT_INT8}, {"num_split", int64_t{2}}};
  Tensor sizes = Tensor::FromVector<int8_t>({3, -1}, TensorShape({2}));
  Tensor axis = Tensor::Scalar<int32_t>(1);
  auto shapes = InferShapes("SplitV", attrs, {{2, 7}, {2}, {}}, {nullptr, &sizes, &axis});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({2, 3}));
  EXPECT_EQ((*shapes)[1], PartialShape({2, 4}));
  ExpectNoKernel("SplitV", attrs, 3, "Tlen=int8");
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
