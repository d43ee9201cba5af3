// Step statistics: what ran where and when in one step, collected on
// request (RunOptions::trace) and exported as a Chrome trace.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace weir {

struct NodeExecStats {
  std::string node_name;
  std::string op;
  std::string device;
  int thread_id = 0;          // small integer per OS thread
  int64_t start_micros = 0;   // since the Unix epoch
  int64_t end_micros = 0;
  int64_t bytes_allocated = 0;  // outputs and temporaries
  std::string frame_name;       // the loop frame; empty in the root frame
  int64_t iteration = 0;        // the iteration within that frame
};

struct StepStats {
  std::vector<NodeExecStats> nodes;
};

// Thread-safe sink for NodeExecStats from every executor of a step.
class StepStatsCollector {
 public:
  void Save(NodeExecStats stats) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.nodes.push_back(std::move(stats));
  }
  StepStats Finalize() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(stats_);
  }

 private:
  std::mutex mu_;
  StepStats stats_;
};

// A small stable id for the calling thread, for traces.
int CurrentThreadTraceId();
int64_t NowMicros();

}  // namespace weir
