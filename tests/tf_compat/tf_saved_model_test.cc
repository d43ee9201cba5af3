// SavedModels written by TensorFlow 2.21 during the test
// (export_saved_models.py, run with the peers' python) load in Weir, from C++
// and through `weir run --saved-model`, and give the outputs TensorFlow's own
// loader gives. Fails, saying why, when TensorFlow is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "weir/framework/npy.h"
#include "weir/saved_model/loader.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

std::string PeersPython() {
  const char* peers = std::getenv("WEIR_PEERS");
  return std::string(peers != nullptr ? peers : "/opt/weir-peers") + "/bin/python";
}

// Runs `command`, returning its exit code and what it printed.
std::pair<int, std::string> Shell(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class TfSavedModelTest : public ::testing::Test {
 protected:
  // TensorFlow writes the models once for the whole suite.
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("weir_tf_saved_model_test_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    if (!fs::exists(PeersPython())) {
      *error_ = "TensorFlow's python '" + PeersPython() +
                "' is missing: install the peers (scripts/install_deps.sh) or set WEIR_PEERS";
      return;
    }
    auto [code, output] = Shell(PeersPython() + " " + WEIR_EXPORT_SCRIPT + " " + dir_->string());
    if (code != 0) *error_ = "export_saved_models.py failed:\n" + output;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override { ASSERT_TRUE(error_->empty()) << *error_; }

  static std::string Model(const std::string& name) { return (*dir_ / name).string(); }
  static nlohmann::json Cases() {
    std::ifstream in(*dir_ / "cases.json");
    std::stringstream text;
    text << in.rdbuf();
    return nlohmann::json::parse(text.str());
  }

  static fs::path* dir_;
  static std::string* error_;
};
fs::path* TfSavedModelTest::dir_ = nullptr;
std::string* TfSavedModelTest::error_ = new std::string;

Tensor Decode(const nlohmann::json& encoded) {
  TensorShape shape(encoded.at("shape").get<std::vector<int64_t>>());
  const std::string dtype = encoded.at("dtype");
  if (dtype == "string") {
    return Tensor::FromVector(encoded.at("values").get<std::vector<std::string>>(), shape);
  }
  EXPECT_EQ(dtype, "float32");
  return Tensor::FromVector(encoded.at("values").get<std::vector<float>>(), shape);
}

// Same dtype and shape; floats to float32 rounding of the same ops.
void ExpectMatches(const Tensor& weir, const nlohmann::json& tf, const std::string& what) {
  Tensor expected = Decode(tf);
  ASSERT_EQ(weir.dtype(), expected.dtype()) << what;
  ASSERT_EQ(weir.shape(), expected.shape()) << what;
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    if (expected.dtype() == DT_STRING) {
      EXPECT_EQ(weir.data<std::string>()[i], expected.data<std::string>()[i]) << what;
    } else {
      float want = expected.data<float>()[i];
      EXPECT_NEAR(weir.data<float>()[i], want, 1e-5f * std::max(1.f, std::fabs(want)))
          << what << " [" << i << "]";
    }
  }
}

TEST_F(TfSavedModelTest, ModelsGiveTensorFlowsOutputs) {
  int checked = 0;
  for (const nlohmann::json& one : Cases()) {
    std::string what = one.at("model").get<std::string>() + " " + one.at("signature").dump();
    std::vector<std::string> tag_list = one.at("tags");
    StatusOr<SavedModelBundle> bundle =
        LoadSavedModel(Model(one.at("model")), {tag_list.begin(), tag_list.end()}, {});
    ASSERT_TRUE(bundle.ok()) << what << ": " << bundle.status();
    std::map<std::string, Tensor> inputs;
    for (const auto& [name, value] : one.at("inputs").items()) inputs.emplace(name, Decode(value));
    StatusOr<std::map<std::string, Tensor>> outputs =
        RunSignature(*bundle, one.at("signature"), inputs);
    ASSERT_TRUE(outputs.ok()) << what << ": " << outputs.status();
    ASSERT_EQ(outputs->size(), one.at("outputs").size()) << what;
    for (const auto& [name, value] : one.at("outputs").items()) {
      ASSERT_TRUE(outputs->count(name)) << what << " lacks output " << name;
      nlohmann::json expected = value;
      if (name == "vocab") {
        // The asset's path under the directory TensorFlow loaded from (the
        // same directory, as this test names it).
        ASSERT_EQ(expected.at("values")[0], Model("tf1_builder") + "/assets/vocab.txt");
      }
      ExpectMatches(outputs->at(name), expected, what + " output " + name);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);  // 4 graph-mode cases, a TF2 tf.Module and a Keras convnet
}

TEST_F(TfSavedModelTest, BuilderModelListsItsTagSetsAndSignatures) {
  StatusOr<SavedModelBundle> missing = LoadSavedModel(Model("tf1_builder"), {"serve", "gpu"}, {});
  ASSERT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("{serve}"), std::string::npos) << missing.status();
  EXPECT_NE(missing.status().message().find("{train}"), std::string::npos) << missing.status();

  StatusOr<SavedModelBundle> train = LoadSavedModel(Model("tf1_builder"), {"train"}, {});
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->signatures.size(), 1u);
  StatusOr<std::map<std::string, Tensor>> wrong =
      RunSignature(*train, "serving_default", {{"x", Tensor::Scalar<float>(1)}});
  ASSERT_EQ(wrong.status().code(), Code::kNotFound);
  EXPECT_NE(wrong.status().message().find("'scale'"), std::string::npos) << wrong.status();
}

TEST_F(TfSavedModelTest, WeirRunRunsASignature) {
  nlohmann::json one = Cases()[2];  // tf1_builder "scale"
  ASSERT_EQ(one.at("signature"), "scale");
  std::string x = (*dir_ / "x.npy").string(), k = (*dir_ / "k.npy").string();
  ASSERT_TRUE(WriteNpy(x, Decode(one.at("inputs").at("x"))).ok());
  ASSERT_TRUE(WriteNpy(k, Decode(one.at("inputs").at("k"))).ok());
  std::string out = (*dir_ / "out").string();
  auto [code, output] = Shell(std::string(WEIR_TOOL_PATH) + " run --saved-model " +
                              Model("tf1_builder") + " --signature scale --feed x=" + x +
                              " --feed k=" + k + " --out " + out);
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("scaled: float [3,3]"), std::string::npos) << output;
  StatusOr<Tensor> scaled = ReadNpy(out + "/scaled.npy");
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  ExpectMatches(*scaled, one.at("outputs").at("scaled"), "weir run scale");

  auto [bad_code, bad_output] = Shell(std::string(WEIR_TOOL_PATH) + " run --saved-model " +
                                      Model("tf1_builder") + " --signature scale --feed x=" + x);
  EXPECT_EQ(bad_code, 1);
  EXPECT_NE(bad_output.find("needs input 'k'"), std::string::npos) << bad_output;
}

}  // namespace
}  // namespace weir
