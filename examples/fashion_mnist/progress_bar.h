// The progress bar of one epoch, redrawn in place on stderr when it is a
// terminal: examples done, running loss and accuracy, examples/s and the
// time left at that rate ("ETA m:ss").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace weir {
namespace fashion_mnist {

// "m:ss", or "h:mm:ss" from an hour on; "-:--" when unknown (negative,
// infinite or NaN).
std::string FormatDuration(double seconds);

class ProgressBar {
 public:
  // Draws nothing unless `enabled` and stderr is a terminal.
  ProgressBar(bool enabled, int epoch, int64_t total);
  ~ProgressBar();  // ends the bar's line if Finish() was not called

  // `done` of `total` examples, at `examples_per_sec` (0: not known yet).
  // Redraws at most every 0.2 s, and always at the end.
  void Update(int64_t done, double loss, double accuracy, double examples_per_sec);

  // Ends the bar's line, so what is printed next starts on a line of its own.
  void Finish();

 private:
  bool enabled_;
  int epoch_;
  int64_t total_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace fashion_mnist
}  // namespace weir
