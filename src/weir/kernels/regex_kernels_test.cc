// The regex string kernels against independent values: hand examples, and
// Python's `re` (re.fullmatch, re.sub with count 0 and 1, values pasted
// below) on patterns where Python and RE2 agree (no empty matches, ASCII
// \w, \g<0> for RE2's \0). ReplaceMatches is also checked against RE2's
// own GlobalReplace and Replace on many inputs, empty matches and invalid
// UTF-8 included.
#include "weir/kernels/regex_kernels.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <chrono>
#include <random>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

Tensor Strings(const std::vector<std::string>& values) {
  return Tensor::FromVector<std::string>(values);
}

std::vector<std::string> ToStrings(const Tensor& t) {
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.NumElements());
}

std::vector<bool> ToBools(const Tensor& t) {
  return std::vector<bool>(t.data<bool>(), t.data<bool>() + t.NumElements());
}

struct MatchCase {
  std::string pattern;
  std::vector<std::string> inputs;
  std::vector<bool> matched;  // re.fullmatch(pattern, input) is not None
};

const std::vector<MatchCase>& MatchCases() {
  static const auto* cases = new std::vector<MatchCase>{
      {"^s3://.*", {"s3://bucket/model", "/tmp/s3://x", "", "s3:/"}, {true, false, false, false}},
      {"[a-z]+\\d*", {"abc123", "abc", "123", "abc12x", ""}, {true, true, false, false, false}},
      {"(ab)+", {"ababab", "aba", "ab", ""}, {true, false, true, false}},
      {".*x.*", {"x", "abxcd", "abc", "a\nx"}, {true, true, false, false}},
      {"\\w+@\\w+\\.com", {"user@host.com", "user@host.comm", "@host.com"}, {true, false, false}},
      {"é+", {"é", "ééé", "e", "éa"}, {true, true, false, false}},
      {"", {"", "a"}, {true, false}},
  };
  return *cases;
}

TEST(RegexFullMatchTest, StaticAndDynamicMatchPythonsRe) {
  for (const MatchCase& c : MatchCases()) {
    auto stat = RunKernel("StaticRegexFullMatch", {{"pattern", c.pattern}}, {Strings(c.inputs)});
    ASSERT_TRUE(stat.ok()) << c.pattern << ": " << stat.status();
    EXPECT_EQ(ToBools((*stat)[0]), c.matched) << c.pattern;
    auto dyn = RunKernel("RegexFullMatch", {},
                         {Strings(c.inputs), Tensor::Scalar<std::string>(c.pattern)});
    ASSERT_TRUE(dyn.ok()) << c.pattern << ": " << dyn.status();
    EXPECT_EQ(ToBools((*dyn)[0]), c.matched) << c.pattern;
  }
}

TEST(RegexFullMatchTest, KeepsTheInputsShape) {
  for (const TensorShape& shape :
       {TensorShape({}), TensorShape({0}), TensorShape({2, 0, 3}), TensorShape({2, 3})}) {
    Tensor input(DT_STRING, shape);
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      input.data<std::string>()[i] = i % 2 == 0 ? "s3://x" : "/tmp/x";
    }
    auto out = RunKernel("StaticRegexFullMatch", {{"pattern", "^s3://.*"}}, {input});
    ASSERT_TRUE(out.ok()) << shape << ": " << out.status();
    ASSERT_EQ((*out)[0].shape(), shape);
    ASSERT_EQ((*out)[0].dtype(), DT_BOOL);
    for (int64_t i = 0; i < shape.num_elements(); ++i) {
      EXPECT_EQ((*out)[0].data<bool>()[i], i % 2 == 0) << shape << " at " << i;
    }
  }
}

TEST(RegexFullMatchTest, ManyStringsAcrossThreads) {
  // Enough work for the intra-op pool to shard it.
  std::vector<std::string> inputs;
  for (int i = 0; i < 20000; ++i) inputs.push_back(std::to_string(i) + (i % 3 == 0 ? "x" : ""));
  auto out = RunKernel("StaticRegexFullMatch", {{"pattern", "[0-9]+x"}}, {Strings(inputs)});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 20000; ++i) ASSERT_EQ((*out)[0].data<bool>()[i], i % 3 == 0) << i;
}

struct ReplaceCase {
  std::string pattern, rewrite;
  std::vector<std::string> inputs, global, first;  // re.sub(count=0), re.sub(count=1)
};

TEST(RegexReplaceTest, GlobalAndFirstMatchPythonsRe) {
  const std::vector<ReplaceCase> cases = {
      {"[0-9]+",
       "#",
       {"a1b22c333", "none", "", "7"},
       {"a#b#c#", "none", "", "#"},
       {"a#b22c333", "none", "", "#"}},
      {"(\\w+)@(\\w+)",
       "\\2 at \\1",
       {"mail bob@home and al@work", "x@"},
       {"mail home at bob and work at al", "x@"},
       {"mail home at bob and al@work", "x@"}},
      {"a", "\\\\", {"banana"}, {"b\\n\\n\\"}, {"b\\nana"}},
      {"\\s+", " ", {"  two  spaces\t\nhere "}, {" two spaces here "}, {" two  spaces\t\nhere "}},
      {"(é)", "[\\1]", {"café é"}, {"caf[é] [é]"}, {"caf[é] é"}},
      {"o", "\\0\\0", {"foo boo"}, {"foooo boooo"}, {"fooo boo"}},
  };
  for (const ReplaceCase& c : cases) {
    for (bool global : {true, false}) {
      const std::vector<std::string>& expected = global ? c.global : c.first;
      auto stat =
          RunKernel("StaticRegexReplace",
                    {{"pattern", c.pattern}, {"rewrite", c.rewrite}, {"replace_global", global}},
                    {Strings(c.inputs)});
      ASSERT_TRUE(stat.ok()) << c.pattern << ": " << stat.status();
      EXPECT_EQ(ToStrings((*stat)[0]), expected) << c.pattern << " global=" << global;
      auto dyn = RunKernel("RegexReplace", {{"replace_global", global}},
                           {Strings(c.inputs), Tensor::Scalar<std::string>(c.pattern),
                            Tensor::Scalar<std::string>(c.rewrite)});
      ASSERT_TRUE(dyn.ok()) << c.pattern << ": " << dyn.status();
      EXPECT_EQ(ToStrings((*dyn)[0]), expected) << c.pattern << " global=" << global;
    }
  }
}

TEST(RegexReplaceTest, EmptyMatches) {
  // By hand: an empty match is replaced, but not one right where the
  // previous match ended (RE2's rule; Python's re differs there).
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"", "-", "abc", "-a-b-c-"},
      {"", "-", "", "-"},
      {"x*", "-", "abxd", "-a-b-d-"},
      {"x*", "-", "xx", "-"},
      {"b*", "<\\0>", "abba", "<>a<bb>a<>"},
      {"", "-", "é!", "-é-!-"},  // steps over a whole UTF-8 character
  };
  for (const auto& [pattern, rewrite, input, expected] : cases) {
    auto out = RunKernel("StaticRegexReplace", {{"pattern", pattern}, {"rewrite", rewrite}},
                         {Tensor::Scalar<std::string>(input)});
    ASSERT_TRUE(out.ok()) << pattern << ": " << out.status();
    EXPECT_EQ((*out)[0].scalar<std::string>(), expected) << pattern << " on " << input;
  }
}

TEST(RegexReplaceTest, AgreesWithRe2OnRandomInputs) {
  const std::vector<std::pair<std::string, std::string>> rules = {
      {"", "-"},       {"a*", "<\\0>"}, {"(a|b)(c?)", "\\2\\1"}, {"\\b", "|"},
      {"[^a-c]", "."}, {".", "\\0\\0"}, {"c+$", "END"},          {"^", "S"},
      {"(?i)A+", "x"}, {"\\pL", "L"},   {"é|\\x{100}", "U"},     {"a??", "q"},
  };
  std::mt19937 rng(7);
  const std::string alphabet[] = {"a",        "b",    "c",    " ",        "é",
                                  "\xc4\x80", "\xff", "\xc3", "\xe2\x82", "\xf4\x90\x80\x80",
                                  "\xc0\xaf", "\n"};
  for (const auto& [pattern, rewrite] : rules) {
    StatusOr<std::shared_ptr<const RE2>> regex = CompileRegex(pattern);
    ASSERT_TRUE(regex.ok()) << regex.status();
    StatusOr<RegexRewrite> made = MakeRewrite(*regex, rewrite);
    ASSERT_TRUE(made.ok()) << made.status();
    for (int trial = 0; trial < 300; ++trial) {
      std::string input;
      const int length = static_cast<int>(rng() % 12);
      for (int i = 0; i < length; ++i) input += alphabet[rng() % std::size(alphabet)];
      for (bool global : {true, false}) {
        std::string expected = input;
        if (global) {
          RE2::GlobalReplace(&expected, **regex, rewrite);
        } else {
          RE2::Replace(&expected, **regex, rewrite);
        }
        std::string got;
        ASSERT_TRUE(ReplaceMatches(*made, global, input, kMaxRegexOutputBytes, &got).ok());
        ASSERT_EQ(got, expected) << pattern << " global=" << global << " on '" << input << "'";
      }
    }
  }
}

TEST(RegexReplaceTest, KeepsTheInputsShape) {
  Tensor input(DT_STRING, TensorShape({2, 0}));
  auto out = RunKernel("StaticRegexReplace", {{"pattern", "a"}, {"rewrite", "b"}}, {input});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 0}));
  input = Tensor::FromVector<std::string>({"a", "ba", "c", "aa"}, TensorShape({2, 2}));
  out = RunKernel("StaticRegexReplace", {{"pattern", "a"}, {"rewrite", "b"}}, {input});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToStrings((*out)[0]), (std::vector<std::string>{"b", "bb", "c", "bb"}));
}

TEST(RegexOpsTest, InvalidPatternNamesTheNodeAndPattern) {
  auto stat =
      RunKernel("StaticRegexFullMatch", {{"pattern", "(unclosed"}}, {Strings({"x"})}, "check_path");
  ASSERT_EQ(stat.status().code(), Code::kInvalidArgument);
  EXPECT_NE(stat.status().message().find("check_path"), std::string::npos) << stat.status();
  EXPECT_NE(stat.status().message().find("'(unclosed'"), std::string::npos) << stat.status();
  EXPECT_NE(stat.status().message().find("missing )"), std::string::npos) << stat.status();

  auto dyn = RunKernel("RegexFullMatch", {}, {Strings({"x"}), Tensor::Scalar<std::string>("a**")});
  ASSERT_EQ(dyn.status().code(), Code::kInvalidArgument);
  EXPECT_NE(dyn.status().message().find("'a**'"), std::string::npos) << dyn.status();

  auto rep = RunKernel("StaticRegexReplace", {{"pattern", "[z-a]"}, {"rewrite", ""}},
                       {Strings({"x"})}, "clean");
  ASSERT_EQ(rep.status().code(), Code::kInvalidArgument);
  EXPECT_NE(rep.status().message().find("clean"), std::string::npos) << rep.status();
  EXPECT_NE(rep.status().message().find("'[z-a]'"), std::string::npos) << rep.status();
}

TEST(RegexOpsTest, InvalidRewriteAndNonScalarArguments) {
  // \2 with one group, and a backslash before a letter.
  for (const char* rewrite : {"\\2", "\\q"}) {
    auto stat = RunKernel("StaticRegexReplace", {{"pattern", "(a)"}, {"rewrite", rewrite}},
                          {Strings({"a"})});
    EXPECT_EQ(stat.status().code(), Code::kInvalidArgument) << rewrite;
    EXPECT_NE(stat.status().message().find(rewrite), std::string::npos) << stat.status();
    auto dyn = RunKernel(
        "RegexReplace", {},
        {Strings({"a"}), Tensor::Scalar<std::string>("(a)"), Tensor::Scalar<std::string>(rewrite)});
    EXPECT_EQ(dyn.status().code(), Code::kInvalidArgument) << rewrite;
  }
  auto dyn = RunKernel("RegexFullMatch", {}, {Strings({"a"}), Strings({"a", "b"})});
  EXPECT_EQ(dyn.status().code(), Code::kInvalidArgument);
  EXPECT_NE(dyn.status().message().find("scalar"), std::string::npos) << dyn.status();
}

TEST(RegexOpsTest, HostilePatternsFinishFastOrFail) {
  using Clock = std::chrono::steady_clock;
  // Catastrophic for a backtracking engine: RE2 is linear in the input.
  const std::string long_input(1 << 20, 'a');
  auto start = Clock::now();
  for (const char* pattern : {"(a*)*b", "(a|aa)*c", "(x+x+)+y|(a+)+$"}) {
    auto out = RunKernel("StaticRegexFullMatch", {{"pattern", pattern}},
                         {Tensor::Scalar<std::string>(long_input)});
    ASSERT_TRUE(out.ok()) << pattern << ": " << out.status();
    EXPECT_EQ((*out)[0].scalar<bool>(), std::string(pattern) == "(x+x+)+y|(a+)+$") << pattern;
  }
  auto replaced = RunKernel("StaticRegexReplace", {{"pattern", "(a|aa)*b?"}, {"rewrite", "x"}},
                            {Tensor::Scalar<std::string>(long_input)});
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ((*replaced)[0].scalar<std::string>(), "x");
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0);

  // A DFA of 2^20 states outgrows the memory budget: RE2 falls back to its
  // NFA, still linear but slower (seconds per MiB), so a smaller input here.
  std::string ab(1 << 16, 'a');
  std::mt19937 rng(3);
  for (char& c : ab) c = "ab"[rng() % 2];
  ab[ab.size() - 22] = 'a';
  ab.back() = 'c';
  start = Clock::now();
  auto exploding = RunKernel("StaticRegexFullMatch", {{"pattern", "(a|b)*a(a|b){20}"}},
                             {Tensor::Scalar<std::string>(ab)});
  ASSERT_TRUE(exploding.ok()) << exploding.status();
  EXPECT_FALSE((*exploding)[0].scalar<bool>());
  auto exploding_replace =
      RunKernel("StaticRegexReplace", {{"pattern", "a(a|b){20}c"}, {"rewrite", "<\\1>"}},
                {Tensor::Scalar<std::string>(ab)});
  ASSERT_TRUE(exploding_replace.ok()) << exploding_replace.status();
  const std::string& replaced_ab = (*exploding_replace)[0].scalar<std::string>();
  // By hand: the only match is the 'a' 22 from the end through the final 'c',
  // replaced by its last group (the character before the 'c').
  EXPECT_EQ(replaced_ab, ab.substr(0, ab.size() - 22) + "<" + ab[ab.size() - 2] + ">");
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0);

  // Too big to compile within the memory budget: an error, not gigabytes.
  start = Clock::now();
  for (const char* pattern : {"\\pL{1000}", "[\\pL\\pN]{1000}", "(\\pL{100}){10}"}) {
    auto out = RunKernel("StaticRegexFullMatch", {{"pattern", pattern}}, {Strings({"a"})});
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << pattern;
    EXPECT_NE(out.status().message().find("pattern too large"), std::string::npos) << out.status();
    auto dyn = RunKernel(
        "RegexReplace", {},
        {Strings({"a"}), Tensor::Scalar<std::string>(pattern), Tensor::Scalar<std::string>("")});
    EXPECT_EQ(dyn.status().code(), Code::kInvalidArgument) << pattern;
  }
  // Counted repetitions past RE2's limit of 1000, alone or nested.
  for (const char* pattern : {"a{1001}", "((a{1000}){1000}){1000}"}) {
    auto out = RunKernel("StaticRegexFullMatch", {{"pattern", pattern}}, {Strings({"a"})});
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << pattern;
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0);
}

TEST(RegexOpsTest, ReplacementOutputIsBounded) {
  // Every empty match rewritten to 1000 bytes: 1001 KB from 1 KB.
  StatusOr<std::shared_ptr<const RE2>> regex = CompileRegex("");
  ASSERT_TRUE(regex.ok());
  StatusOr<RegexRewrite> made = MakeRewrite(*regex, std::string(1000, 'z'));
  ASSERT_TRUE(made.ok());
  std::string out;
  Status s = ReplaceMatches(*made, true, std::string(1000, 'a'), 100000, &out);
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s;
  EXPECT_TRUE(ReplaceMatches(*made, true, std::string(1000, 'a'), 2000000, &out).ok());
  EXPECT_EQ(out.size(), 1000u + 1001u * 1000u);
  // \0 repeated: each match's copies are counted before they are made.
  made = MakeRewrite(*CompileRegex(".+"), "\\0\\0\\0\\0");
  ASSERT_TRUE(made.ok());
  s = ReplaceMatches(*made, true, std::string(1000, 'a'), 3999, &out);
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s;
  ASSERT_TRUE(ReplaceMatches(*made, true, std::string(1000, 'a'), 4000, &out).ok());
  EXPECT_EQ(out, std::string(4000, 'a'));
}

}  // namespace
}  // namespace weir
