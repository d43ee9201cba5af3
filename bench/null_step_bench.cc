// Null-step latency of the distributed runtime (OSDI 2016, Fig. 6): a step
// that fetches one scalar from each of N worker tasks on loopback. The N
// tasks are Servers in this process, each with its own gRPC server and
// threads; the client is a grpc:// Session to the master on task 0. TF's
// side of the same measurement is bench/peers/null_step_peers.py.
//
//   build/release/bench/null_step_bench --benchmark_min_time=2
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "weir/base/logging.h"
#include "weir/distributed/grpc_session.h"
#include "weir/distributed/server.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

void BM_NullStep(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  RegisterStandardOpsAndKernels();
  RegisterGrpcSessionFactory();
  ClusterSpec::Tasks tasks;
  for (int t = 0; t < n; ++t) tasks[t] = StrCat("127.0.0.1:", FreePort());
  ClusterSpec cluster = ClusterSpec::FromJobs({{"worker", tasks}}).value();
  std::vector<std::unique_ptr<Server>> servers;
  for (int t = 0; t < n; ++t) {
    ServerOptions options;
    options.intra_op_threads = 1;
    options.inter_op_threads = 2;
    auto server = Server::Create(ClusterConfig{cluster, "worker", t}, options).value();
    CHECK(server->Start().ok());
    servers.push_back(std::move(server));
  }
  Scope root = Scope::NewRootScope();
  std::vector<std::string> fetches;
  for (int t = 0; t < n; ++t) {
    auto c = ops::Const(root.WithOpName(StrCat("c", t)).WithDevice(StrCat("/job:worker/task:", t)),
                        static_cast<float>(t));
    fetches.push_back(c.name());
  }
  SessionOptions options;
  options.target = StrCat("grpc://", servers[0]->bound_address());
  auto session = Session::New(options).value();
  CHECK(session->Create(root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  for (int warm = 0; warm < 20; ++warm) CHECK(session->Run({}, fetches, {}, &out).ok());
  for (auto _ : state) {
    Status s = session->Run({}, fetches, {}, &out);
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  state.counters["tasks"] = n;
  session.reset();
}

BENCHMARK(BM_NullStep)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
