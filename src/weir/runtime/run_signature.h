// The signature of a Run in canonical order: Runs that name the same feeds,
// fetches and targets in another order share one compiled step. Used by
// every Session implementation (the local session, the distributed master).
//
//   CanonicalRun run = CanonicalizeRun(feed_names, fetches, targets);
//   ... compile or look up SignatureKey(run.signature) ...
//   args[k] = feeds[run.feed_order[k]].second;             // signature order
//   (*outputs)[run.fetch_order[k]] = std::move(results[k]);  // caller's order
#pragma once

#include <string>
#include <vector>

#include "weir/graph/subgraph.h"

namespace weir {

struct CanonicalRun {
  StepSignature signature;  // feeds, fetches and targets each sorted
  // signature.feeds[k] is the caller's feed feed_order[k]; likewise fetches.
  std::vector<int> feed_order;
  std::vector<int> fetch_order;
};

CanonicalRun CanonicalizeRun(const std::vector<std::string>& feed_names,
                             const std::vector<std::string>& fetches,
                             const std::vector<std::string>& targets);

// A string that identifies `signature`, for a cache of compiled steps.
std::string SignatureKey(const StepSignature& signature);

}  // namespace weir
