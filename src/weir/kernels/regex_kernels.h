// The string family's kernels (regex_kernels.cc): their registration,
// listed in all_kernels.cc (declared here rather than in all_kernels.h,
// which every kernel includes), and the RE2 pieces they share with their
// test: compiling a pattern within Weir's memory budget and replacing
// matches with a bounded output.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "weir/base/status.h"

namespace re2 {
class RE2;
}

namespace weir {

class KernelRegistry;

// StaticRegexFullMatch, RegexFullMatch, StaticRegexReplace, RegexReplace.
void RegisterStringKernels(KernelRegistry* registry);

// RE2's own default program budget (TensorFlow compiles with RE2's
// defaults), stated here so that a pattern too big for it fails the same
// way everywhere: RE2 refuses to compile it instead of allocating.
inline constexpr int64_t kRegexMaxMemory = int64_t{8} << 20;
// The most bytes a replacement kernel's output strings may hold in all.
inline constexpr int64_t kMaxRegexOutputBytes = int64_t{1} << 31;

// `pattern` compiled with RE2 (UTF-8, kRegexMaxMemory); InvalidArgument
// naming the pattern and RE2's error when it does not compile.
StatusOr<std::shared_ptr<const re2::RE2>> CompileRegex(const std::string& pattern);

// A compiled pattern with a rewrite checked against it.
struct RegexRewrite {
  std::shared_ptr<const re2::RE2> regex;
  std::string rewrite;
  int groups = 1;          // the submatches the rewrite needs, the whole match included
  int64_t references = 0;     // how many \N the rewrite holds
  int64_t literal_bytes = 0;  // the bytes it writes besides them
};

// InvalidArgument when `rewrite` refers to a group the pattern lacks or has
// a backslash before something other than a digit or a backslash.
StatusOr<RegexRewrite> MakeRewrite(std::shared_ptr<const re2::RE2> regex,
                                   const std::string& rewrite);

// `input` with the first match (every non-overlapping match when `global`)
// of the pattern replaced by the rewrite, as RE2::Replace and
// RE2::GlobalReplace do. ResourceExhausted, before allocating, when the
// result would exceed `max_bytes`.
Status ReplaceMatches(const RegexRewrite& rewrite, bool global, const std::string& input,
                      int64_t max_bytes, std::string* output);

}  // namespace weir
