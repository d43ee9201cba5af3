// GetMatchingPaths: TensorFlow's glob semantics (per path component, sorted,
// no match is an empty list).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "weir/base/file_system.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

class MatchingPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_glob_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    for (const char* name :
         {"a/x-1.rec", "a/x-2.rec", "a/y.txt", "b/x-3.rec", "a/.hidden.rec", "c[1]/z.rec"}) {
      fs::create_directories(fs::path(dir_ + "/" + name).parent_path());
      ASSERT_TRUE(WriteStringToFileAtomic(dir_ + "/" + name, "").ok());
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> Match(const std::string& pattern) {
    StatusOr<std::vector<std::string>> paths = GetMatchingPaths(dir_ + "/" + pattern);
    EXPECT_TRUE(paths.ok()) << paths.status();
    std::vector<std::string> relative;
    for (const std::string& p : *paths) relative.push_back(p.substr(dir_.size() + 1));
    return relative;
  }

  std::string dir_;
};

TEST_F(MatchingPathsTest, WildcardsWithinComponentsSorted) {
  EXPECT_EQ(Match("a/x-*.rec"), (std::vector<std::string>{"a/x-1.rec", "a/x-2.rec"}));
  EXPECT_EQ(Match("*/x-?.rec"), (std::vector<std::string>{"a/x-1.rec", "a/x-2.rec", "b/x-3.rec"}));
  EXPECT_EQ(Match("[ab]/x-[13].rec"), (std::vector<std::string>{"a/x-1.rec", "b/x-3.rec"}));
  // '*' does not cross '/', and (as TensorFlow's fnmatch) matches a leading dot.
  EXPECT_EQ(Match("*.rec"), std::vector<std::string>{});
  EXPECT_EQ(Match("a/*.rec"),
            (std::vector<std::string>{"a/.hidden.rec", "a/x-1.rec", "a/x-2.rec"}));
  EXPECT_EQ(Match("c\\[1\\]/*"), std::vector<std::string>{"c[1]/z.rec"});
}

TEST_F(MatchingPathsTest, LiteralPathsAndNoMatch) {
  EXPECT_EQ(Match("a/y.txt"), std::vector<std::string>{"a/y.txt"});
  EXPECT_EQ(Match("a"), std::vector<std::string>{"a"});
  EXPECT_TRUE(Match("a/none.txt").empty());
  EXPECT_TRUE(Match("missing_dir/*").empty());
  EXPECT_TRUE(Match("a/y.txt/*").empty());  // below a file
}

}  // namespace
}  // namespace weir
