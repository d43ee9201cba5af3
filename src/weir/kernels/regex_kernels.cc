// Kernels of the string family: full matches and replacements of RE2
// regular expressions (StaticRegexFullMatch, RegexFullMatch,
// StaticRegexReplace, RegexReplace), with TensorFlow's semantics, which are
// RE2's: UTF-8 patterns and inputs, FullMatch anchored at both ends,
// rewrites with \0..\9.
//
// RE2 matches in time linear in the input whatever the pattern (no
// backtracking), and compiles within a memory budget: a pattern too big for
// it (huge counted repetitions) is an InvalidArgument, not an allocation.
// Replacement output is bounded too, as a rewrite can multiply its input.
//
// One deliberate difference: a rewrite RE2 cannot apply (\2 with one group,
// a backslash before a letter or at the end) is InvalidArgument. TensorFlow
// 2.21 checks nothing there and returns the input unchanged (\2) or an
// empty string (\q).
#include "weir/kernels/regex_kernels.h"

#include <re2/re2.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "weir/base/checked_math.h"
#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/broadcast.h"

namespace weir {
namespace {

// Patterns in messages are cut to this many bytes.
constexpr size_t kShownPatternBytes = 200;

std::string ShownPattern(const std::string& pattern) {
  if (pattern.size() <= kShownPatternBytes) return StrCat("'", pattern, "'");
  return StrCat("'", pattern.substr(0, kShownPatternBytes), "'... (", pattern.size(), " bytes)");
}

// Cycles per element for sharding: RE2's DFA costs a few cycles per byte,
// plus a fixed cost to start a match.
double CyclesPerString(const Tensor& input) {
  const int64_t n = input.NumElements();
  if (n == 0) return 0;
  double bytes = 0;
  const std::string* strings = input.data<std::string>();
  for (int64_t i = 0; i < n; ++i) bytes += static_cast<double>(strings[i].size());
  return 200 + 10 * bytes / static_cast<double>(n);
}

Status CheckScalar(std::string_view op, const Tensor& t, std::string_view what) {
  if (t.dims() != 0) {
    return errors::InvalidArgument(op, ": ", what, " must be a scalar string but has shape ",
                                   t.shape());
  }
  return Status::OK();
}

// The length of the UTF-8 character at text[pos] when it is a whole, valid
// one (not overlong, at most U+10FFFF), else 1: how far a global
// replacement steps past an empty match, as RE2's GlobalReplace does.
size_t CharacterLength(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  int length;
  uint32_t value;
  if (lead < 0x80) return 1;
  if (lead >= 0xC0 && lead < 0xE0) {
    length = 2, value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead < 0xF0) {
    length = 3, value = lead & 0x0F;
  } else if (lead >= 0xF0 && lead < 0xF8) {
    length = 4, value = lead & 0x07;
  } else {
    return 1;
  }
  if (text.size() - pos < static_cast<size_t>(length)) return 1;
  for (int i = 1; i < length; ++i) {
    if ((byte(pos + i) & 0xC0) != 0x80) return 1;
    value = (value << 6) | (byte(pos + i) & 0x3F);
  }
  constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10FFFF) return 1;
  return static_cast<size_t>(length);
}

// The number of \N group references in a (checked) rewrite.
int64_t CountReferences(const std::string& rewrite) {
  int64_t count = 0;
  for (size_t i = 0; i + 1 < rewrite.size(); ++i) {
    if (rewrite[i] != '\\') continue;
    if (rewrite[i + 1] >= '0' && rewrite[i + 1] <= '9') ++count;
    ++i;  // the escaped character
  }
  return count;
}

}  // namespace

StatusOr<std::shared_ptr<const RE2>> CompileRegex(const std::string& pattern) {
  RE2::Options options;
  options.set_max_mem(kRegexMaxMemory);
  options.set_log_errors(false);
  auto regex = std::make_shared<const RE2>(pattern, options);
  if (!regex->ok()) {
    return errors::InvalidArgument("invalid pattern ", ShownPattern(pattern), ": ", regex->error());
  }
  return regex;
}

StatusOr<RegexRewrite> MakeRewrite(std::shared_ptr<const RE2> regex, const std::string& rewrite) {
  std::string error;
  if (!regex->CheckRewriteString(rewrite, &error)) {
    return errors::InvalidArgument("invalid rewrite ", ShownPattern(rewrite), " for pattern ",
                                   ShownPattern(regex->pattern()), ": ", error);
  }
  RegexRewrite out;
  out.regex = std::move(regex);
  out.rewrite = rewrite;
  out.groups = std::max(1, RE2::MaxSubmatch(rewrite) + 1);
  out.references = CountReferences(rewrite);
  // Each \N is two bytes of the rewrite; an escaped backslash writes one of its two.
  out.literal_bytes = static_cast<int64_t>(rewrite.size()) - 2 * out.references;
  return out;
}

// The loop of RE2's GlobalReplace (RE2::Replace when !global), written on
// RE2::Match so that the output's growth is checked before each rewrite: an
// empty match right where the previous match ended is skipped by one
// character, every other match is rewritten.
Status ReplaceMatches(const RegexRewrite& rewrite, bool global, const std::string& input,
                      int64_t max_bytes, std::string* output) {
  const RE2& regex = *rewrite.regex;
  std::vector<re2::StringPiece> groups(rewrite.groups);
  std::string result;
  size_t pos = 0;
  size_t last_end = std::string::npos;
  int64_t replaced = 0;
  while (pos <= input.size()) {
    if (!regex.Match(input, pos, input.size(), RE2::UNANCHORED, groups.data(), rewrite.groups)) {
      break;
    }
    const size_t start = static_cast<size_t>(groups[0].data() - input.data());
    result.append(input, pos, start - pos);
    if (groups[0].empty() && start == last_end) {
      const size_t step = pos < input.size() ? CharacterLength(input, pos) : 1;
      if (pos < input.size()) result.append(input, pos, step);
      pos += step;
      continue;
    }
    // At most the rewrite's literal text plus one match per group reference.
    std::optional<int64_t> growth =
        MultiplyWithoutOverflow(rewrite.references, static_cast<int64_t>(groups[0].size()));
    if (growth) growth = AddWithoutOverflow(*growth, rewrite.literal_bytes);
    if (growth) growth = AddWithoutOverflow(*growth, static_cast<int64_t>(result.size()));
    if (!growth || *growth > max_bytes) {
      return errors::ResourceExhausted(
          "replacing matches of ", ShownPattern(regex.pattern()), " in a string of ", input.size(),
          " bytes would make a string of more than ", max_bytes, " bytes");
    }
    if (!regex.Rewrite(&result, rewrite.rewrite, groups.data(), rewrite.groups)) {
      return errors::Internal("RE2 could not apply the checked rewrite ",
                              ShownPattern(rewrite.rewrite));
    }
    pos = start + groups[0].size();
    last_end = pos;
    ++replaced;
    if (!global) break;
  }
  if (replaced == 0) {
    *output = input;
    return Status::OK();
  }
  if (pos < input.size()) result.append(input, pos, std::string::npos);
  if (static_cast<int64_t>(result.size()) > max_bytes) {
    return errors::ResourceExhausted("replacing matches of ", ShownPattern(regex.pattern()),
                                     " in a string of ", input.size(),
                                     " bytes makes a string of more than ", max_bytes, " bytes");
  }
  *output = std::move(result);
  return Status::OK();
}

namespace {

void FullMatchAll(OpKernelContext* context, const RE2& regex) {
  const Tensor& input = context->input(0);
  Tensor* out;
  OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &out));
  const std::string* strings = input.data<std::string>();
  bool* matched = out->data<bool>();
  ShardOrInline(context->device()->intra_op_pool(), input.NumElements(), CyclesPerString(input),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) {
                    matched[i] = RE2::FullMatch(strings[i], regex);
                  }
                });
}

void ReplaceAll(OpKernelContext* context, const RegexRewrite& rewrite, bool global) {
  const Tensor& input = context->input(0);
  Tensor* out;
  OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &out));
  const std::string* strings = input.data<std::string>();
  std::string* replaced = out->data<std::string>();
  // The whole output's bytes, shared by the shards.
  std::atomic<int64_t> total{0};
  std::mutex mu;
  Status status;
  ShardOrInline(context->device()->intra_op_pool(), input.NumElements(), CyclesPerString(input),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) {
                    const int64_t left = kMaxRegexOutputBytes - total.load();
                    Status s = ReplaceMatches(rewrite, global, strings[i], left, &replaced[i]);
                    if (s.ok() && total.fetch_add(static_cast<int64_t>(replaced[i].size())) +
                                          static_cast<int64_t>(replaced[i].size()) >
                                      kMaxRegexOutputBytes) {
                      s = errors::ResourceExhausted("the replaced strings exceed ",
                                                    kMaxRegexOutputBytes, " bytes in all");
                    }
                    if (!s.ok()) {
                      std::lock_guard<std::mutex> lock(mu);
                      status.Update(s);
                      return;
                    }
                  }
                });
  OP_REQUIRES_OK(context, status.WithContext(StrCat(context->op_kernel().type_string(),
                                                    " of strings ", input.shape())));
}

// Keeps the last pattern compiled (steps usually feed the same one).
class RegexCache {
 public:
  StatusOr<std::shared_ptr<const RE2>> Get(const std::string& pattern) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (last_ != nullptr && last_->pattern() == pattern) return last_;
    }
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const RE2> regex, CompileRegex(pattern));
    std::lock_guard<std::mutex> lock(mu_);
    last_ = regex;
    return regex;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const RE2> last_;
};

Status ConstructionError(OpKernelConstruction* context, const Status& status) {
  return status.WithContext(context->node().Describe());
}

class StaticRegexFullMatchOp : public OpKernel {
 public:
  explicit StaticRegexFullMatchOp(OpKernelConstruction* context) : OpKernel(context) {
    std::string pattern;
    Status status = context->GetAttr("pattern", &pattern);
    if (!status.ok()) {
      context->SetStatus(status);
      return;
    }
    StatusOr<std::shared_ptr<const RE2>> regex = CompileRegex(pattern);
    if (!regex.ok()) {
      context->SetStatus(ConstructionError(context, regex.status()));
      return;
    }
    regex_ = *std::move(regex);
  }

  void Compute(OpKernelContext* context) override { FullMatchAll(context, *regex_); }

 private:
  std::shared_ptr<const RE2> regex_;
};

class RegexFullMatchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& pattern = context->input(1);
    OP_REQUIRES_OK(context, CheckScalar("RegexFullMatch", pattern, "pattern"));
    StatusOr<std::shared_ptr<const RE2>> regex = cache_.Get(pattern.scalar<std::string>());
    OP_REQUIRES_OK(context, regex.status().WithContext("RegexFullMatch"));
    FullMatchAll(context, **regex);
  }

 private:
  RegexCache cache_;
};

class StaticRegexReplaceOp : public OpKernel {
 public:
  explicit StaticRegexReplaceOp(OpKernelConstruction* context) : OpKernel(context) {
    std::string pattern, rewrite;
    Status status = context->GetAttr("pattern", &pattern);
    status.Update(context->GetAttr("rewrite", &rewrite));
    status.Update(context->GetAttr("replace_global", &global_));
    if (!status.ok()) {
      context->SetStatus(status);
      return;
    }
    StatusOr<std::shared_ptr<const RE2>> regex = CompileRegex(pattern);
    if (!regex.ok()) {
      context->SetStatus(ConstructionError(context, regex.status()));
      return;
    }
    StatusOr<RegexRewrite> made = MakeRewrite(*std::move(regex), rewrite);
    if (!made.ok()) {
      context->SetStatus(ConstructionError(context, made.status()));
      return;
    }
    rewrite_ = *std::move(made);
  }

  void Compute(OpKernelContext* context) override { ReplaceAll(context, rewrite_, global_); }

 private:
  RegexRewrite rewrite_;
  bool global_ = true;
};

class RegexReplaceOp : public OpKernel {
 public:
  explicit RegexReplaceOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("replace_global", &global_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& pattern = context->input(1);
    const Tensor& rewrite = context->input(2);
    OP_REQUIRES_OK(context, CheckScalar("RegexReplace", pattern, "pattern"));
    OP_REQUIRES_OK(context, CheckScalar("RegexReplace", rewrite, "rewrite"));
    StatusOr<std::shared_ptr<const RE2>> regex = cache_.Get(pattern.scalar<std::string>());
    OP_REQUIRES_OK(context, regex.status().WithContext("RegexReplace"));
    StatusOr<RegexRewrite> made = MakeRewrite(*std::move(regex), rewrite.scalar<std::string>());
    OP_REQUIRES_OK(context, made.status().WithContext("RegexReplace"));
    ReplaceAll(context, *made, global_);
  }

 private:
  RegexCache cache_;
  bool global_ = true;
};

}  // namespace

void RegisterStringKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("StaticRegexFullMatch"), MakeKernel<StaticRegexFullMatchOp>);
  registry->Register(KernelBuilder("RegexFullMatch"), MakeKernel<RegexFullMatchOp>);
  registry->Register(KernelBuilder("StaticRegexReplace"), MakeKernel<StaticRegexReplaceOp>);
  registry->Register(KernelBuilder("RegexReplace"), MakeKernel<RegexReplaceOp>);
}

}  // namespace weir
