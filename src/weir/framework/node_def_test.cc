#include "weir/framework/node_def.h"

#include <gtest/gtest.h>

#include <string>

namespace weir {
namespace {

TensorId Parse(std::string_view text) {
  StatusOr<TensorId> id = ParseTensorName(text);
  EXPECT_TRUE(id.ok()) << text << ": " << id.status();
  return id.ok() ? *id : TensorId{"<error>", -2};
}

TEST(ParseTensorNameTest, ValidNames) {
  EXPECT_EQ(Parse("a"), (TensorId{"a", 0}));
  EXPECT_EQ(Parse("a:0"), (TensorId{"a", 0}));
  EXPECT_EQ(Parse("a:12"), (TensorId{"a", 12}));
  EXPECT_EQ(Parse("^a"), (TensorId{"a", -1}));
  EXPECT_EQ(Parse("scope/inner/node:3"), (TensorId{"scope/inner/node", 3}));
  EXPECT_EQ(Parse("^scope/node"), (TensorId{"scope/node", -1}));
  EXPECT_EQ(Parse("a:2147483647"), (TensorId{"a", 2147483647}));
}

void ExpectBad(std::string_view text) {
  StatusOr<TensorId> id = ParseTensorName(text);
  ASSERT_FALSE(id.ok()) << "'" << text << "' parsed as " << id->ToString();
  EXPECT_EQ(id.status().code(), Code::kInvalidArgument);
  EXPECT_NE(id.status().message().find(StrCat("'", text, "'")), std::string::npos)
      << id.status();
}

TEST(ParseTensorNameTest, MalformedNames) {
  for (const char* bad : {"", "a:", "a:x", "a:-1", "^a:1", "^", ":0", ":", "a:1x", "a: 1",
                          "a:2147483648", "^a:0"}) {
    ExpectBad(bad);
  }
}

TEST(TensorIdTest, ToString) {
  EXPECT_EQ((TensorId{"a", 0}).ToString(), "a");
  EXPECT_EQ((TensorId{"a", 7}).ToString(), "a:7");
  EXPECT_EQ((TensorId{"a", -1}).ToString(), "^a");
  for (const char* name : {"x", "x:5", "^x", "s/x:10"}) {
    EXPECT_EQ(Parse(name).ToString(), name);
  }
  EXPECT_FALSE((TensorId{"a", 0}) == (TensorId{"a", 1}));
  EXPECT_FALSE((TensorId{"a", 0}) == (TensorId{"b", 0}));
}

TEST(NodeDefTest, Describe) {
  NodeDef node;
  node.name = "dense/MatMul";
  node.op = "MatMul";
  EXPECT_EQ(node.Describe(), "'dense/MatMul' (MatMul)");
  node.source_location = "model.cc:42";
  EXPECT_EQ(node.Describe(), "'dense/MatMul' (MatMul) created at model.cc:42");
}

}  // namespace
}  // namespace weir
