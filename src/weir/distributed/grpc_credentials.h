// gRPC credentials and channels from ServerSecurity / ChannelOptions.
// Internal to the distributed layer's .cc files that speak gRPC (it
// includes gRPC's headers), like grpc_util.h.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>

#include "weir/base/status.h"
#include "weir/distributed/credentials.h"

namespace weir {

// The credentials a server listens with: plaintext, or TLS from the PEM
// files (read now: a missing or unreadable file is an InvalidArgument naming
// it), with the token check when a token is set.
StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurity& security);

// Sets the server's message limits (send and receive).
void ApplyServerLimits(const ServerSecurity& security, grpc::ServerBuilder* builder);

// A channel to `address` ("host:port") with the options' TLS, token and
// limits. Connects lazily: an unreachable address fails the first call.
StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                     const ChannelOptions& options);

// FromGrpcStatus for a call on a channel made with `options`, with a hint
// where gRPC's message leaves the cause unclear (a message over the limit,
// a TLS mismatch between client and server).
Status FromGrpcCallStatus(const grpc::Status& status, std::string_view what,
                          const ChannelOptions& options);

}  // namespace weir
