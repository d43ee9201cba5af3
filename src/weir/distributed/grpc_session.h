// GrpcSession: the client side of the master service. Session::New returns
// one for SessionOptions::target = "grpc://host:port" once
// RegisterGrpcSessionFactory() has run: the same interface and semantics as
// the in-process session (feeds, fetches, targets, callables, timeouts),
// served by the master of the task at host:port (distributed/master.h).
//
// Creating the session contacts the master (which contacts every task), so
// an unreachable cluster is an error from Session::New, not from the first
// Run: after SessionOptions::remote.connect_timeout_ms (30 s by default) of
// retries while nobody listens at the address (a cluster still starting),
// at once when the master answers and refuses (TLS, token). TLS, the token
// and the message limit come from SessionOptions::remote. Every call has a
// deadline: a step's is its RunOptions.timeout_ms (plus a little) when set.
// RunOptions.trace fills RunMetadata with every task's step statistics.
#pragma once

#include <memory>
#include <string>

#include "weir/runtime/session.h"

namespace weir {

// The session at `options.target` ("grpc://host:port").
StatusOr<std::unique_ptr<Session>> NewGrpcSession(const SessionOptions& options);

// Makes Session::New serve "grpc://" targets. Idempotent; call it where the
// binary makes its registrations (tools/weir_main.cc, the Python module).
void RegisterGrpcSessionFactory();

}  // namespace weir
