// The lookup-table ops through a session: a static table filled by its
// initializer (tensors, a text file), a mutable one changed by insert,
// remove and import, sharing by shared_name, and each bad input's error.
// (TensorFlow's own table graphs: tests/tf_compat/test_tf_lookup.py.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

std::unique_ptr<Session> NewSession(const Scope& root) {
  EXPECT_TRUE(root.ok()) << root.status();
  auto session = Session::New(SessionOptions());
  EXPECT_TRUE(session.ok());
  Status created = (*session)->Create(root.ToGraphDef());
  EXPECT_TRUE(created.ok()) << created;
  return std::move(session).value();
}

void ExpectError(const Status& s, Code code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(s.code(), code) << s;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(s.message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << s;
  }
}

Tensor Strings(std::vector<std::string> values) { return Tensor::FromVector(values); }
Tensor Int64s(std::vector<int64_t> values) { return Tensor::FromVector(values); }

std::vector<int64_t> Int64Values(const Tensor& t) {
  return {t.data<int64_t>(), t.data<int64_t>() + t.NumElements()};
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path =
      (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".txt"))
          .string();
  std::ofstream(path) << text;
  return path;
}

TEST(LookupKernelsTest, StaticTableFindsKeysAfterItsInitializer) {
  Scope root = Scope::NewRootScope();
  Output table = ops::HashTableV2(root.WithOpName("table"), DT_STRING, DT_INT64);
  Output keys = ops::Placeholder(root.WithOpName("keys"), DT_STRING);
  Output values = ops::Placeholder(root.WithOpName("values"), DT_INT64);
  ops::InitializeTableV2(root.WithOpName("init"), table, keys, values);
  Output query = ops::Placeholder(root.WithOpName("query"), DT_STRING);
  Output fallback = ops::Placeholder(root.WithOpName("fallback"), DT_INT64);
  ops::LookupTableFindV2(root.WithOpName("find"), table, query, fallback);
  ops::LookupTableSizeV2(root.WithOpName("size"), table);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  const Tensor query_value =
      Tensor::FromVector<std::string>({"b", "x", "a", "b"}, TensorShape({2, 2}));

  // Before the initializer: an error, not the defaults.
  ExpectError(session->Run({{"query", query_value}, {"fallback", Tensor::Scalar<int64_t>(-1)}},
                           {"find"}, {}, &out),
              Code::kFailedPrecondition, {"'find'", "not initialized"});

  ASSERT_TRUE(session
                  ->Run({{"keys", Strings({"a", "b", "a"})}, {"values", Int64s({1, 2, 1})}}, {},
                        {"init"}, &out)
                  .ok());
  ASSERT_TRUE(session
                  ->Run({{"query", query_value}, {"fallback", Tensor::Scalar<int64_t>(-1)}},
                        {"find", "size"}, {}, &out)
                  .ok());
  EXPECT_EQ(out[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Int64Values(out[0]), (std::vector<int64_t>{2, -1, 1, 2}));
  EXPECT_EQ(out[1].scalar<int64_t>(), 2);
  // A default per key.
  ASSERT_TRUE(
      session
          ->Run({{"query", query_value},
                 {"fallback", Tensor::FromVector<int64_t>({7, 8, 9, 10}, TensorShape({2, 2}))}},
                {"find"}, {}, &out)
          .ok());
  EXPECT_EQ(Int64Values(out[0]), (std::vector<int64_t>{2, 8, 1, 2}));

  // The same entries again: nothing; others: an error, and the table is kept.
  EXPECT_TRUE(
      session->Run({{"keys", Strings({"b", "a"})}, {"values", Int64s({2, 1})}}, {}, {"init"}, &out)
          .ok());
  ExpectError(session->Run({{"keys", Strings({"a"})}, {"values", Int64s({5})}}, {}, {"init"}, &out),
              Code::kFailedPrecondition, {"'init'", "already initialized with different data"});
  ExpectError(
      session->Run({{"query", query_value}, {"fallback", Int64s({1, 2})}}, {"find"}, {}, &out),
      Code::kInvalidArgument, {"'find'", "default_value", "[2]"});
  ExpectError(
      session->Run({{"keys", Strings({"a", "b"})}, {"values", Int64s({1})}}, {}, {"init"}, &out),
      Code::kInvalidArgument, {"same shape"});
}

TEST(LookupKernelsTest, StaticTableRefusesAKeyWithTwoValues) {
  Scope root = Scope::NewRootScope();
  Output table = ops::HashTableV2(root.WithOpName("table"), DT_INT64, DT_STRING);
  ops::InitializeTableV2(root.WithOpName("init"), table, Int64s({3, 3}),
                         Strings({"three", "drei"}));
  ops::LookupTableSizeV2(root.WithOpName("size"), table);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ExpectError(session->Run({}, {}, {"init"}, &out), Code::kFailedPrecondition,
              {"Key 3 has 'three'", "'drei'"});
  // Nothing half-done stays.
  ASSERT_TRUE(session->Run({}, {"size"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 0);
}

TEST(LookupKernelsTest, MutableTableInsertsRemovesImportsAndExports) {
  Scope root = Scope::NewRootScope();
  Output table = ops::MutableHashTableV2(root.WithOpName("table"), DT_INT64, DT_FLOAT);
  ops::LookupTableInsertV2(root.WithOpName("insert"), table, Int64s({1, 2, 3}),
                           Input({0.5f, 1.5f, 2.5f}));
  ops::LookupTableInsertV2(root.WithOpName("overwrite"), table, Int64s({2}), Input({9.f}));
  ops::LookupTableRemoveV2(root.WithOpName("remove"), table, Int64s({1, 42}));
  ops::LookupTableImportV2(root.WithOpName("import"), table, Int64s({7}), Input({7.f}));
  ops::LookupTableFindV2(root.WithOpName("find"), table, Int64s({1, 2, 3, 7}), -1.f);
  ops::LookupTableExportV2(root.WithOpName("export"), table, DT_INT64, DT_FLOAT);
  ops::InitializeTableV2(root.WithOpName("init"), table, Int64s({1}), Input({1.f}));
  auto session = NewSession(root);
  std::vector<Tensor> out;
  auto find = [&] {
    EXPECT_TRUE(session->Run({}, {"find"}, {}, &out).ok());
    return std::vector<float>(out[0].data<float>(), out[0].data<float>() + 4);
  };
  EXPECT_EQ(find(), (std::vector<float>{-1, -1, -1, -1}));  // empty, not an error
  ASSERT_TRUE(session->Run({}, {}, {"insert"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {}, {"overwrite"}, &out).ok());
  EXPECT_EQ(find(), (std::vector<float>{0.5f, 9.f, 2.5f, -1}));
  ASSERT_TRUE(session->Run({}, {}, {"remove"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"export:0", "export:1"}, {}, &out).ok());
  std::map<int64_t, float> exported;
  for (int64_t i = 0; i < out[0].NumElements(); ++i) {
    exported[out[0].data<int64_t>()[i]] = out[1].data<float>()[i];
  }
  EXPECT_EQ(exported, (std::map<int64_t, float>{{2, 9.f}, {3, 2.5f}}));
  ASSERT_TRUE(session->Run({}, {}, {"import"}, &out).ok());
  EXPECT_EQ(find(), (std::vector<float>{-1, -1, -1, 7.f}));
  ExpectError(session->Run({}, {}, {"init"}, &out), Code::kInvalidArgument,
              {"'init'", "mutable table is filled by insert"});
}

TEST(LookupKernelsTest, TextFileInitializerReadsColumnsLinesAndLineNumbers) {
  const std::string path = WriteFile("lookup_vocab", "the\t7\r\nquick\t3\nbrown\n");
  Scope root = Scope::NewRootScope();
  Output by_line = ops::HashTableV2(root.WithOpName("by_line"), DT_STRING, DT_INT64);
  ops::InitializeTableFromTextFileV2(root.WithOpName("init_by_line"), by_line,
                                     Input(Tensor::Scalar<std::string>(path)), -2, -1,
                                     {{"offset", int64_t{100}}});
  ops::LookupTableFindV2(root.WithOpName("line_ids"), by_line, Strings({"quick\t3", "brown", "x"}),
                         int64_t{-1});
  Output by_column = ops::HashTableV2(root.WithOpName("by_column"), DT_STRING, DT_INT64);
  ops::InitializeTableFromTextFileV2(root.WithOpName("init_by_column"), by_column,
                                     Input(Tensor::Scalar<std::string>(path)), 0, 1);
  Output short_vocab = ops::HashTableV2(root.WithOpName("short"), DT_STRING, DT_INT64);
  ops::InitializeTableFromTextFileV2(root.WithOpName("init_short"), short_vocab,
                                     Input(Tensor::Scalar<std::string>(path)), -2, -1,
                                     {{"vocab_size", int64_t{5}}});
  Output two_lines = ops::HashTableV2(root.WithOpName("two_lines"), DT_STRING, DT_INT64);
  ops::InitializeTableFromTextFileV2(root.WithOpName("init_two_lines"), two_lines,
                                     Input(Tensor::Scalar<std::string>(path)), -2, -1,
                                     {{"vocab_size", int64_t{2}}});
  ops::LookupTableSizeV2(root.WithOpName("two_lines_size"), two_lines);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init_by_line"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"line_ids"}, {}, &out).ok());
  EXPECT_EQ(Int64Values(out[0]), (std::vector<int64_t>{101, 102, -1}));
  // Line 2 ("brown") has no column 1; line 0's "\r" is not part of "7".
  ExpectError(session->Run({}, {}, {"init_by_column"}, &out), Code::kInvalidArgument,
              {"'init_by_column'", path, "line 2", "expected 2 got 1"});
  ExpectError(session->Run({}, {}, {"init_short"}, &out), Code::kInvalidArgument,
              {"Invalid vocab_size", "expected: 5, got: 3"});
  ASSERT_TRUE(session->Run({}, {}, {"init_two_lines"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"two_lines_size"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int64_t>(), 2);
  std::filesystem::remove(path);
}

TEST(LookupKernelsTest, TablesAreSharedByNameAndMustAgree) {
  Scope root = Scope::NewRootScope();
  Output a = ops::MutableHashTableV2(root.WithOpName("a"), DT_INT64, DT_INT64,
                                     {{"shared_name", std::string("shared")}});
  Output b = ops::MutableHashTableV2(root.WithOpName("b"), DT_INT64, DT_INT64,
                                     {{"shared_name", std::string("shared")}});
  Output other = ops::HashTableV2(root.WithOpName("other"), DT_STRING, DT_INT64,
                                  {{"shared_name", std::string("shared")}});
  ops::LookupTableInsertV2(root.WithOpName("insert"), a, Int64s({1}), Int64s({11}));
  ops::LookupTableFindV2(root.WithOpName("find"), b, Int64s({1}), int64_t{0});
  ops::LookupTableFindV2(root.WithOpName("wrong_keys"), b, Strings({"1"}), int64_t{0});
  ops::LookupTableSizeV2(root.WithOpName("other_size"), other);
  auto session = NewSession(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {"find"}, {"insert"}, &out).ok());
  EXPECT_EQ(Int64Values(out[0]), (std::vector<int64_t>{11}));
  ExpectError(session->Run({}, {"other_size"}, {}, &out), Code::kInvalidArgument,
              {"table 'shared'", "mutable table of int64 -> int64", "HashTableV2 asks for string"});
  ExpectError(session->Run({}, {"wrong_keys"}, {}, &out), Code::kInvalidArgument,
              {"'wrong_keys'", "keys are int64", "string"});
}

}  // namespace
}  // namespace weir
