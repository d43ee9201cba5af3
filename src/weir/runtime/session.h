// Session: the client's handle on a graph and the devices that run it.
//
//   auto session = Session::New(SessionOptions());
//   WEIR_RETURN_IF_ERROR((*session)->Create(root.ToGraphDef()));
//   std::vector<Tensor> outputs;
//   WEIR_RETURN_IF_ERROR((*session)->Run({{"x", x}}, {"y"}, {}, &outputs));
//
// Run names tensors to feed ("node" or "node:port"), tensors to fetch and
// nodes to run for their effects. The first Run of a signature prunes the
// graph to what it needs, places and partitions it and builds one executor
// per device; later Runs of the same signature reuse them (or skip even the
// lookup with MakeCallable). Run is thread-safe: many concurrent steps on
// one session are the normal case. State (variables, queues) lives in the
// devices' resource managers, so every signature sees the same state.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/node_def.h"
#include "weir/framework/step_stats.h"
#include "weir/framework/tensor.h"
#include "weir/graph/placer.h"
#include "weir/runtime/graph_compiler.h"

namespace weir {

// How a session with a "grpc://" target reaches its master: the plain
// fields of distributed/credentials.h's ChannelOptions (runtime/ cannot
// include distributed/; grpc_session.cc converts). The in-process session
// ignores them.
struct RemoteSessionOptions {
  // PEM bundle of the CA(s) that signed the master's certificate: non-empty
  // turns TLS on. The certificate must name the host of the target unless
  // tls_server_name says which name to check instead.
  std::string tls_ca_file;
  std::string tls_server_name;
  // A file holding the cluster's bearer token, sent with every call (needs
  // TLS). A file, so that the secret never appears on a command line.
  std::string auth_token_file;
  // The largest message the session sends or accepts, in bytes; 0: the
  // default (2 GiB less one, protobuf's ceiling).
  int64_t max_message_bytes = 0;
  // How long Session::New waits for a master that is not listening yet (a
  // cluster still starting), retrying; then Unavailable naming the address.
  // 0: one try, fail at once. A master that answers but refuses (TLS, token)
  // fails at once either way.
  int64_t connect_timeout_ms = 30000;
};

struct SessionOptions {
  // Where the session runs: empty for this process; "scheme://address" for
  // a session served elsewhere ("grpc://host:port": the master of a Weir
  // cluster), made by the factory registered for the scheme.
  std::string target;
  int num_cpu_devices = 1;   // virtual CPU devices, CPU:0 .. CPU:n-1
  int intra_op_threads = 0;  // per device; 0: one per schedulable core
  int inter_op_threads = 0;  // 0: one per schedulable core
  // Warn when the graph has grown between Runs this many times in a row
  // (ops created inside the training loop).
  int graph_growth_warning_threshold = 3;
  // The graph compiler's passes (runtime/graph_compiler.h).
  CompileOptions compile;
  // For a "grpc://" target: TLS, token, message limit, wait for the master.
  RemoteSessionOptions remote;
};

struct RunOptions {
  bool trace = false;       // collect per-node step statistics
  int64_t timeout_ms = 0;   // 0: no timeout; else DeadlineExceeded after it
};

struct RunMetadata {
  StepStats step_stats;
  // The step statistics as Chrome trace-event JSON (chrome://tracing, Perfetto).
  std::string ChromeTrace() const;
};

using CallableHandle = int64_t;

struct CallableOptions {
  std::vector<std::string> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

// The client's interface. Session::New returns the in-process implementation
// (runtime/local_session.h); a distributed master serves the same interface.
class Session {
 public:
  // The in-process session when options.target is empty; otherwise the
  // session of the factory registered for the target's scheme
  // (RegisterSessionFactory), or InvalidArgument naming the target and the
  // schemes this binary knows.
  static StatusOr<std::unique_ptr<Session>> New(const SessionOptions& options);
  virtual ~Session() = default;

  // Sets the graph. FailedPrecondition if one is already set (use Extend).
  virtual Status Create(const GraphDef& graph) = 0;
  // Adds nodes to the graph; existing nodes and cached executors stay valid.
  virtual Status Extend(const GraphDef& graph) = 0;

  virtual Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                     const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                     const RunOptions& options = {}, RunMetadata* metadata = nullptr) = 0;

  // Compiles a signature once; RunCallable then takes feeds in
  // `options.feeds` order and returns fetches in `options.fetches` order.
  virtual StatusOr<CallableHandle> MakeCallable(const CallableOptions& options) = 0;
  virtual Status RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                             std::vector<Tensor>* fetches, const RunOptions& options = {},
                             RunMetadata* metadata = nullptr) = 0;
  virtual Status ReleaseCallable(CallableHandle handle) = 0;

  // Cancels running steps (they return Cancelled) and refuses new ones.
  virtual Status Close() = 0;

  // Drops every resource (variables, queues) in `containers` on every
  // device. Containers are shared by all sessions in the process that name
  // them; resources created with an empty container live in this session's
  // own container, default_container(), dropped when the session goes.
  virtual Status Reset(const std::vector<std::string>& containers) = 0;
  virtual const std::string& default_container() const = 0;

  // The devices nodes may be placed on.
  virtual std::vector<DeviceInfo> ListDevices() const = 0;
  // Times the graph-growth warning fired (for tests and tools).
  virtual int graph_growth_warnings() const = 0;
  // Number of compiled signatures cached.
  virtual int num_cached_signatures() const = 0;
};

// Makes sessions for targets of one scheme ("grpc"). runtime/ cannot know
// the distributed layer, which registers its factory through an explicit
// call (distributed/grpc_session.h: RegisterGrpcSessionFactory) made where
// a binary makes its registrations. Replaces a factory of the same scheme.
using SessionFactory = std::function<StatusOr<std::unique_ptr<Session>>(const SessionOptions&)>;
void RegisterSessionFactory(const std::string& scheme, SessionFactory factory);

}  // namespace weir
