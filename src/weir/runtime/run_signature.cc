#include "weir/runtime/run_signature.h"

#include <algorithm>
#include <numeric>

namespace weir {
namespace {

// Indexes that sort `names`.
std::vector<int> SortOrder(const std::vector<std::string>& names) {
  std::vector<int> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  if (names.size() > 1) {
    std::sort(order.begin(), order.end(), [&](int a, int b) { return names[a] < names[b]; });
  }
  return order;
}

// Joins names into a key part; '\n' cannot appear in a node name.
void AppendKeyPart(std::string* key, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    key->append(name);
    key->push_back('\n');
  }
  key->push_back('|');
}

}  // namespace

CanonicalRun CanonicalizeRun(const std::vector<std::string>& feed_names,
                             const std::vector<std::string>& fetches,
                             const std::vector<std::string>& targets) {
  CanonicalRun run;
  run.feed_order = SortOrder(feed_names);
  run.fetch_order = SortOrder(fetches);
  run.signature.feeds.reserve(feed_names.size());
  run.signature.fetches.reserve(fetches.size());
  for (int i : run.feed_order) run.signature.feeds.push_back(feed_names[i]);
  for (int i : run.fetch_order) run.signature.fetches.push_back(fetches[i]);
  run.signature.targets = targets;
  if (targets.size() > 1) std::sort(run.signature.targets.begin(), run.signature.targets.end());
  return run;
}

std::string SignatureKey(const StepSignature& signature) {
  std::string key;
  AppendKeyPart(&key, signature.feeds);
  AppendKeyPart(&key, signature.fetches);
  AppendKeyPart(&key, signature.targets);
  return key;
}

}  // namespace weir
