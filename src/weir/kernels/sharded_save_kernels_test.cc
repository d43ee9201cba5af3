// The ops of a sharded save: ShardedFilename, ShardedFilespec, StringJoin
// and MergeV2Checkpoints (with framework/tensor_bundle.h's MergeBundles
// under it), run as kernels.
#include <fnmatch.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "weir/base/file_system.h"
#include "weir/framework/op_def.h"
#include "weir/framework/tensor_bundle.h"
#include "weir/framework/tensor_slice.h"
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

StatusOr<std::string> ShardedFilename(const std::string& base, int32_t shard, int32_t n) {
  WEIR_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        RunKernel("ShardedFilename", {},
                                  {Tensor::Scalar<std::string>(base),
                                   Tensor::Scalar<int32_t>(shard), Tensor::Scalar<int32_t>(n)}));
  return out[0].scalar<std::string>();
}

TEST(ShardedFilenameTest, NamesShardsAsTensorFlowDoes) {
  EXPECT_EQ(*ShardedFilename("/d/ckpt_temp/part", 0, 1), "/d/ckpt_temp/part-00000-of-00001");
  EXPECT_EQ(*ShardedFilename("/d/ckpt_temp/part", 1, 3), "/d/ckpt_temp/part-00001-of-00003");
  // Past five digits the numbers just grow.
  EXPECT_EQ(*ShardedFilename("p", 123456, 200000), "p-123456-of-200000");

  auto spec = RunKernel("ShardedFilespec", {},
                        {Tensor::Scalar<std::string>("/d/part"), Tensor::Scalar<int32_t>(3)});
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::string pattern = (*spec)[0].scalar<std::string>();
  EXPECT_EQ(pattern,
            "/d/part-?????"
            "-of-00003");
  // The spec is a glob of the shards' names, and of no other count's.
  for (int shard = 0; shard < 3; ++shard) {
    EXPECT_EQ(::fnmatch(pattern.c_str(), ShardedFilename("/d/part", shard, 3)->c_str(), 0), 0);
  }
  EXPECT_NE(::fnmatch(pattern.c_str(), ShardedFilename("/d/part", 0, 4)->c_str(), 0), 0);
}

TEST(ShardedFilenameTest, BadShardsAreInvalidArgument) {
  for (auto [shard, n] : {std::pair{3, 3}, std::pair{-1, 3}, std::pair{0, 0}}) {
    auto name = ShardedFilename("p", shard, n);
    EXPECT_TRUE(errors::IsInvalidArgument(name.status())) << shard << " of " << n;
  }
  auto out =
      RunKernel("ShardedFilename", {},
                {Strings({"a", "b"}), Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(1)});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  auto spec = RunKernel("ShardedFilespec", {},
                        {Tensor::Scalar<std::string>("p"), Tensor::Scalar<int32_t>(-2)});
  EXPECT_TRUE(errors::IsInvalidArgument(spec.status())) << spec.status();
  EXPECT_TRUE(Mentions(spec.status(), "-2")) << spec.status();
}

TEST(StringJoinTest, JoinsElementwiseWithScalarsBroadcast) {
  auto out = RunKernel(
      "StringJoin", {{"N", int64_t{2}}},
      {Tensor::Scalar<std::string>("/d/ckpt"), Tensor::Scalar<std::string>("_temp/part")});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), 0);
  EXPECT_EQ((*out)[0].scalar<std::string>(), "/d/ckpt_temp/part");

  out = RunKernel("StringJoin", {{"N", int64_t{3}}, {"separator", std::string(", ")}},
                  {Strings({"a", "b"}), Tensor::Scalar<std::string>("x"), Strings({"1", ""})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].ContentEquals(Strings({"a, x, 1", "b, x, "})));

  out = RunKernel("StringJoin", {{"N", int64_t{0}}}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<std::string>(), "");

  out = RunKernel("StringJoin", {{"N", int64_t{2}}}, {Strings({"a", "b"}), Strings({"c"})});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "[2]") && Mentions(out.status(), "[1]")) << out.status();
}

class MergeV2CheckpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_sharded_save_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    dest_ = dir_ + "/model.ckpt-7";
    temp_ = dest_ + "_temp/part";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Part(int shard, int n) { return *ShardedFilename(temp_, shard, n); }

  // Writes a checkpoint at `prefix` holding `tensors` whole and `slices`
  // (name, spec, piece) as slices.
  static void Write(const std::string& prefix,
                    const std::vector<std::pair<std::string, Tensor>>& tensors,
                    const std::vector<std::tuple<std::string, std::string, Tensor>>& slices = {}) {
    BundleWriter writer(prefix);
    for (const auto& [name, tensor] : tensors) ASSERT_TRUE(writer.Add(name, tensor).ok()) << name;
    for (const auto& [name, spec, piece] : slices) {
      ASSERT_TRUE(writer.AddSlice(name, *ParseShapeAndSlice(spec), piece).ok()) << name;
    }
    ASSERT_TRUE(writer.Finish().ok()) << prefix;
  }

  StatusOr<std::vector<Tensor>> Merge(const std::vector<std::string>& prefixes,
                                      const std::string& dest, bool allow_missing = false,
                                      bool delete_old_dirs = true) {
    return RunKernel("MergeV2Checkpoints",
                     {{"allow_missing_files", allow_missing}, {"delete_old_dirs", delete_old_dirs}},
                     {Strings(prefixes), Tensor::Scalar<std::string>(dest)});
  }

  // Every file under dir_, relative to it.
  std::set<std::string> Files() const {
    std::set<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      files.insert(fs::relative(entry.path(), dir_).string());
    }
    return files;
  }

  // Three shards as three tasks would save them: "w" sliced across the
  // first and last, strings, scalars.
  void WriteThreeShards() {
    Write(Part(0, 3), {{"global_step", Tensor::Scalar<int64_t>(7)}},
          {{"w", "4 2 0,2:-", Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))}});
    Write(Part(1, 3), {{"vocab", Strings({"a", "", "weir"})},
                       {"layer/b", Tensor::FromVector<double>({0.5, -1.5})}});
    Write(Part(2, 3), {{"layer/k", Tensor::FromVector<int32_t>({9, 8, 7}, TensorShape({3, 1}))}},
          {{"w", "4 2 2,2:-", Tensor::FromVector<float>({5, 6, 7, 8}, TensorShape({2, 2}))}});
  }

  void ExpectThreeShardValues(const std::string& prefix) {
    auto reader = BundleReader::Open(prefix);
    ASSERT_TRUE(reader.ok()) << reader.status();
    std::vector<std::string> names;
    for (const BundleTensorInfo& info : (*reader)->ListTensors()) names.push_back(info.name);
    EXPECT_EQ(names, (std::vector<std::string>{"global_step", "layer/b", "layer/k", "vocab", "w"}));
    auto expect = [&](const std::string& name, const Tensor& want) {
      auto got = (*reader)->Lookup(name);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(got->ContentEquals(want)) << name << ": " << got->DebugString();
    };
    expect("global_step", Tensor::Scalar<int64_t>(7));
    expect("vocab", Strings({"a", "", "weir"}));
    expect("layer/b", Tensor::FromVector<double>({0.5, -1.5}));
    expect("layer/k", Tensor::FromVector<int32_t>({9, 8, 7}, TensorShape({3, 1})));
    expect("w", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({4, 2})));
  }

  std::string dir_, dest_, temp_;
};

TEST_F(MergeV2CheckpointsTest, MergesThreeShardsIntoOneCheckpoint) {
  WriteThreeShards();
  auto out = Merge({Part(0, 3), Part(1, 3), Part(2, 3)}, dest_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
  ExpectThreeShardValues(dest_);
  // The data files were renamed (each shard's file is the merged one of its
  // number), the inputs' indexes deleted with their directory, and no
  // temporary file is left.
  EXPECT_EQ(Files(), (std::set<std::string>{
                         "model.ckpt-7.index", "model.ckpt-7.data-00000-of-00003",
                         "model.ckpt-7.data-00001-of-00003", "model.ckpt-7.data-00002-of-00003"}));
}

TEST_F(MergeV2CheckpointsTest, InputsOfSeveralDataFilesKeepTheirShards) {
  WriteThreeShards();
  // Two of the shards merged first: an input of two data files.
  const std::string pair = dir_ + "/pair/ckpt";
  ASSERT_TRUE(Merge({Part(1, 3), Part(2, 3)}, pair).ok());
  ASSERT_TRUE(Merge({Part(0, 3), pair}, dest_, false, /*delete_old_dirs=*/false).ok());
  ExpectThreeShardValues(dest_);
  // Without delete_old_dirs the emptied directories stay.
  EXPECT_TRUE(fs::is_directory(dir_ + "/pair"));
  EXPECT_TRUE(fs::is_directory(dest_ + "_temp"));
  EXPECT_FALSE(fs::exists(pair + ".index"));
}

TEST_F(MergeV2CheckpointsTest, MissingInputsAreNotFoundUnlessAllowed) {
  WriteThreeShards();
  auto out = Merge({Part(0, 3), Part(1, 3), dir_ + "/nothing"}, dest_);
  EXPECT_TRUE(errors::IsNotFound(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), dir_ + "/nothing.index")) << out.status();
  EXPECT_FALSE(fs::exists(dest_ + ".index"));

  out = Merge({dir_ + "/a", dir_ + "/b"}, dest_, /*allow_missing=*/true);
  EXPECT_TRUE(errors::IsNotFound(out.status())) << out.status();

  out = Merge({Part(0, 3), Part(1, 3), dir_ + "/nothing", Part(2, 3)}, dest_, true);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectThreeShardValues(dest_);
}

TEST_F(MergeV2CheckpointsTest, BadInputsFailNamingTheFilesAndMoveNothing) {
  WriteThreeShards();
  const std::set<std::string> before = Files();
  auto expect_untouched = [&](const Status& s) {
    EXPECT_EQ(Files(), before) << s;
    for (int shard = 0; shard < 3; ++shard) EXPECT_TRUE(BundleReader::Open(Part(shard, 3)).ok());
  };

  // A tensor in two shards.
  const std::string dup = dir_ + "/dup";
  Write(dup, {{"vocab", Strings({"x"})}});
  auto out = Merge({Part(0, 3), Part(1, 3), dup}, dest_);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "'vocab'") && Mentions(out.status(), Part(1, 3)) &&
              Mentions(out.status(), dup))
      << out.status();
  fs::remove(dup + ".index");
  fs::remove(BundleDataFilename(dup, 0, 1));
  expect_untouched(out.status());

  // Slices of one tensor that overlap, or disagree on its shape.
  const std::string overlap = dir_ + "/overlap";
  Write(overlap, {},
        {{"w", "4 2 1,2:-", Tensor::FromVector<float>({0, 0, 0, 0}, TensorShape({2, 2}))}});
  out = Merge({Part(0, 3), overlap}, dest_);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "overlapping")) << out.status();
  fs::remove(overlap + ".index");
  fs::remove(BundleDataFilename(overlap, 0, 1));
  Write(overlap, {},
        {{"w", "4 2 0,2:-", Tensor::FromVector<float>({0, 0, 0, 0}, TensorShape({2, 2}))}});
  out = Merge({Part(0, 3), overlap}, dest_);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "one slice of a tensor is in both")) << out.status();
  fs::remove(overlap + ".index");
  fs::remove(BundleDataFilename(overlap, 0, 1));
  const std::string reshaped = dir_ + "/reshaped";
  Write(reshaped, {},
        {{"w", "6 2 2,2:-", Tensor::FromVector<float>({0, 0, 0, 0}, TensorShape({2, 2}))}});
  out = Merge({Part(0, 3), reshaped}, dest_);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), "[4,2]") && Mentions(out.status(), "[6,2]")) << out.status();
  fs::remove(reshaped + ".index");
  fs::remove(BundleDataFilename(reshaped, 0, 1));

  // A damaged index, a truncated data file: the reader's DataLoss, naming
  // the file.
  const std::string damaged = dir_ + "/damaged";
  Write(damaged, {{"z", Tensor::Scalar<float>(1)}});
  ASSERT_TRUE(WriteStringToFileAtomic(damaged + ".index", "not a table").ok());
  out = Merge({Part(0, 3), damaged}, dest_);
  EXPECT_TRUE(errors::IsDataLoss(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), damaged + ".index")) << out.status();
  Write(damaged, {{"z", Tensor::FromVector<float>({1, 2, 3})}});
  fs::resize_file(BundleDataFilename(damaged, 0, 1), 5);
  out = Merge({Part(0, 3), damaged}, dest_);
  EXPECT_TRUE(errors::IsDataLoss(out.status())) << out.status();
  EXPECT_TRUE(Mentions(out.status(), BundleDataFilename(damaged, 0, 1))) << out.status();
  fs::remove(damaged + ".index");
  fs::remove(BundleDataFilename(damaged, 0, 1));

  // Prefixes: repeated, the destination among them, none, not a vector.
  out = Merge({Part(0, 3), Part(0, 3)}, dest_);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  out = Merge({Part(0, 3), dest_}, dest_);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  out = Merge({}, dest_);
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  out = Merge({Part(0, 3)}, "");
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  out = RunKernel("MergeV2Checkpoints", {},
                  {Tensor::Scalar<std::string>(Part(0, 3)), Tensor::Scalar<std::string>(dest_)});
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  expect_untouched(out.status());
}

TEST_F(MergeV2CheckpointsTest, AFailedLastRenameMovesTheDataBack) {
  WriteThreeShards();
  const std::set<std::string> before = Files();
  // The index cannot land: a directory (not empty) holds its name.
  fs::create_directories(dest_ + ".index/x");
  auto out = Merge({Part(0, 3), Part(1, 3), Part(2, 3)}, dest_);
  EXPECT_FALSE(out.ok());
  EXPECT_TRUE(Mentions(out.status(), dest_)) << out.status();
  fs::remove_all(dest_ + ".index");
  // The shards are as they were and still whole; nothing else is left.
  EXPECT_EQ(Files(), before);
  for (int shard = 0; shard < 3; ++shard) EXPECT_TRUE(BundleReader::Open(Part(shard, 3)).ok());
  ASSERT_TRUE(Merge({Part(0, 3), Part(1, 3), Part(2, 3)}, dest_).ok());
  ExpectThreeShardValues(dest_);
}

TEST_F(MergeV2CheckpointsTest, APreviousCheckpointStaysReadableUntilTheMergeSucceeds) {
  // The previous save at the same prefix (one data file) and another step's.
  Write(dest_, {{"global_step", Tensor::Scalar<int64_t>(1)}});
  const std::string other = dir_ + "/model.ckpt-3";
  Write(other, {{"global_step", Tensor::Scalar<int64_t>(3)}});
  WriteThreeShards();
  const std::string dup = dir_ + "/dup";
  Write(dup, {{"layer/k", Strings({"x"})}});
  ASSERT_FALSE(Merge({Part(0, 3), Part(1, 3), Part(2, 3), dup}, dest_).ok());
  auto step = (*BundleReader::Open(dest_))->Lookup("global_step");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->scalar<int64_t>(), 1);

  ASSERT_TRUE(Merge({Part(0, 3), Part(1, 3), Part(2, 3)}, dest_).ok());
  ExpectThreeShardValues(dest_);
  step = (*BundleReader::Open(other))->Lookup("global_step");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->scalar<int64_t>(), 3);
}

TEST_F(MergeV2CheckpointsTest, AFailedMergeOverThePreviousSaveRestoresItsFiles) {
  // The previous save at the same prefix has three data files too, which
  // the merge's files replace by name.
  WriteThreeShards();
  ASSERT_TRUE(Merge({Part(0, 3), Part(1, 3), Part(2, 3)}, dest_).ok());
  Write(Part(0, 3), {{"global_step", Tensor::Scalar<int64_t>(8)}});
  Write(Part(1, 3), {{"vocab", Strings({"b"})}});
  Write(Part(2, 3), {{"layer/k", Tensor::Scalar<int32_t>(0)}});
  const std::set<std::string> before = Files();
  // The last step (the index's rename) fails.
  fs::rename(dest_ + ".index", dir_ + "/kept.index");
  fs::create_directories(dest_ + ".index/x");
  EXPECT_FALSE(Merge({Part(0, 3), Part(1, 3), Part(2, 3)}, dest_).ok());
  fs::remove_all(dest_ + ".index");
  fs::rename(dir_ + "/kept.index", dest_ + ".index");
  EXPECT_EQ(Files(), before);
  ExpectThreeShardValues(dest_);
  // And a merge that succeeds leaves no replaced file behind.
  ASSERT_TRUE(Merge({Part(0, 3), Part(1, 3), Part(2, 3)}, dest_).ok());
  EXPECT_EQ(Files(), (std::set<std::string>{"model.ckpt-7.index",
                                            "model.ckpt-7.data-00000-of-00003",
                                            "model.ckpt-7.data-00001-of-00003",
                                            "model.ckpt-7.data-00002-of-00003"}));
  auto step = (*BundleReader::Open(dest_))->Lookup("global_step");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->scalar<int64_t>(), 8);
}

TEST(ShardedSaveOpsTest, MergeIsStatefulAndTheNamesAreNot) {
  RegisterAllOps();
  RegisterAllKernels();
  auto shapes = InferShapes("MergeV2Checkpoints", {}, {{2, 2}, {}});
  EXPECT_TRUE(errors::IsInvalidArgument(shapes.status())) << shapes.status();
  shapes = InferShapes("StringJoin", {{"N", int64_t{3}}}, {{}, {4}, {-1}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialShape({4}));
  shapes = InferShapes("StringJoin", {{"N", int64_t{2}}}, {{3}, {4}});
  EXPECT_TRUE(errors::IsInvalidArgument(shapes.status())) << shapes.status();
  for (auto [op, stateful] :
       {std::pair{"MergeV2Checkpoints", true}, std::pair{"ShardedFilename", false},
        std::pair{"StringJoin", false}}) {
    StatusOr<const OpDef*> def = OpRegistry::Global()->LookUp(op);
    ASSERT_TRUE(def.ok()) << op;
    EXPECT_EQ((*def)->is_stateful, stateful) << op;
  }
}

}  // namespace
}  // namespace weir
