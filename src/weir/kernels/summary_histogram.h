// The histogram HistogramSummary emits: TensorFlow's default buckets, whose
// limits grow by 10% from 1e-12 in both signs (-DBL_MAX, ..., -1e-12, 0,
// 1e-12, ..., DBL_MAX). Bucket i counts the values v with
// limit[i-1] <= v < limit[i].
#pragma once

#include <vector>

namespace weir {

class SummaryHistogram {
 public:
  SummaryHistogram();

  // REQUIRES: `value` is finite.
  void Add(double value);

  struct Bucket {
    double limit;  // exclusive upper limit
    double count;
  };
  // The buckets in order, each run of empty buckets merged into one empty
  // bucket with the run's last limit (what TensorFlow writes); never empty.
  std::vector<Bucket> MergedBuckets() const;

  // With no values, min is DBL_MAX and max is -DBL_MAX (as in TensorFlow).
  double min() const { return min_; }
  double max() const { return max_; }
  double num() const { return num_; }
  double sum() const { return sum_; }
  double sum_squares() const { return sum_squares_; }

  static const std::vector<double>& DefaultLimits();

 private:
  const std::vector<double>& limits_;
  std::vector<double> counts_;
  double min_;
  double max_;
  double num_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
};

}  // namespace weir
