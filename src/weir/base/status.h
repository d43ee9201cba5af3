// Status and StatusOr: how every fallible call in Weir reports failure.
//
// A Status is OK or carries a canonical code (TensorFlow's numbering) and a
// message. Messages name the node, op, dtypes and shapes involved so the user
// can find the mistake without a debugger. The core never throws.
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "weir/base/str_util.h"

namespace weir {

enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,  // missing or wrong credentials (gRPC's UNAUTHENTICATED)
};

// The largest code: a number from the wire above it (or below kOk) is not a
// code, and callers read it as kUnknown.
inline constexpr Code kLastCode = Code::kUnauthenticated;

std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  Code code() const { return ok() ? Code::kOk : state_->code; }
  const std::string& message() const;

  // "InvalidArgument: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message has `context` prepended ("context: message").
  Status WithContext(std::string_view context) const;

  // Keeps the first error: if this is OK, becomes `other`.
  void Update(const Status& other) {
    if (ok() && !other.ok()) *this = other;
  }

  bool operator==(const Status& other) const {
    return code() == other.code() && message() == other.message();
  }

 private:
  struct State {
    Code code;
    std::string message;
  };
  // Null when OK, so an OK Status is one pointer and free to copy.
  std::shared_ptr<const State> state_;
};

std::ostream& operator<<(std::ostream& os, const Status& status);

// Constructors for each canonical code; arguments are concatenated.
#define WEIR_DEFINE_ERROR(Name)                             \
  template <typename... Args>                               \
  Status Name(const Args&... args) {                        \
    return Status(Code::k##Name, ::weir::StrCat(args...));  \
  }                                                         \
  inline bool Is##Name(const Status& s) { return s.code() == Code::k##Name; }
namespace errors {
WEIR_DEFINE_ERROR(Cancelled)
WEIR_DEFINE_ERROR(Unknown)
WEIR_DEFINE_ERROR(InvalidArgument)
WEIR_DEFINE_ERROR(DeadlineExceeded)
WEIR_DEFINE_ERROR(NotFound)
WEIR_DEFINE_ERROR(AlreadyExists)
WEIR_DEFINE_ERROR(PermissionDenied)
WEIR_DEFINE_ERROR(ResourceExhausted)
WEIR_DEFINE_ERROR(FailedPrecondition)
WEIR_DEFINE_ERROR(Aborted)
WEIR_DEFINE_ERROR(OutOfRange)
WEIR_DEFINE_ERROR(Unimplemented)
WEIR_DEFINE_ERROR(Internal)
WEIR_DEFINE_ERROR(Unavailable)
WEIR_DEFINE_ERROR(DataLoss)
WEIR_DEFINE_ERROR(Unauthenticated)
}  // namespace errors
#undef WEIR_DEFINE_ERROR

namespace internal {
// Aborts the process with "Check failed: StatusOr::value() on an error: <status>".
[[noreturn]] void DieOnValueOfError(const Status& status);
}  // namespace internal

// StatusOr<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT: implicit by design
    assert(!status.ok() && "StatusOr built from an OK Status");
    if (status_.ok()) status_ = errors::Internal("StatusOr built from an OK Status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok(). On an error these CHECK-fail, printing the status.
  T& value() & { return CheckedValue(); }
  const T& value() const& { return CheckedValue(); }
  T&& value() && { return std::move(CheckedValue()); }
  T& operator*() & { return CheckedValue(); }
  const T& operator*() const& { return CheckedValue(); }
  T&& operator*() && { return std::move(CheckedValue()); }
  T* operator->() { return &CheckedValue(); }
  const T* operator->() const { return &CheckedValue(); }

 private:
  T& CheckedValue() {
    if (!value_.has_value()) internal::DieOnValueOfError(status_);
    return *value_;
  }
  const T& CheckedValue() const {
    if (!value_.has_value()) internal::DieOnValueOfError(status_);
    return *value_;
  }

  Status status_;
  std::optional<T> value_;
};

}  // namespace weir

#define WEIR_STATUS_CONCAT_INNER(a, b) a##b
#define WEIR_STATUS_CONCAT(a, b) WEIR_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` is not OK.
#define WEIR_RETURN_IF_ERROR(expr)                          \
  do {                                                      \
    ::weir::Status _weir_status = (expr);                   \
    if (!_weir_status.ok()) return _weir_status;            \
  } while (0)

// `lhs = value of expr`, or return its error.
#define WEIR_ASSIGN_OR_RETURN(lhs, expr) \
  WEIR_ASSIGN_OR_RETURN_IMPL(WEIR_STATUS_CONCAT(_weir_statusor_, __LINE__), lhs, expr)
#define WEIR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
