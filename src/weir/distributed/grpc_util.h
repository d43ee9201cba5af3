// Status <-> grpc::Status. Internal to the distributed layer's .cc files that
// speak gRPC (it includes gRPC's headers); gRPC's codes are the same
// canonical codes as Weir's (UNAUTHENTICATED, 16, included), so a code
// crosses as its number; a number Weir does not know is Unknown.
#pragma once

#include <grpcpp/support/status.h>

#include "weir/base/status.h"
#include "weir/base/str_util.h"

namespace weir {

inline grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message());
}

// `what` names the call and its peer: "GetStatus to 127.0.0.1:2222".
inline Status FromGrpcStatus(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::OK();
  int code = status.error_code();
  Code weir_code = static_cast<Code>(code);
  if (code <= 0 || code > static_cast<int>(kLastCode)) weir_code = Code::kUnknown;
  return Status(weir_code, StrCat(what, ": ", status.error_message()));
}

}  // namespace weir
