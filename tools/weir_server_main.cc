// `weir-server`: one task of a Weir cluster, serving the worker service.
//
//   weir-server --cluster 'worker=localhost:2222,localhost:2223;ps=localhost:2224'
//               --job worker --task 0
//   TF_CONFIG='{"cluster": {...}, "task": {"type": "worker", "index": 0}}' weir-server
//   weir-server --slurm [--slurm-base-port 8888]      # inside srun
//   weir-server ... --tls-cert task.pem --tls-key task.key [--tls-ca ca.pem]
//                   [--auth-token-file token.txt] [--max-message-bytes N]
//
// Listens on loopback unless --host says otherwise; a port of 0 picks a free
// one. Logs its address and devices on stderr (and writes the address to
// --address-file once serving, for scripts and tests). SIGTERM or SIGINT
// stops it cleanly with exit status 0; any configuration error exits 1 with
// the message on stderr.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "weir/base/file_system.h"
#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/server.h"
#include "weir/train/function_gradient_builder.h"

namespace weir {
namespace {

struct Args {
  std::string cluster;
  std::string job;
  int task = -1;
  bool slurm = false;
  SlurmOptions slurm_options;
  ServerOptions server;
  std::string address_file;
  std::string auth_token_file;
};

StatusOr<ClusterConfig> ResolveConfig(const Args& args) {
  if (args.slurm) {
    if (!args.cluster.empty())
      return errors::InvalidArgument("--slurm and --cluster exclude each other");
    return ClusterConfigFromSlurm([](const char* name) { return std::getenv(name); },
                                  args.slurm_options);
  }
  if (!args.cluster.empty()) {
    if (args.job.empty() || args.task < 0) {
      return errors::InvalidArgument(
          "--cluster needs --job and --task (this task's job and index)");
    }
    return ClusterConfigFromFlags(args.cluster, args.job, args.task);
  }
  if (!args.job.empty() || args.task >= 0) {
    return errors::InvalidArgument("--job and --task need --cluster");
  }
  const char* tf_config = std::getenv("TF_CONFIG");
  if (tf_config == nullptr) {
    return errors::InvalidArgument(
        "no cluster: give --cluster SPEC --job JOB --task N, set TF_CONFIG, or use --slurm");
  }
  return ParseTfConfig(tf_config);
}

int Serve(const Args& args) {
  // SIGTERM and SIGINT are taken by a thread that waits for them; blocked
  // here, before any thread starts, so gRPC's threads inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  StatusOr<ClusterConfig> config = ResolveConfig(args);
  if (!config.ok()) {
    std::cerr << "weir-server: " << config.status() << "\n";
    return 1;
  }
  ServerOptions options = args.server;
  if (!args.auth_token_file.empty()) {
    StatusOr<std::string> token = ReadAuthTokenFile(args.auth_token_file);
    if (!token.ok()) {
      std::cerr << "weir-server: --auth-token-file: " << token.status() << "\n";
      return 1;
    }
    options.security.auth_token = *token;
  }
  // The master expands SymbolicGradient nodes of the graphs it compiles.
  RegisterFunctionGradients();
  StatusOr<std::unique_ptr<Server>> server = Server::Create(*config, options);
  if (!server.ok()) {
    std::cerr << "weir-server: " << server.status() << "\n";
    return 1;
  }
  Status started = (*server)->Start();
  if (!started.ok()) {
    std::cerr << "weir-server: " << started << "\n";
    return 1;
  }
  std::string address = (*server)->bound_address();
  std::cerr << "weir-server: " << ClusterSpec::TaskName(config->job, config->task)
            << " listening on " << address << (options.security.tls() ? " (TLS" : " (plaintext")
            << (options.security.auth_token.empty() ? ")" : ", auth token required)") << "\n";
  for (const DeviceAttributes& device : (*server)->device_attributes()) {
    std::cerr << "weir-server: device " << device.name << " (" << device.device_type
              << ", memory limit " << device.memory_limit << " bytes)\n";
  }
  if (!args.address_file.empty()) {
    Status written = WriteStringToFileAtomic(args.address_file, address + "\n");
    if (!written.ok()) {
      std::cerr << "weir-server: --address-file: " << written << "\n";
      return 1;
    }
  }
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::cerr << "weir-server: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ", stopping\n";
    (*server)->Stop();
  });
  (*server)->Join();
  waiter.join();
  std::cerr << "weir-server: stopped\n";
  return 0;
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) {
  weir::Args args;
  CLI::App app{"weir-server: one task of a Weir cluster"};
  app.add_option("--cluster", args.cluster,
                 "the cluster: 'worker=host:port,host:port;ps=host:port' (else TF_CONFIG)");
  app.add_option("--job", args.job, "this task's job (with --cluster)");
  app.add_option("--task", args.task, "this task's index in its job (with --cluster)");
  app.add_flag("--slurm", args.slurm, "take the cluster from Slurm's environment (one job)");
  app.add_option("--slurm-job", args.slurm_options.job, "the job name of Slurm's tasks")
      ->default_val("worker");
  app.add_option("--slurm-base-port", args.slurm_options.base_port,
                 "task k of a node listens on this port + k")
      ->default_val(8888);
  app.add_option("--slurm-tasks-per-node", args.slurm_options.tasks_per_node,
                 "0: from SLURM_NTASKS_PER_NODE, else spread evenly")
      ->default_val(0);
  app.add_option("--host", args.server.host,
                 "the interface to listen on (0.0.0.0 for all; default loopback)")
      ->default_val("127.0.0.1");
  app.add_option("--cpu-devices", args.server.num_cpu_devices, "virtual CPU devices of the task")
      ->default_val(1);
  app.add_option("--intra-op-threads", args.server.intra_op_threads,
                 "threads of each device's intra-op pool (0: one per core)")
      ->default_val(0);
  app.add_option("--address-file", args.address_file, "write the bound address here once serving");
  app.add_option("--tls-cert", args.server.security.tls_cert_file,
                 "PEM certificate (chain) of this task: serve TLS (with --tls-key)");
  app.add_option("--tls-key", args.server.security.tls_key_file, "PEM private key of --tls-cert");
  app.add_option("--tls-ca", args.server.security.tls_ca_file,
                 "PEM CA bundle this task trusts when it calls other tasks");
  app.add_option("--auth-token-file", args.auth_token_file,
                 "require this file's token on every call (needs TLS; a file, so the token "
                 "never shows on a command line)");
  app.add_option("--max-message-bytes", args.server.security.max_message_bytes,
                 "the largest message served or accepted")
      ->default_val(weir::kDefaultMaxMessageBytes);
  app.add_option("--session-lease-ms", args.server.session_lease_ms,
                 "how long another task keeps a session this task masters without hearing from "
                 "it (renewed every 500 ms; at least 4000, 0: no lease)")
      ->default_val(10000);
  bool no_bulk_transfer = false;
  app.add_flag("--no-bulk-transfer", no_bulk_transfer,
               "send every RecvTensor value on the gRPC stream; by default numeric values of "
               "--bulk-transfer-min-bytes and more cross on a TCP connection of their own, read "
               "straight into the receiver's tensor (never with TLS)");
  app.add_option("--bulk-transfer-min-bytes", args.server.bulk_transfer_min_bytes,
                 "the smallest value sent on the bulk-transfer channel")
      ->default_val(int64_t{1} << 20);
  app.add_option("--client-session-lease-ms", args.server.client_session_lease_ms,
                 "how long this task's master keeps a session without a call from its client "
                 "(living clients renew it every quarter of it; at least 400, 0: no lease)")
      ->default_val(60000);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  args.server.bulk_transfer = !no_bulk_transfer;
  return weir::Serve(args);
}
