// `weir`: run and inspect graphs from the command line.
//
//   weir run GRAPH.pb --feed x=x.npy --fetch y:0 [--out DIR] [--trace t.json]
//   weir run --saved-model DIR [--tag serve] [--signature serving_default]
//            --feed INPUT_KEY=x.npy [--out DIR]
//   weir inspect GRAPH.pb [--devices N] [--explain]
//   weir inspect GRAPH.pb --passes [--feed x] [--fetch y:0] [--devices N]
//
// Any error exits non-zero with the message on stderr.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "weir/base/file_system.h"
#include "weir/distributed/grpc_session.h"
#include "weir/framework/npy.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_def_io.h"
#include "weir/graph/placer.h"
#include "weir/runtime/device_mgr.h"
#include "weir/runtime/graph_compiler.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"
#include "weir/saved_model/loader.h"
#include "weir/train/function_gradient_builder.h"

namespace weir {
namespace {

struct RunArgs {
  std::string graph;
  std::string saved_model;          // a SavedModel directory instead of `graph`
  std::vector<std::string> tags;    // its MetaGraphDef's tag set (default: serve)
  std::string signature = "serving_default";
  std::vector<std::string> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  std::string out_dir;
  std::string trace;
  int devices = 1;
  std::string master;  // "grpc://host:port": run on that cluster's master
  RemoteSessionOptions remote;  // how to reach it (TLS, token, wait)
};

// "name:port" -> a file name ("name_port.npy"), '/' becoming '__'.
std::string FetchFileName(const std::string& fetch) {
  std::string out;
  for (char c : fetch) {
    if (c == '/') out += "__";
    else if (c == ':') out += '_';
    else out += c;
  }
  return out + ".npy";
}

StatusOr<std::vector<std::pair<std::string, Tensor>>> ReadFeeds(const RunArgs& args) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& feed : args.feeds) {
    size_t eq = feed.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == feed.size()) {
      return errors::InvalidArgument("--feed '", feed, "' must be NAME=FILE.npy");
    }
    WEIR_ASSIGN_OR_RETURN(Tensor value, ReadNpy(feed.substr(eq + 1)));
    feeds.emplace_back(feed.substr(0, eq), std::move(value));
  }
  return feeds;
}

// Loads a SavedModel, runs one signature on the --feed inputs (by input
// key) and prints every output by its key.
Status RunSavedModelCommand(const RunArgs& args) {
  WEIR_ASSIGN_OR_RETURN(auto feeds, ReadFeeds(args));
  std::map<std::string, Tensor> inputs;
  for (auto& [name, value] : feeds) {
    if (!inputs.emplace(name, std::move(value)).second) {
      return errors::InvalidArgument("--feed '", name, "' given twice");
    }
  }
  std::set<std::string> tags(args.tags.begin(), args.tags.end());
  if (tags.empty()) tags.insert("serve");
  SessionOptions options;
  options.num_cpu_devices = args.devices;
  auto start = std::chrono::steady_clock::now();
  WEIR_ASSIGN_OR_RETURN(SavedModelBundle bundle, LoadSavedModel(args.saved_model, tags, options));
  auto loaded = std::chrono::steady_clock::now();
  WEIR_ASSIGN_OR_RETURN(auto outputs, RunSignature(bundle, args.signature, inputs));
  auto ran = std::chrono::steady_clock::now();
  for (const auto& [name, value] : outputs) {
    std::cout << name << ": " << value.DebugString(20) << "\n";
    if (!args.out_dir.empty()) {
      WEIR_RETURN_IF_ERROR(RecursivelyCreateDir(args.out_dir));
      WEIR_RETURN_IF_ERROR(WriteNpy(args.out_dir + "/" + FetchFileName(name), value));
    }
  }
  std::cout << "load: " << std::chrono::duration<double, std::milli>(loaded - start).count()
            << " ms, first run (with compilation): "
            << std::chrono::duration<double, std::milli>(ran - loaded).count() << " ms\n";
  return Status::OK();
}

Status RunCommand(const RunArgs& args) {
  if (!args.saved_model.empty()) {
    if (!args.master.empty()) {
      return errors::Unimplemented("--master runs a GraphDef file, not --saved-model (yet)");
    }
    return RunSavedModelCommand(args);
  }
  const RemoteSessionOptions defaults;
  if (args.master.empty() &&
      (!args.remote.tls_ca_file.empty() || !args.remote.tls_server_name.empty() ||
       !args.remote.auth_token_file.empty() ||
       args.remote.connect_timeout_ms != defaults.connect_timeout_ms)) {
    return errors::InvalidArgument(
        "--tls-ca, --tls-server-name, --auth-token-file and --connect-timeout-ms need --master");
  }
  WEIR_ASSIGN_OR_RETURN(GraphDef graph, ReadGraphDefFile(args.graph));
  WEIR_ASSIGN_OR_RETURN(auto feeds, ReadFeeds(args));
  SessionOptions options;
  options.num_cpu_devices = args.devices;
  options.target = args.master;
  options.remote = args.remote;
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::New(options));
  WEIR_RETURN_IF_ERROR(session->Create(graph));
  RunOptions run_options;
  run_options.trace = !args.trace.empty();
  RunMetadata metadata;
  std::vector<Tensor> outputs;
  auto start = std::chrono::steady_clock::now();
  WEIR_RETURN_IF_ERROR(
      session->Run(feeds, args.fetches, args.targets, &outputs, run_options, &metadata));
  double first_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::cout << args.fetches[i] << ": " << outputs[i].DebugString(20) << "\n";
    if (!args.out_dir.empty()) {
      WEIR_RETURN_IF_ERROR(RecursivelyCreateDir(args.out_dir));
      WEIR_RETURN_IF_ERROR(
          WriteNpy(args.out_dir + "/" + FetchFileName(args.fetches[i]), outputs[i]));
    }
  }
  std::cout << "first run (with compilation): " << first_ms << " ms\n";
  if (!args.trace.empty()) {
    WEIR_RETURN_IF_ERROR(WriteStringToFileAtomic(args.trace, metadata.ChromeTrace()));
    std::cout << "trace: " << args.trace << " (open in Perfetto or chrome://tracing)\n";
  }
  return Status::OK();
}

Status InspectCommand(const std::string& path, int devices, bool explain) {
  RegisterStandardOpsAndKernels();
  WEIR_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDefFile(path));
  Graph graph;
  WEIR_RETURN_IF_ERROR(ImportGraphDef(def, &graph));
  std::vector<DeviceInfo> infos;
  for (int i = 0; i < devices; ++i) {
    infos.push_back({StrCat("/job:localhost/replica:0/task:0/device:CPU:", i), "CPU"});
  }
  PlacementOptions placement;
  placement.kernels = KernelRegistry::Global();
  PlacementExplanation explanation;
  Status placed = PlaceGraph(&graph, infos, placement, explain ? &explanation : nullptr);
  std::printf("%-40s %-16s %-28s %s\n", "node", "op", "outputs", "device");
  for (const Node* node : graph.nodes()) {
    std::vector<std::string> outputs;
    for (int i = 0; i < node->num_outputs(); ++i) {
      outputs.push_back(StrCat(node->output_type(i), node->output_shape(i)));
    }
    std::string device = node->assigned_device().empty() ? "(unplaced)" : node->assigned_device();
    if (!node->requested_device().empty())
      device += " (requested " + node->requested_device() + ")";
    std::printf("%-40s %-16s %-28s %s\n", node->name().c_str(), node->type_string().c_str(),
                StrJoin(outputs, " ").c_str(), device.c_str());
  }
  std::printf("%d nodes, %d edges\n", graph.num_nodes(), graph.num_edges());
  if (!placed.ok()) return placed;
  if (explain) std::printf("\n%s", explanation.ToString().c_str());
  return Status::OK();
}

// Compiles the step that fetches `fetches` (default: every node nothing
// consumes) and prints what each compiler pass did to the graph.
Status InspectPassesCommand(const std::string& path, int devices,
                            const std::vector<std::string>& feeds,
                            std::vector<std::string> fetches) {
  RegisterStandardOpsAndKernels();
  WEIR_ASSIGN_OR_RETURN(GraphDef def, ReadGraphDefFile(path));
  Graph graph;
  WEIR_RETURN_IF_ERROR(ImportGraphDef(def, &graph));
  StepSignature signature;
  signature.feeds = feeds;
  if (fetches.empty()) {
    for (const Node* node : graph.nodes()) {
      if (!node->out_edges().empty()) continue;
      (node->num_outputs() > 0 ? signature.fetches : signature.targets).push_back(node->name());
    }
  } else {
    signature.fetches = std::move(fetches);
  }
  std::unique_ptr<DeviceMgr> device_mgr = DeviceMgr::NewCpuDevices(devices, 1);
  CompileEnv env;
  env.devices = device_mgr->Infos();
  env.kernels = KernelRegistry::Global();
  env.host_device = device_mgr->devices().front().get();
  env.incarnation = [&](const std::string& d) { return device_mgr->Incarnation(d); };
  CompileOptions options;
  options.record_passes = true;
  WEIR_ASSIGN_OR_RETURN(CompiledGraph compiled, CompileGraph(graph, signature, env, options));
  std::printf("%s", DescribePasses(compiled.passes).c_str());
  for (const CompiledPartition& partition : compiled.partitions) {
    int nodes = partition.graph ? partition.graph->num_nodes()
                                : static_cast<int>(partition.def.nodes.size());
    std::printf("partition %s: %d nodes\n", partition.device.c_str(), nodes);
  }
  return Status::OK();
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) {
  // Graphs with SymbolicGradient nodes (TensorFlow's function gradients) compile.
  weir::RegisterFunctionGradients();
  CLI::App app{"weir: run and inspect Weir/TensorFlow GraphDefs"};
  app.require_subcommand(1);
  weir::RunArgs run_args;
  CLI::App* run = app.add_subcommand("run", "run a graph and print the fetched tensors");
  CLI::Option* run_graph =
      run->add_option("graph", run_args.graph, "GraphDef file (.pb binary or .pbtxt text)");
  CLI::Option* run_saved_model = run->add_option(
      "--saved-model", run_args.saved_model, "run a signature of this SavedModel directory");
  run_graph->excludes(run_saved_model);
  run->add_option("--tag", run_args.tags,
                  "with --saved-model: a tag of the MetaGraphDef to load, repeatable (default: "
                  "serve)");
  run->add_option("--signature", run_args.signature,
                  "with --saved-model: the signature key (default: serving_default)");
  run->add_option("--feed", run_args.feeds, "NAME=FILE.npy, repeatable");
  run->add_option("--fetch", run_args.fetches, "tensor to fetch (NAME or NAME:PORT), repeatable");
  run->add_option("--target", run_args.targets, "node to run without fetching, repeatable");
  run->add_option("--out", run_args.out_dir, "write each fetched tensor to DIR as .npy");
  run->add_option("--trace", run_args.trace, "write a Chrome trace of the step to this file");
  run->add_option("--devices", run_args.devices, "number of virtual CPU devices")
      ->check(CLI::PositiveNumber);
  run->add_option("--master", run_args.master,
                  "run on a cluster: grpc://HOST:PORT of a weir-server task (its master places "
                  "the graph on every task's devices)");
  run->add_option("--tls-ca", run_args.remote.tls_ca_file,
                  "with --master: PEM file of the CA that signed the servers' certificates "
                  "(turns TLS on)");
  run->add_option("--tls-server-name", run_args.remote.tls_server_name,
                  "with --tls-ca: the name the master's certificate must hold, when it does not "
                  "name the host dialled");
  run->add_option("--auth-token-file", run_args.remote.auth_token_file,
                  "with --tls-ca: file holding the cluster's bearer token");
  run->add_option("--connect-timeout-ms", run_args.remote.connect_timeout_ms,
                  "with --master: how long to wait for a master not listening yet (default "
                  "30000; 0: fail at once)")
      ->check(CLI::NonNegativeNumber);
  std::string inspect_path;
  int inspect_devices = 1;
  CLI::App* inspect = app.add_subcommand("inspect", "list ops, inferred shapes and devices");
  inspect->add_option("graph", inspect_path, "GraphDef file")->required();
  inspect->add_option("--devices", inspect_devices, "number of virtual CPU devices")
      ->check(CLI::PositiveNumber);
  bool inspect_passes = false;
  bool inspect_explain = false;
  inspect->add_flag(
      "--explain", inspect_explain,
      "explain placement: feasible devices, simulated finish times, transfers, reason");
  std::vector<std::string> inspect_feeds, inspect_fetches;
  inspect->add_flag("--passes", inspect_passes,
                    "compile a step and show the graph before and after each compiler pass");
  inspect->add_option("--feed", inspect_feeds,
                      "with --passes: a tensor the step feeds, repeatable");
  inspect->add_option("--fetch", inspect_fetches,
                      "with --passes: a tensor the step fetches, repeatable (default: every node "
                      "nothing consumes)");
  CLI11_PARSE(app, argc, argv);
  weir::RegisterGrpcSessionFactory();  // --master grpc://...

  weir::Status status;
  if (run->parsed()) {
    if (run_args.graph.empty() && run_args.saved_model.empty()) {
      std::cerr << "weir run: give a GraphDef file or --saved-model DIR\n";
      return 2;
    }
    if (run_args.saved_model.empty() && run_args.fetches.empty() && run_args.targets.empty()) {
      std::cerr << "weir run: give at least one --fetch or --target\n";
      return 2;
    }
    status = weir::RunCommand(run_args);
  } else if (inspect_passes) {
    status =
        weir::InspectPassesCommand(inspect_path, inspect_devices, inspect_feeds, inspect_fetches);
  } else {
    status = weir::InspectCommand(inspect_path, inspect_devices, inspect_explain);
  }
  if (!status.ok()) {
    std::cerr << "weir: " << status << "\n";
    return 1;
  }
  return 0;
}
