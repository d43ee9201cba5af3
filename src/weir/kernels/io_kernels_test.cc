#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <numeric>

#include "weir/framework/op_def.h"
#include "weir/framework/tensor_bundle.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/kernel_test_util.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

Tensor Strings(std::vector<std::string> values) { return Tensor::FromVector(values); }

class IoKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_io_kernels_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    prefix_ = dir_ + "/model.ckpt";
  }
  void TearDown() override { fs::remove_all(dir_); }

  StatusOr<std::vector<Tensor>> Save(const std::vector<std::string>& names,
                                     const std::vector<Tensor>& tensors,
                                     std::vector<std::string> specs = {}) {
    if (specs.empty()) specs.assign(names.size(), "");
    std::vector<DType> dtypes;
    std::vector<Tensor> inputs = {Tensor::Scalar<std::string>(prefix_), Strings(names),
                                  Strings(specs)};
    for (const Tensor& t : tensors) {
      dtypes.push_back(t.dtype());
      inputs.push_back(t);
    }
    return RunKernel("SaveV2", {{"dtypes", dtypes}}, inputs, "save");
  }

  StatusOr<std::vector<Tensor>> Restore(const std::vector<std::string>& names,
                                        const std::vector<DType>& dtypes,
                                        std::vector<std::string> specs = {}) {
    if (specs.empty()) specs.assign(names.size(), "");
    return RunKernel("RestoreV2", {{"dtypes", dtypes}},
                     {Tensor::Scalar<std::string>(prefix_), Strings(names), Strings(specs)},
                     "restore");
  }

  std::string dir_;
  std::string prefix_;
};

TEST_F(IoKernelsTest, SaveThenRestoreWholeTensors) {
  Tensor weights = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  Tensor step = Tensor::Scalar<int64_t>(1000);
  Tensor vocab = Strings({"the", "", "weir"});
  Tensor mask = Tensor::FromVector<bool>({true, false});
  ASSERT_TRUE(Save({"dense/kernel", "global_step", "vocab", "mask"}, {weights, step, vocab, mask})
                  .ok());
  EXPECT_TRUE(fs::exists(prefix_ + ".index"));
  EXPECT_TRUE(fs::exists(prefix_ + ".data-00000-of-00001"));

  // Any subset, in any order.
  auto out = Restore({"vocab", "dense/kernel", "mask", "global_step"},
                     {DT_STRING, DT_FLOAT, DT_BOOL, DT_INT64});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_TRUE((*out)[0].ContentEquals(vocab));
  EXPECT_TRUE((*out)[1].ContentEquals(weights));
  EXPECT_TRUE((*out)[2].ContentEquals(mask));
  EXPECT_TRUE((*out)[3].ContentEquals(step));
}

// SaveV2's dtypes has at least one entry, as TensorFlow declares it.
TEST_F(IoKernelsTest, SaveWithNoTensorsIsRefused) {
  Status status = Save({}, {}).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("dtypes"), std::string::npos) << status;
  EXPECT_FALSE(BundleReader::Open(prefix_).ok());
}

TEST_F(IoKernelsTest, RestoreSlices) {
  std::vector<float> values(20);
  std::iota(values.begin(), values.end(), 0.0f);
  Tensor full = Tensor::FromVector(values, TensorShape({4, 5}));
  ASSERT_TRUE(Save({"w"}, {full}).ok());

  auto out = Restore({"w", "w", "w"}, {DT_FLOAT, DT_FLOAT, DT_FLOAT},
                     {"4 5 0,2:-", "4 5 -:3,2", "4 5 1,2:1,3"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(
      Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({2, 5}))));
  EXPECT_TRUE((*out)[1].ContentEquals(
      Tensor::FromVector<float>({3, 4, 8, 9, 13, 14, 18, 19}, TensorShape({4, 2}))));
  EXPECT_TRUE((*out)[2].ContentEquals(
      Tensor::FromVector<float>({6, 7, 8, 11, 12, 13}, TensorShape({2, 3}))));

  // A mixture of whole and sliced restores.
  out = Restore({"w", "w"}, {DT_FLOAT, DT_FLOAT}, {"", "4 5 3,1:-"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(full));
  EXPECT_EQ((*out)[1].shape(), TensorShape({1, 5}));
}

TEST_F(IoKernelsTest, SliceSpecMustMatchTheStoredShape) {
  ASSERT_TRUE(Save({"w"}, {Tensor(DT_FLOAT, TensorShape({4, 6}))}).ok());
  auto out = Restore({"w"}, {DT_FLOAT}, {"4 5 0,2:-"});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "[4,6]")) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "[4,5]")) << out.status();

  out = Restore({"w"}, {DT_FLOAT}, {"4 6 0,9:-"});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "'4 6 0,9:-'")) << out.status();
}

TEST_F(IoKernelsTest, MissingTensorIsNotFoundNamingTensorAndPrefix) {
  ASSERT_TRUE(Save({"a"}, {Tensor::Scalar<float>(1)}).ok());
  auto out = Restore({"a", "b"}, {DT_FLOAT, DT_FLOAT});
  EXPECT_TRUE(errors::IsNotFound(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "'b'")) << out.status();
  EXPECT_TRUE(Mentions(out.status(), prefix_)) << out.status();
}

TEST_F(IoKernelsTest, MissingCheckpointIsNotFound) {
  auto out = Restore({"a"}, {DT_FLOAT});
  EXPECT_TRUE(errors::IsNotFound(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), prefix_)) << out.status();
}

TEST_F(IoKernelsTest, DtypeMismatchNamesTensorAndBothDtypes) {
  ASSERT_TRUE(Save({"step"}, {Tensor::Scalar<int64_t>(3)}).ok());
  auto out = Restore({"step"}, {DT_INT32});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "'step'")) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "int64")) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "expects int32")) << out.status();
}

TEST_F(IoKernelsTest, SavesSlicesAndRestoresThemWholeOrBySlice) {
  // w is 4x5 of 0..19, saved as rows 0..1 and rows 2..3 (as a partitioned
  // variable's two parts are).
  Tensor top(DT_FLOAT, TensorShape({2, 5})), bottom(DT_FLOAT, TensorShape({2, 5}));
  std::iota(top.data<float>(), top.data<float>() + 10, 0.f);
  std::iota(bottom.data<float>(), bottom.data<float>() + 10, 10.f);
  ASSERT_TRUE(Save({"w", "w"}, {top, bottom}, {"4 5 0,2:-", "4 5 2,2:-"}).ok());
  auto whole = Restore({"w"}, {DT_FLOAT});
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ((*whole)[0].shape(), TensorShape({4, 5}));
  for (int i = 0; i < 20; ++i) EXPECT_EQ((*whole)[0].data<float>()[i], i);
  auto across = Restore({"w"}, {DT_FLOAT}, {"4 5 1,2:3,2"});
  ASSERT_TRUE(across.ok()) << across.status();
  std::vector<float> got((*across)[0].data<float>(), (*across)[0].data<float>() + 4);
  EXPECT_EQ(got, (std::vector<float>{8, 9, 13, 14}));
}

TEST_F(IoKernelsTest, BadSlicesAreInvalidArgument) {
  Tensor rows(DT_FLOAT, TensorShape({2, 5}));
  auto overlap = Save({"w", "w"}, {rows, rows}, {"4 5 0,2:-", "4 5 1,2:-"});
  EXPECT_TRUE(errors::IsInvalidArgument(overlap.status())) << overlap.status();
  EXPECT_TRUE(Mentions(overlap.status(), "'w'")) << overlap.status();
  EXPECT_TRUE(Mentions(overlap.status(), "overlapping")) << overlap.status();
  EXPECT_FALSE(fs::exists(prefix_ + ".index"));
  auto wrong = Save({"w"}, {rows}, {"4 5 0,3:-"});
  EXPECT_TRUE(errors::IsInvalidArgument(wrong.status())) << wrong.status();
  EXPECT_TRUE(Mentions(wrong.status(), "[3,5]")) << wrong.status();
  // Only half of w saved: restoring it whole names what is missing.
  ASSERT_TRUE(Save({"w"}, {rows}, {"4 5 0,2:-"}).ok());
  auto half = Restore({"w"}, {DT_FLOAT});
  EXPECT_TRUE(errors::IsInvalidArgument(half.status())) << half.status();
  EXPECT_TRUE(Mentions(half.status(), "cover 10 of the 20")) << half.status();
}

TEST_F(IoKernelsTest, BadInputShapesAreInvalidArgument) {
  // Two names for one tensor.
  auto out = RunKernel("SaveV2", {{"dtypes", std::vector<DType>{DT_FLOAT}}},
                       {Tensor::Scalar<std::string>(prefix_), Strings({"a", "b"}),
                        Strings({"", ""}), Tensor::Scalar<float>(1)});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "tensor_names")) << out.status();
  // A vector prefix.
  out = RunKernel("RestoreV2", {{"dtypes", std::vector<DType>{DT_FLOAT}}},
                  {Strings({prefix_}), Strings({"a"}), Strings({""})});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "prefix")) << out.status();
  // Graph-time: the shape function sees the mismatch too.
  auto shapes = InferShapes("RestoreV2", {{"dtypes", std::vector<DType>{DT_FLOAT, DT_INT32}}},
                            {{}, {3}, {2}});
  EXPECT_TRUE(errors::IsInvalidArgument(shapes.status())) << shapes.status();
}

TEST_F(IoKernelsTest, RestoreShapesFollowConstantSliceSpecs) {
  Tensor specs = Strings({"", "4 5 0,2:-"});
  auto shapes = InferShapes("RestoreV2", {{"dtypes", std::vector<DType>{DT_FLOAT, DT_FLOAT}}},
                            {{}, {2}, {2}}, {nullptr, nullptr, &specs});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_FALSE((*shapes)[0].known_rank());
  EXPECT_EQ((*shapes)[1], PartialShape({2, 5}));
}

TEST(IoOpsTest, SaveAndRestoreAreStateful) {
  RegisterAllOps();
  RegisterAllKernels();
  for (const char* op : {"SaveV2", "RestoreV2"}) {
    StatusOr<const OpDef*> def = OpRegistry::Global()->LookUp(op);
    ASSERT_TRUE(def.ok()) << op;
    EXPECT_TRUE((*def)->is_stateful) << op;
  }
}

}  // namespace
}  // namespace weir
