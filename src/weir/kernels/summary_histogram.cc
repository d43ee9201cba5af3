#include "weir/kernels/summary_histogram.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "weir/base/logging.h"

namespace weir {

const std::vector<double>& SummaryHistogram::DefaultLimits() {
  static const std::vector<double>* limits = [] {
    // Repeated multiplication, not pow(1.1, k): the limits must be
    // TensorFlow's to the last bit, so that equal inputs give equal protos.
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    auto* all = new std::vector<double>();
    all->reserve(2 * positive.size() + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all->push_back(-*it);
    all->push_back(0.0);
    all->insert(all->end(), positive.begin(), positive.end());
    return all;
  }();
  return *limits;
}

SummaryHistogram::SummaryHistogram()
    : limits_(DefaultLimits()), counts_(limits_.size(), 0.0), min_(DBL_MAX), max_(-DBL_MAX) {}

void SummaryHistogram::Add(double value) {
  DCHECK(std::isfinite(value));
  size_t bucket = std::upper_bound(limits_.begin(), limits_.end(), value) - limits_.begin();
  // DBL_MAX itself is not below the last limit; it belongs in the last
  // bucket (TensorFlow indexes one past the end there).
  bucket = std::min(bucket, limits_.size() - 1);
  counts_[bucket] += 1;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  num_ += 1;
  sum_ += value;
  sum_squares_ += value * value;
}

std::vector<SummaryHistogram::Bucket> SummaryHistogram::MergedBuckets() const {
  std::vector<Bucket> buckets;
  for (size_t i = 0; i < counts_.size();) {
    Bucket bucket{limits_[i], counts_[i]};
    ++i;
    if (bucket.count <= 0) {
      while (i < counts_.size() && counts_[i] <= 0) bucket.limit = limits_[i++];
    }
    buckets.push_back(bucket);
  }
  return buckets;
}

}  // namespace weir
