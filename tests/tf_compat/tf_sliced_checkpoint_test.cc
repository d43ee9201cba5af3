// A checkpoint of partitioned variables that TensorFlow 2.21 writes during
// the test (export_sliced_checkpoint.py, run with the peers' python) reads in
// Weir: each tensor whole, and any slice, directly and through RestoreV2 in a
// session, with the values TensorFlow restores. Fails, saying why, when
// TensorFlow is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "weir/framework/tensor_bundle.h"
#include "weir/framework/tensor_slice.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

std::string PeersPython() {
  const char* peers = std::getenv("WEIR_PEERS");
  return std::string(peers != nullptr ? peers : "/opt/weir-peers") + "/bin/python";
}

// Runs `command`; its exit code and what it printed.
std::pair<int, std::string> Shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class TfSlicedCheckpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("weir_tf_sliced_checkpoint_test_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    if (!fs::exists(PeersPython())) {
      *error_ = "TensorFlow's python '" + PeersPython() +
                "' is missing: install the peers (scripts/install_deps.sh) or set WEIR_PEERS";
      return;
    }
    auto [code, output] = Shell(PeersPython() + " " + WEIR_EXPORT_SCRIPT + " " + dir_->string());
    if (code != 0) {
      *error_ = "export_sliced_checkpoint.py failed:\n" + output;
      return;
    }
    std::ifstream in(*dir_ / "sliced.json");
    std::stringstream text;
    text << in.rdbuf();
    *expected_ = nlohmann::json::parse(text.str());
  }
  static void TearDownTestSuite() { fs::remove_all(*dir_); }
  void SetUp() override { ASSERT_TRUE(error_->empty()) << *error_; }

  static std::string Prefix(const std::string& name = "ckpt") { return (*dir_ / name).string(); }

  static fs::path* dir_;
  static std::string* error_;
  static nlohmann::json* expected_;
};
fs::path* TfSlicedCheckpointTest::dir_ = nullptr;
std::string* TfSlicedCheckpointTest::error_ = new std::string;
nlohmann::json* TfSlicedCheckpointTest::expected_ = new nlohmann::json;

// Weir's tensor equals TensorFlow's exactly (restoring copies bytes).
void ExpectEquals(const Tensor& weir, const nlohmann::json& tf, const std::string& what) {
  ASSERT_EQ(weir.shape(), TensorShape(tf.at("shape").get<std::vector<int64_t>>())) << what;
  const std::string dtype = tf.at("dtype");
  if (dtype == "float32") {
    ASSERT_EQ(weir.dtype(), DT_FLOAT) << what;
    EXPECT_EQ(std::vector<float>(weir.flat<float>().begin(), weir.flat<float>().end()),
              tf.at("values").get<std::vector<float>>()) << what;
  } else if (dtype == "int64") {
    ASSERT_EQ(weir.dtype(), DT_INT64) << what;
    EXPECT_EQ(std::vector<int64_t>(weir.flat<int64_t>().begin(), weir.flat<int64_t>().end()),
              tf.at("values").get<std::vector<int64_t>>()) << what;
  } else {
    ASSERT_EQ(dtype, "string");
    ASSERT_EQ(weir.dtype(), DT_STRING) << what;
    EXPECT_EQ(std::vector<std::string>(weir.flat<std::string>().begin(),
                                       weir.flat<std::string>().end()),
              tf.at("values").get<std::vector<std::string>>()) << what;
  }
}

TEST_F(TfSlicedCheckpointTest, ReadsPartitionedVariablesWhole) {
  StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(Prefix());
  ASSERT_TRUE(reader.ok()) << reader.status();
  // The sliced tensors are listed by name with their full shapes; the
  // pieces' keys are not.
  ASSERT_EQ((*reader)->ListTensors().size(), 3u);
  for (const auto& [name, value] : expected_->at("whole").items()) {
    const BundleTensorInfo* info = (*reader)->FindTensor(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->shape, TensorShape(value.at("shape").get<std::vector<int64_t>>())) << name;
    StatusOr<Tensor> tensor = (*reader)->Lookup(name);
    ASSERT_TRUE(tensor.ok()) << tensor.status();
    ExpectEquals(*tensor, value, name);
  }
}

TEST_F(TfSlicedCheckpointTest, ReadsSlicesAcrossPartitions) {
  for (const nlohmann::json& one : expected_->at("slices")) {
    const std::string name = one.at("name"), spec = one.at("spec");
    StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(Prefix(one.at("prefix")));
    ASSERT_TRUE(reader.ok()) << reader.status();
    StatusOr<ShapeAndSlice> slice = ParseShapeAndSlice(spec);
    ASSERT_TRUE(slice.ok()) << slice.status();
    StatusOr<Tensor> tensor = (*reader)->LookupSlice(name, *slice);
    ASSERT_TRUE(tensor.ok()) << name << " " << spec << ": " << tensor.status();
    ExpectEquals(*tensor, one.at("value"), name + " " + spec);
  }
}

TEST_F(TfSlicedCheckpointTest, PartlySavedTensorReadsOnlyByItsSlices) {
  ASSERT_TRUE(expected_->at("part_whole_fails").get<bool>());  // as in TensorFlow
  StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(Prefix("ckpt_part"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  StatusOr<Tensor> whole = (*reader)->Lookup("part");
  EXPECT_EQ(whole.status().code(), Code::kInvalidArgument) << whole.status();
  EXPECT_NE(whole.status().message().find("cover 6 of the 2000 elements"), std::string::npos)
      << whole.status();
  StatusOr<ShapeAndSlice> wrong_shape = ParseShapeAndSlice("999 2 400,3:-");
  ASSERT_TRUE(wrong_shape.ok());
  EXPECT_EQ((*reader)->LookupSlice("part", *wrong_shape).status().code(), Code::kInvalidArgument);
}

// The same through the RestoreV2 kernel in a session: what Saver-restore
// graphs of partitioned variables run.
TEST_F(TfSlicedCheckpointTest, RestoreV2ReadsWholeAndSlices) {
  StatusOr<GraphDef> graph = ParseGraphDefText(R"pb(
    node { name: "prefix" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
    node { name: "names" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
      attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } }
                                           string_val: "emb" string_val: "ids" } } } }
    node { name: "specs" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
      attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } }
                                           string_val: "70 3 20,10:1,2" string_val: "" } } } }
    node { name: "restore" op: "RestoreV2" input: "prefix" input: "names" input: "specs"
      attr { key: "dtypes" value { list { type: DT_FLOAT type: DT_INT64 } } } }
  )pb");
  ASSERT_TRUE(graph.ok()) << graph.status();
  StatusOr<std::unique_ptr<Session>> session = Session::New({});
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(*graph).ok());
  std::vector<Tensor> outputs;
  Status ran = (*session)->Run({{"prefix", Tensor::Scalar<std::string>(Prefix())}},
                               {"restore:0", "restore:1"}, {}, &outputs);
  ASSERT_TRUE(ran.ok()) << ran;
  ExpectEquals(outputs[0], expected_->at("slices")[1].at("value"), "RestoreV2 emb slice");
  ExpectEquals(outputs[1], expected_->at("whole").at("ids"), "RestoreV2 ids");
}

// The other way: TensorFlow reads the slices Weir writes, whole and by slice.
TEST_F(TfSlicedCheckpointTest, TensorFlowReadsSlicesWeirWrites) {
  Tensor m(DT_FLOAT, TensorShape({5, 3}));
  for (int i = 0; i < 15; ++i) m.data<float>()[i] = 0.25f * i - 1.f;
  const std::string prefix = Prefix("weir_sliced");
  {
    BundleWriter writer(prefix);
    for (const char* spec : {"5 3 0,2:-", "5 3 2,3:-"}) {
      StatusOr<ShapeAndSlice> slice = ParseShapeAndSlice(spec);
      ASSERT_TRUE(slice.ok());
      StatusOr<Tensor> piece = ExtractSlice(m, *slice);
      ASSERT_TRUE(piece.ok());
      ASSERT_TRUE(writer.AddSlice("m", *slice, *piece).ok());
    }
    ASSERT_TRUE(writer.Finish().ok());
  }
  const std::string json_path = Prefix("tf_read.json");
  auto [code, output] = Shell(PeersPython() + " " + WEIR_EXPORT_SCRIPT + " --read " + json_path +
                              " " + prefix + " m '' float32 m '5 3 1,3:1,2' float32");
  ASSERT_EQ(code, 0) << output;
  std::ifstream in(json_path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json read = nlohmann::json::parse(text.str());
  ExpectEquals(m, read[0], "TF reads m whole");
  StatusOr<ShapeAndSlice> middle = ParseShapeAndSlice("5 3 1,3:1,2");
  ASSERT_TRUE(middle.ok());
  StatusOr<Tensor> want = ExtractSlice(m, *middle);
  ASSERT_TRUE(want.ok());
  ExpectEquals(*want, read[1], "TF reads a slice across Weir's pieces");
}

}  // namespace
}  // namespace weir
