#include "weir/base/logging.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace weir {

int MinLogLevel() {
  static const int level = [] {
    const char* env = std::getenv("WEIR_MIN_LOG_LEVEL");
    return env ? std::atoi(env) : 0;
  }();
  return level;
}

namespace internal {

LogMessage::LogMessage(const char* file, int line, Severity severity)
    : file_(file), line_(line), severity_(severity) {}

LogMessage::~LogMessage() {
  static const char kLetters[] = "IWEF";
  int level = static_cast<int>(severity_);
  if (level >= MinLogLevel() || severity_ == Severity::kFatal) {
    const char* base = std::strrchr(file_, '/');
    std::fprintf(stderr, "%c %s:%d] %s\n", kLetters[level], base ? base + 1 : file_,
                 line_, stream_.str().c_str());
  }
  if (severity_ == Severity::kFatal) std::abort();
}

}  // namespace internal
}  // namespace weir
