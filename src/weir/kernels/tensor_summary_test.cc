// TensorFlow's text for tensors: the expected strings are what TensorFlow
// 2.21 printed for the same tensors (tf.compat.v1.Print, tf.strings.format),
// so the rules (which "..." appear where) are checked without TensorFlow.
#include "weir/kernels/tensor_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

namespace weir {
namespace {

Tensor Range(std::vector<int64_t> dims) {
  TensorShape shape;
  for (int64_t d : dims) shape.AddDim(d);
  Tensor t(DT_INT32, shape);
  std::iota(t.data<int32_t>(), t.data<int32_t>() + t.NumElements(), 0);
  return t;
}

TEST(TensorSummaryTest, V1FirstEntriesRowMajor) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t limit;
    const char* expected;
  };
  for (const Case& c : std::vector<Case>{
           {{2, 3}, 1, "[0...]..."},
           {{2, 3}, 2, "[0 1...]..."},
           {{2, 3}, 3, "[0 1 2]..."},
           {{2, 3}, 4, "[0 1 2][3...]..."},
           {{2, 3}, 5, "[0 1 2][3 4...]..."},
           {{2, 3}, 6, "[0 1 2][3 4 5]"},
           {{2, 3}, -1, "[0 1 2][3 4 5]"},
           {{3, 4, 5}, 3, "[[0 1 2...]]..."},
           {{3, 4, 5}, 5, "[[0 1 2 3 4]]..."},
           {{3, 4, 5}, 6, "[[0 1 2 3 4][5...]]..."},
           {{3, 4, 5}, 21, "[[0 1 2 3 4][5 6 7 8 9][10 11 12 13 14][15 16 17 18 19]][[20...]]..."},
           {{2, 2, 2}, 5, "[[0 1][2 3]][[4...]]..."},
           {{2, 3, 1}, 5, "[[0][1][2]][[3][4]]..."},
           {{1}, 0, "..."},
           {{5}, 2, "0 1..."},
           {{2, 0, 3}, 2, ""},
           {{}, 3, "0"},
       }) {
    EXPECT_EQ(SummarizeTensorV1(Range(c.dims), c.limit), c.expected)
        << c.dims.size() << " " << c.limit;
  }
}

TEST(TensorSummaryTest, V2NumpyLike) {
  EXPECT_EQ(SummarizeTensorV2(Range({2, 3}), 1), "[[0 ... 2]\n [3 ... 5]]");
  EXPECT_EQ(SummarizeTensorV2(Range({2, 3}), 3), "[[0 1 2]\n [3 4 5]]");
  EXPECT_EQ(SummarizeTensorV2(Range({2, 2, 2}), 3), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
  EXPECT_EQ(SummarizeTensorV2(Range({5}), 2), "[0 1 ... 3 4]");
  EXPECT_EQ(SummarizeTensorV2(Range({1}), 0), "[ ...]");
  EXPECT_EQ(SummarizeTensorV2(Range({7, 2}), 2), "[[0 1]\n [2 3]\n ...\n [10 11]\n [12 13]]");
  EXPECT_EQ(
      SummarizeTensorV2(Range({3, 7, 6}), 1),
      "[[[0 ... 5]\n  ...\n  [36 ... 41]]\n\n ...\n\n [[84 ... 89]\n  ...\n  [120 ... 125]]]");
  EXPECT_EQ(SummarizeTensorV2(Range({2, 2}), -1), "[[0 1]\n [2 3]]");
  EXPECT_EQ(SummarizeTensorV2(Range({}), 3), "0");
}

TEST(TensorSummaryTest, ValuesAsTensorFlowWritesThem) {
  Tensor f = Tensor::FromVector<float>(
      {1e-7f, 123456789.0f, std::nanf(""), -std::numeric_limits<float>::infinity(), 1.5f, 3.0f},
      TensorShape({6}));
  EXPECT_EQ(SummarizeTensorV2(f, -1), "[1e-07 123456792 nan -inf 1.5 3]");
  Tensor d = Tensor::FromVector<double>({0.1, 1.0 / 3, 1e20}, TensorShape({3}));
  EXPECT_EQ(SummarizeTensorV2(d, -1), "[0.1 0.33333333333333331 1e+20]");
  Tensor b = Tensor::FromVector<bool>({true, false}, TensorShape({2}));
  EXPECT_EQ(SummarizeTensorV1(b, 3), "1 0");
  Tensor s(DT_STRING, TensorShape({2}));
  s.data<std::string>()[0] = "hello";
  s.data<std::string>()[1] = "wo rld";
  EXPECT_EQ(SummarizeTensorV1(s, 3), "hello wo rld");
  EXPECT_EQ(SummarizeTensorV2(s, 3), "[\"hello\" \"wo rld\"]");
}

// Tensors of no elements: "[]" when dim 0 is 0, else the dims elided with no
// entry shown; and the "..." of summarize 0 follows the separator.
TEST(TensorSummaryTest, V2ZeroSizeDimsAndSummarizeZero) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t summarize;
    const char* expected;
  };
  for (const Case& c : std::vector<Case>{
           {{0}, 3, "[]"},
           {{0, 3}, 3, "[]"},
           {{0, 0}, -1, "[]"},
           {{0, 2, 0}, 3, "[]"},
           {{2, 0}, 3, "[\n ...]"},
           {{5, 0}, -1, "[\n ...]"},
           {{2, 0}, 0, "[\n ...]"},
           {{2, 0, 3}, 3, "[\n\n ...]"},
           {{3, 2, 0}, 3, "[\n\n ...]"},
           {{1, 0, 2}, 3, "[\n\n ...]"},
           {{2, 0, 1, 1}, -1, "[\n\n\n ...]"},
           {{2, 2, 0, 3}, 3, "[\n\n\n ...]"},
           {{3, 4}, 0, "[\n ...]"},
           {{2}, 0, "[ ...]"},
       }) {
    EXPECT_EQ(SummarizeTensorV2(Range(c.dims), c.summarize), c.expected)
        << *TensorShape::FromDims(c.dims) << " summarize " << c.summarize;
  }
  Tensor empty_strings(DT_STRING, TensorShape({2, 0}));
  EXPECT_EQ(SummarizeTensorV2(empty_strings, 3), "[\n ...]");
  EXPECT_EQ(SummarizeTensorV1(Range({2, 0}), 3), "");
}

// Strings as TensorFlow writes them: C escapes for quotes, backslash and
// control bytes (octal where C has no letter), other bytes (UTF-8) as they
// are; quoted in v2 only.
TEST(TensorSummaryTest, StringsAreEscaped) {
  Tensor s(DT_STRING, TensorShape({7}));
  const std::vector<std::string> values = {"a\"b",
                                           "c'd",
                                           "back\\slash",
                                           "new\nline\ttab\rcr",
                                           std::string("\x00\x01\x1b\x7f", 4),
                                           "\xc3\xa9\xff",
                                           ""};
  for (size_t i = 0; i < values.size(); ++i) s.data<std::string>()[i] = values[i];
  EXPECT_EQ(SummarizeTensorV2(s, -1),
            R"(["a\"b" "c\'d" "back\\slash" "new\nline\ttab\rcr" "\000\001\033\177" ")"
            "\xc3\xa9\xff"
            R"(" ""])");
  EXPECT_EQ(SummarizeTensorV1(s, -1),
            R"(a\"b c\'d back\\slash new\nline\ttab\rcr \000\001\033\177 )"
            "\xc3\xa9\xff ");
  Tensor scalar(DT_STRING, TensorShape({}));
  scalar.data<std::string>()[0] = "q\"uote\n";
  EXPECT_EQ(SummarizeTensorV2(scalar, 3), R"("q\"uote\n")");
  EXPECT_EQ(SummarizeTensorV1(scalar, 3), R"(q\"uote\n)");
}

}  // namespace
}  // namespace weir
