// Logging and invariant checks. CHECK is for programmer errors only: bad user
// input must come back as a Status, never through CHECK.
#pragma once

#include <sstream>

namespace weir {
namespace internal {

enum class Severity { kInfo, kWarning, kError, kFatal };

// Collects one message and writes it to stderr when destroyed; kFatal aborts.
class LogMessage {
 public:
  LogMessage(const char* file, int line, Severity severity);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  const char* file_;
  int line_;
  Severity severity_;
  std::ostringstream stream_;
};

// Lets the CHECK macro be used as an expression that swallows the stream.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace internal

// Minimum severity printed; set from WEIR_MIN_LOG_LEVEL (0 info .. 3 fatal).
int MinLogLevel();

}  // namespace weir

#define WEIR_LOG(severity)                                         \
  ::weir::internal::LogMessage(__FILE__, __LINE__,                 \
                               ::weir::internal::Severity::k##severity) \
      .stream()
#define LOG(severity) WEIR_LOG(severity)

#define CHECK(condition)                                    \
  (condition) ? (void)0                                     \
              : ::weir::internal::Voidify() &               \
                    WEIR_LOG(Fatal) << "Check failed: " #condition " "
#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_NE(a, b) CHECK((a) != (b))
#define CHECK_LT(a, b) CHECK((a) < (b))
#define CHECK_LE(a, b) CHECK((a) <= (b))
#define CHECK_GE(a, b) CHECK((a) >= (b))
#define CHECK_GT(a, b) CHECK((a) > (b))
#define CHECK_OK(expr)                                           \
  do {                                                           \
    ::weir::Status _weir_check_status = (expr);                  \
    CHECK(_weir_check_status.ok()) << _weir_check_status;        \
  } while (0)

#ifdef NDEBUG
#define DCHECK(condition) \
  while (false) CHECK(condition)
#else
#define DCHECK(condition) CHECK(condition)
#endif
#define DCHECK_EQ(a, b) DCHECK((a) == (b))
#define DCHECK_LT(a, b) DCHECK((a) < (b))
#define DCHECK_GE(a, b) DCHECK((a) >= (b))
