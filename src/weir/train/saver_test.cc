// The Saver: round trips, retention policies, name mapping, and the failure
// cases that must leave variables untouched (corrupt, truncated or
// mismatched checkpoints, a save interrupted before its state update).
#include "weir/train/saver.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include "weir/base/file_system.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

std::string NewTempDir() {
  std::string pattern = ::testing::TempDir() + "/saver_test.XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// Two variables, a [2,3] float `w` and a [3] double `b`, with ops to set
// them to values fed through placeholders.
struct Model {
  Scope root = Scope::NewRootScope();
  Output w, b;
  std::unique_ptr<Session> session;
  std::unique_ptr<Saver> saver;

  explicit Model(SaverOptions options = {}, bool saver_over_w_only_as = false) {
    w = ops::VarHandleOp(root.WithOpName("w"), DT_FLOAT, PartialShape({2, 3}));
    b = ops::VarHandleOp(root.WithOpName("b"), DT_DOUBLE, PartialShape({3}));
    Output wv = ops::Placeholder(root.WithOpName("w_value"), DT_FLOAT);
    Output bv = ops::Placeholder(root.WithOpName("b_value"), DT_DOUBLE);
    ops::AssignVariableOp(root.WithOpName("set_w"), w, wv);
    ops::AssignVariableOp(root.WithOpName("set_b"), b, bv);
    ops::ReadVariableOp(root.WithOpName("read_w"), w, DT_FLOAT);
    ops::ReadVariableOp(root.WithOpName("read_b"), b, DT_DOUBLE);
    std::vector<SaveableVariable> vars = {{"w", w, DT_FLOAT}, {"b", b, DT_DOUBLE}};
    // A model that calls its `w` "encoder/kernel" in its checkpoints.
    if (saver_over_w_only_as) vars = {{"encoder/kernel", w, DT_FLOAT}};
    auto s = Saver::Create(root, vars, options);
    EXPECT_TRUE(s.ok()) << s.status();
    saver = std::move(*s);
    EXPECT_TRUE(root.ok()) << root.status();
    auto created = Session::New(SessionOptions());
    EXPECT_TRUE(created.ok());
    session = std::move(*created);
    EXPECT_TRUE(session->Create(root.ToGraphDef()).ok());
  }

  void Set(float w0, double b0) {
    std::vector<float> wv(6);
    for (int i = 0; i < 6; ++i) wv[i] = w0 + i;
    std::vector<Tensor> unused;
    ASSERT_TRUE(session
                    ->Run({{"w_value", Tensor::FromVector<float>(wv, TensorShape({2, 3}))},
                           {"b_value", Tensor::FromVector<double>({b0, b0 + 1, b0 + 2})}},
                          {}, {"set_w", "set_b"}, &unused)
                    .ok());
  }
  std::pair<float, double> Get() {
    std::vector<Tensor> out;
    EXPECT_TRUE(session->Run({}, {"read_w", "read_b"}, {}, &out).ok());
    EXPECT_EQ(out[0].data<float>()[5], out[0].data<float>()[0] + 5);
    return {out[0].data<float>()[0], out[1].data<double>()[0]};
  }
};

TEST(SaverTest, SaveThenRestoreRoundTrips) {
  const std::string dir = NewTempDir();
  Model m;
  m.Set(1.5f, -2.25);
  auto path = m.saver->Save(m.session.get(), dir, 7);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir + "/model.ckpt-7");
  EXPECT_TRUE(FileExists(*path + ".index"));
  EXPECT_TRUE(FileExists(*path + ".data-00000-of-00001"));
  m.Set(100, 200);
  auto latest = Saver::LatestCheckpoint(dir);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, *path);
  EXPECT_EQ(Saver::StepOf(*latest), 7);
  ASSERT_TRUE(m.saver->Restore(m.session.get(), *latest).ok());
  EXPECT_EQ(m.Get(), std::make_pair(1.5f, -2.25));

  // A second model in another session restores the same values.
  Model other;
  ASSERT_TRUE(other.saver->Restore(other.session.get(), *latest).ok());
  EXPECT_EQ(other.Get(), std::make_pair(1.5f, -2.25));
}

TEST(SaverTest, KeepsTheNewestN) {
  const std::string dir = NewTempDir();
  SaverOptions options;
  options.max_to_keep = 2;
  Model m(options);
  for (int step = 1; step <= 4; ++step) {
    m.Set(step, step);
    ASSERT_TRUE(m.saver->Save(m.session.get(), dir, step * 10).ok());
  }
  auto all = Saver::ListCheckpoints(dir);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<std::string>{"model.ckpt-30", "model.ckpt-40"}));
  EXPECT_FALSE(FileExists(dir + "/model.ckpt-10.index"));
  EXPECT_FALSE(FileExists(dir + "/model.ckpt-20.data-00000-of-00001"));
  EXPECT_TRUE(FileExists(dir + "/model.ckpt-30.index"));
}

TEST(SaverTest, ShardedSavesOnePartPerDeviceAndMergesThem) {
  const std::string dir = NewTempDir();
  Scope root = Scope::NewRootScope();
  Output w = ops::VarHandleOp(root.WithOpName("w").WithDevice("/device:CPU:1"), DT_FLOAT,
                              PartialShape({3}));
  Output b =
      ops::VarHandleOp(root.WithOpName("b").WithDevice("/cpu:0"), DT_DOUBLE, PartialShape({}));
  Output v = ops::VarHandleOp(root.WithOpName("v").WithDevice("/device:CPU:1"), DT_INT64,
                              PartialShape({}));
  Output wv = ops::Placeholder(root.WithOpName("wv"), DT_FLOAT);
  Output bv = ops::Placeholder(root.WithOpName("bv"), DT_DOUBLE);
  Output vv = ops::Placeholder(root.WithOpName("vv"), DT_INT64);
  ops::AssignVariableOp(root.WithOpName("set_w"), w, wv);
  ops::AssignVariableOp(root.WithOpName("set_b"), b, bv);
  ops::AssignVariableOp(root.WithOpName("set_v"), v, vv);
  ops::ReadVariableOp(root.WithOpName("read_w"), w, DT_FLOAT);
  ops::ReadVariableOp(root.WithOpName("read_b"), b, DT_DOUBLE);
  ops::ReadVariableOp(root.WithOpName("read_v"), v, DT_INT64);
  SaverOptions options;
  options.sharded = true;
  options.max_to_keep = 1;
  auto saver =
      Saver::Create(root, {{"w", w, DT_FLOAT}, {"b", b, DT_DOUBLE}, {"v", v, DT_INT64}}, options);
  ASSERT_TRUE(saver.ok()) << saver.status();
  GraphDef graph = root.ToGraphDef();
  // Two devices: two SaveV2 and two RestoreV2, all on CPU:0, and one merge.
  std::map<std::string, int> count;
  for (const NodeDef& node : graph.nodes) {
    if (node.op == "SaveV2" || node.op == "RestoreV2" || node.op == "MergeV2Checkpoints") {
      ++count[node.op];
      EXPECT_EQ(node.device, "/device:CPU:0") << node.name;
    }
  }
  EXPECT_EQ(count, (std::map<std::string, int>{
                       {"MergeV2Checkpoints", 1}, {"RestoreV2", 2}, {"SaveV2", 2}}));
  SessionOptions session_options;
  session_options.num_cpu_devices = 2;
  auto session = Session::New(session_options);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(graph).ok());
  auto set = [&](float w0, double b0, int64_t v0) {
    std::vector<Tensor> unused;
    ASSERT_TRUE((*session)
                    ->Run({{"wv", Tensor::FromVector<float>({w0, w0 + 1, w0 + 2})},
                           {"bv", Tensor::Scalar(b0)},
                           {"vv", Tensor::Scalar(v0)}},
                          {}, {"set_w", "set_b", "set_v"}, &unused)
                    .ok());
  };
  auto get = [&] {
    std::vector<Tensor> out;
    EXPECT_TRUE((*session)->Run({}, {"read_w", "read_b", "read_v"}, {}, &out).ok());
    return std::make_tuple(out[0].data<float>()[2], out[1].scalar<double>(),
                           out[2].scalar<int64_t>());
  };
  set(0.5f, -3.25, 1);
  ASSERT_TRUE((*saver)->Save(session->get(), dir, 1).ok());
  set(1.5f, 4.0, int64_t{1} << 40);
  auto path = (*saver)->Save(session->get(), dir, 2);
  ASSERT_TRUE(path.ok()) << path.status();
  // One checkpoint of two data files; the parts' directory is gone, and so is
  // every file of the checkpoint keep-1 dropped.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{
                       "checkpoint", "checkpoint_metrics", "model.ckpt-2.data-00000-of-00002",
                       "model.ckpt-2.data-00001-of-00002", "model.ckpt-2.index"}));
  set(0, 0, 0);
  ASSERT_TRUE((*saver)->Restore(session->get(), *path).ok());
  EXPECT_EQ(get(), std::make_tuple(3.5f, 4.0, int64_t{1} << 40));
  // An unsharded saver reads it too (restore reads any V2 checkpoint).
  SaverOptions bad;
  bad.sharded = true;
  Scope other = Scope::NewRootScope();
  Output odd =
      ops::VarHandleOp(other.WithOpName("odd").WithDevice("/job:"), DT_FLOAT, PartialShape({}));
  auto refused = Saver::Create(other, {{"odd", odd, DT_FLOAT}}, bad);
  EXPECT_TRUE(errors::IsInvalidArgument(refused.status())) << refused.status();
}

TEST(SaverTest, KeepsTheBestByMetricBesidesTheNewest) {
  const std::string dir = NewTempDir();
  SaverOptions options;
  options.max_to_keep = 1;
  options.keep_best = true;
  Model m(options);
  const double accuracy[] = {0.5, 0.9, 0.7, 0.8};
  for (int step = 0; step < 4; ++step) {
    m.Set(step, step);
    ASSERT_TRUE(m.saver->Save(m.session.get(), dir, step, accuracy[step]).ok());
  }
  auto all = Saver::ListCheckpoints(dir);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, (std::vector<std::string>{"model.ckpt-1", "model.ckpt-3"}));
  // The best is restorable and holds the values it was saved with.
  ASSERT_TRUE(m.saver->Restore(m.session.get(), dir + "/model.ckpt-1").ok());
  EXPECT_EQ(m.Get(), std::make_pair(1.f, 1.0));
}

TEST(SaverTest, RestoresPartOfAModelUnderOtherNames) {
  const std::string dir = NewTempDir();
  Model source(SaverOptions(), /*saver_over_w_only_as=*/true);
  source.Set(4, 4);
  auto path = source.saver->Save(source.session.get(), dir, 1);
  ASSERT_TRUE(path.ok());

  // The target model's saver maps its own `w` to the source's name.
  Model target(SaverOptions(), /*saver_over_w_only_as=*/true);
  target.Set(0, 9);
  ASSERT_TRUE(target.saver->Restore(target.session.get(), *path).ok());
  EXPECT_EQ(target.Get(), std::make_pair(4.f, 9.0));  // b untouched

  // A saver over both names finds no "w" there: NotFound naming it.
  Model full;
  Status missing = full.saver->Restore(full.session.get(), *path);
  EXPECT_EQ(missing.code(), Code::kNotFound) << missing;
}

TEST(SaverTest, CorruptOrTruncatedCheckpointIsDataLossAndChangesNothing) {
  const std::string dir = NewTempDir();
  Model m;
  m.Set(3, 3);
  auto path = m.saver->Save(m.session.get(), dir, 1);
  ASSERT_TRUE(path.ok());
  const std::string data = *path + ".data-00000-of-00001";
  auto bytes = ReadFileToString(data);
  ASSERT_TRUE(bytes.ok());

  std::string flipped = *bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  ASSERT_TRUE(WriteStringToFileAtomic(data, flipped).ok());
  m.Set(8, 8);
  Status corrupt = m.saver->Restore(m.session.get(), *path);
  EXPECT_EQ(corrupt.code(), Code::kDataLoss) << corrupt;
  EXPECT_NE(corrupt.message().find("data-00000-of-00001"), std::string::npos) << corrupt;
  EXPECT_EQ(m.Get(), std::make_pair(8.f, 8.0));

  ASSERT_TRUE(WriteStringToFileAtomic(data, bytes->substr(0, bytes->size() - 5)).ok());
  Status truncated = m.saver->Restore(m.session.get(), *path);
  EXPECT_EQ(truncated.code(), Code::kDataLoss) << truncated;
  EXPECT_EQ(m.Get(), std::make_pair(8.f, 8.0));

  auto index = ReadFileToString(*path + ".index");
  ASSERT_TRUE(index.ok());
  ASSERT_TRUE(WriteStringToFileAtomic(*path + ".index", index->substr(0, index->size() / 2)).ok());
  Status bad_index = m.saver->Restore(m.session.get(), *path);
  EXPECT_EQ(bad_index.code(), Code::kDataLoss) << bad_index;
  EXPECT_EQ(m.Get(), std::make_pair(8.f, 8.0));
}

TEST(SaverTest, ShapeMismatchIsAnErrorAndChangesNothing) {
  const std::string dir = NewTempDir();
  // A checkpoint whose "w" is [3], not [2,3].
  Scope root = Scope::NewRootScope();
  Output w = ops::VarHandleOp(root.WithOpName("w"), DT_FLOAT, PartialShape({3}));
  ops::AssignVariableOp(root.WithOpName("set"), w, {1.f, 2.f, 3.f});
  Output b = ops::VarHandleOp(root.WithOpName("b"), DT_DOUBLE, PartialShape({3}));
  ops::AssignVariableOp(root.WithOpName("set_b"), b, {1.0, 2.0, 3.0});
  auto saver = Saver::Create(root, {{"w", w, DT_FLOAT}, {"b", b, DT_DOUBLE}});
  ASSERT_TRUE(saver.ok());
  auto created = Session::New(SessionOptions());
  ASSERT_TRUE(created.ok());
  std::unique_ptr<Session> session = std::move(*created);
  ASSERT_TRUE(session->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> unused;
  ASSERT_TRUE(session->Run({}, {}, {"set", "set_b"}, &unused).ok());
  auto path = (*saver)->Save(session.get(), dir, 1);
  ASSERT_TRUE(path.ok());

  Model m;
  m.Set(5, 5);
  Status mismatch = m.saver->Restore(m.session.get(), *path);
  EXPECT_EQ(mismatch.code(), Code::kInvalidArgument) << mismatch;
  EXPECT_NE(mismatch.message().find("[2,3]"), std::string::npos) << mismatch;
  EXPECT_EQ(m.Get(), std::make_pair(5.f, 5.0));  // b was not restored either
}

TEST(SaverTest, AnInterruptedSaveLeavesThePreviousCheckpointNamed) {
  const std::string dir = NewTempDir();
  Model m;
  m.Set(2, 2);
  ASSERT_TRUE(m.saver->Save(m.session.get(), dir, 5).ok());
  // What a crash mid-save leaves: files of the next checkpoint (here
  // garbage, as if half written) that the state file does not name.
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/model.ckpt-6.index", "partial").ok());
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/model.ckpt-6.data-00000-of-00001.tmp.1.1", "x").ok());
  auto latest = Saver::LatestCheckpoint(dir);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, dir + "/model.ckpt-5");
  m.Set(0, 0);
  ASSERT_TRUE(m.saver->Restore(m.session.get(), *latest).ok());
  EXPECT_EQ(m.Get(), std::make_pair(2.f, 2.0));
  // The next save clears the dead process's temporary file.
  ASSERT_TRUE(m.saver->Save(m.session.get(), dir, 7).ok());
  EXPECT_FALSE(FileExists(dir + "/model.ckpt-6.data-00000-of-00001.tmp.1.1"));
}

TEST(SaverTest, ClearErrors) {
  const std::string dir = NewTempDir();
  EXPECT_EQ(Saver::LatestCheckpoint(dir).status().code(), Code::kNotFound);
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/checkpoint", "this is not a state file\n").ok());
  EXPECT_EQ(Saver::LatestCheckpoint(dir).status().code(), Code::kDataLoss);

  Scope root = Scope::NewRootScope();
  Output w = ops::VarHandleOp(root.WithOpName("w"), DT_FLOAT, PartialShape({3}));
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  EXPECT_EQ(Saver::Create(root, {}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Saver::Create(root, {{"x", x, DT_FLOAT}}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Saver::Create(root, {{"w", w, DT_FLOAT}, {"w", w, DT_FLOAT}}).status().code(),
            Code::kInvalidArgument);

  Model m;
  Status missing = m.saver->Restore(m.session.get(), dir + "/model.ckpt-404");
  EXPECT_EQ(missing.code(), Code::kNotFound) << missing;
}

TEST(SaverTest, ReadsTensorFlowStyleStateFiles) {
  const std::string dir = NewTempDir();
  ASSERT_TRUE(WriteStringToFileAtomic(dir + "/checkpoint",
                                      "model_checkpoint_path: \"model.ckpt-20\"\n"
                                      "all_model_checkpoint_paths: \"model.ckpt-10\"\n"
                                      "all_model_checkpoint_paths: \"model.ckpt-20\"\n"
                                      "all_model_checkpoint_timestamps: 1.5e9\n")
                  .ok());
  auto all = Saver::ListCheckpoints(dir);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, (std::vector<std::string>{"model.ckpt-10", "model.ckpt-20"}));
  EXPECT_EQ(*Saver::LatestCheckpoint(dir), dir + "/model.ckpt-20");
}

TEST(CheckpointScheduleTest, EveryNSteps) {
  CheckpointSchedule schedule(100, 0);
  EXPECT_FALSE(schedule.Due(99));
  EXPECT_TRUE(schedule.Due(100));
  schedule.Saved(100);
  EXPECT_FALSE(schedule.Due(150));
  EXPECT_TRUE(schedule.Due(200));
  CheckpointSchedule by_time(0, 1e-9);
  EXPECT_TRUE(by_time.Due(1));
  CheckpointSchedule never(0, 0);
  EXPECT_FALSE(never.Due(1000000));
}

}  // namespace
}  // namespace weir
