#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace weir {
namespace fashion_mnist {

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e7) return "-:--";
  const int64_t total = static_cast<int64_t>(std::llround(seconds));
  const int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  char text[32];
  if (hours > 0) {
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(secs));
  } else {
    std::snprintf(text, sizeof(text), "%lld:%02lld", static_cast<long long>(minutes),
                  static_cast<long long>(secs));
  }
  return text;
}

ProgressBar::ProgressBar(bool enabled, int epoch, int64_t total)
    : enabled_(enabled && ::isatty(STDERR_FILENO)), epoch_(epoch), total_(total) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(int64_t done, double loss, double accuracy, double examples_per_sec) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && drawn_ && std::chrono::duration<double>(now - last_).count() < 0.2) return;
  last_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const int filled =
      static_cast<int>(kWidth * std::min(done, total_) / std::max<int64_t>(total_, 1));
  std::string bar(filled, '=');
  bar.resize(kWidth, ' ');
  const double left =
      examples_per_sec > 0 ? static_cast<double>(total_ - done) / examples_per_sec : -1;
  // The trailing spaces wipe what a longer previous line left behind.
  std::fprintf(stderr, "\repoch %d [%s] %lld/%lld loss %.4f acc %.4f %.0f ex/s ETA %s   ", epoch_,
               bar.c_str(), static_cast<long long>(done), static_cast<long long>(total_), loss,
               accuracy, examples_per_sec, FormatDuration(left).c_str());
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (enabled_ && drawn_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  drawn_ = false;
}

}  // namespace fashion_mnist
}  // namespace weir
