#include "weir/base/status.h"

#include <cstdlib>

#include "weir/base/logging.h"

namespace weir {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kCancelled: return "Cancelled";
    case Code::kUnknown: return "Unknown";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kDeadlineExceeded: return "DeadlineExceeded";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kResourceExhausted: return "ResourceExhausted";
    case Code::kFailedPrecondition: return "FailedPrecondition";
    case Code::kAborted: return "Aborted";
    case Code::kOutOfRange: return "OutOfRange";
    case Code::kUnimplemented: return "Unimplemented";
    case Code::kInternal: return "Internal";
    case Code::kUnavailable: return "Unavailable";
    case Code::kDataLoss: return "DataLoss";
    case Code::kUnauthenticated: return "Unauthenticated";
  }
  return "UnknownCode";
}

Status::Status(Code code, std::string message) {
  if (code != Code::kOk) {
    state_ = std::make_shared<const State>(State{code, std::move(message)});
  }
}

const std::string& Status::message() const {
  static const std::string* const kEmpty = new std::string();
  return ok() ? *kEmpty : state_->message;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return StrCat(CodeName(code()), ": ", message());
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code(), StrCat(context, ": ", message()));
}

std::ostream& operator<<(std::ostream& os, const Status& status) { return os << status.ToString(); }

namespace internal {

void DieOnValueOfError(const Status& status) {
  WEIR_LOG(Fatal) << "Check failed: StatusOr::value() on an error: " << status;
  std::abort();  // LogMessage(kFatal) aborts; this tells the compiler so.
}

}  // namespace internal

}  // namespace weir
