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
    std::string command = PeersPython() + " " + WEIR_EXPORT_SCRIPT + " " + dir_->string() + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    std::string output;
    std::array<char, 4096> buffer;
    size_t n;
    while (pipe != nullptr && (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
      output.append(buffer.data(), n);
    }
    int status = pipe != nullptr ? pclose(pipe) : -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
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

}  // namespace
}  // namespace weir
