// End-to-end tests of the `weir` command: a graph file and .npy feeds in,
// printed tensors and .npy files out, errors on stderr with a non-zero exit.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "weir/base/file_system.h"
#include "weir/framework/npy.h"
#include "weir/graph/graph_def_io.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

CommandResult RunCommand(const std::string& command) {
  CommandResult result{-1, ""};
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("weir_cli_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Weir(const std::string& args) const {
    return std::string(WEIR_TOOL_PATH) + " " + args;
  }

  fs::path dir_;
};

TEST_F(CliTest, RunPrintsAndWritesFetches) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({-1, 2})}});
  ops::Add(root.WithOpName("scope/y"), ops::Mul(root, x, 2.f), 1.f);
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_TRUE(WriteGraphDefFile(Path("g.pb"), root.ToGraphDef()).ok());
  ASSERT_TRUE(WriteNpy(Path("x.npy"), Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})).ok());

  CommandResult r = RunCommand(Weir("run " + Path("g.pb") + " --feed x=" + Path("x.npy") +
                                    " --fetch scope/y:0 --out " + Path("out") + " --trace " +
                                    Path("trace.json")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("scope/y:0: float [2,2] {3, 5, 7, 9}"), std::string::npos) << r.output;
  StatusOr<Tensor> written = ReadNpy(Path("out/scope__y_0.npy"));
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_TRUE(written->ContentEquals(Tensor::FromVector<float>({3, 5, 7, 9}, {2, 2})));
  StatusOr<std::string> trace = ReadFileToString(Path("trace.json"));
  ASSERT_TRUE(trace.ok());
  EXPECT_NE(trace->find("\"traceEvents\""), std::string::npos);
}

TEST_F(CliTest, RunsATensorFlowStyleTextGraph) {
  ASSERT_TRUE(WriteNpy(Path("x.npy"), Tensor::FromVector<float>({1, 1, 2, 0}, {2, 2})).ok());
  CommandResult r = RunCommand(Weir("run " + std::string(WEIR_TEST_DATA) + "/tf_style_graph.pbtxt" +
                                    " --feed x=" + Path("x.npy") + " --fetch y"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // [1,1]·[[1,2],[3,4]] = [4,6]; [2,0]·w = [2,4]; minus 5, relu.
  EXPECT_NE(r.output.find("y: float [2,2] {0, 1, 0, 0}"), std::string::npos) << r.output;
}

TEST_F(CliTest, InspectListsShapesAndDevices) {
  CommandResult r =
      RunCommand(Weir("inspect " + std::string(WEIR_TEST_DATA) + "/tf_style_graph.pbtxt"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("MatMul"), std::string::npos);
  EXPECT_NE(r.output.find("float[?,2]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device:CPU:0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("6 nodes"), std::string::npos) << r.output;
}

TEST_F(CliTest, InspectPassesShowsWhatEachPassChanged) {
  Scope root = Scope::NewRootScope();
  auto x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({2})}});
  // Two equal nodes for CSE, a constant subgraph for folding.
  auto a = ops::Exp(root.WithOpName("a"), x);
  auto b = ops::Exp(root.WithOpName("b"), x);
  auto two = ops::Add(root.WithOpName("two"), ops::Const(root, 1.f), ops::Const(root, 1.f));
  ops::Mul(root.WithOpName("y"), ops::Add(root, a, b), two);
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_TRUE(WriteGraphDefFile(Path("g.pb"), root.ToGraphDef()).ok());

  CommandResult r = RunCommand(Weir("inspect " + Path("g.pb") + " --passes --feed x --fetch y"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* expected : {"rewrite feeds and fetches, prune", "cse: ", "merged 'b' (Exp)",
                               "fold constants: ", "'two'", "place: ", "partition "}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
}

TEST_F(CliTest, ErrorsExitNonZeroWithTheMessage) {
  CommandResult missing = RunCommand(Weir("run " + Path("nope.pb") + " --fetch y"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("nope.pb"), std::string::npos) << missing.output;

  ASSERT_TRUE(WriteStringToFileAtomic(Path("junk.pb"), "\xff\xff\xff not a graph").ok());
  CommandResult junk = RunCommand(Weir("run " + Path("junk.pb") + " --fetch y"));
  EXPECT_EQ(junk.exit_code, 1);
  EXPECT_NE(junk.output.find("GraphDef"), std::string::npos) << junk.output;

  CommandResult unfed =
      RunCommand(Weir("run " + std::string(WEIR_TEST_DATA) + "/tf_style_graph.pbtxt --fetch y"));
  EXPECT_EQ(unfed.exit_code, 1);
  EXPECT_NE(unfed.output.find("placeholder"), std::string::npos) << unfed.output;
  EXPECT_NE(unfed.output.find("'x'"), std::string::npos) << unfed.output;

  CommandResult bad_feed = RunCommand(
      Weir("run " + std::string(WEIR_TEST_DATA) + "/tf_style_graph.pbtxt --feed x --fetch y"));
  EXPECT_EQ(bad_feed.exit_code, 1);
  EXPECT_NE(bad_feed.output.find("NAME=FILE.npy"), std::string::npos) << bad_feed.output;
}

}  // namespace
}  // namespace weir
