#include "weir/runtime/session.h"

#include <map>
#include <mutex>

#include "weir/runtime/local_session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {

namespace {

std::mutex& FactoriesMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, SessionFactory>& Factories() {
  static auto* factories = new std::map<std::string, SessionFactory>();
  return *factories;
}

}  // namespace

void RegisterSessionFactory(const std::string& scheme, SessionFactory factory) {
  std::lock_guard<std::mutex> lock(FactoriesMutex());
  Factories()[scheme] = std::move(factory);
}

StatusOr<std::unique_ptr<Session>> Session::New(const SessionOptions& options) {
  if (!options.target.empty()) {
    size_t colon = options.target.find("://");
    if (colon == std::string::npos || colon == 0) {
      return errors::InvalidArgument("session target '", options.target,
                                     "' is not scheme://address (e.g. grpc://localhost:2222); "
                                     "leave it empty for an in-process session");
    }
    std::string scheme = options.target.substr(0, colon);
    SessionFactory factory;
    std::vector<std::string> known;
    {
      std::lock_guard<std::mutex> lock(FactoriesMutex());
      auto it = Factories().find(scheme);
      if (it != Factories().end()) factory = it->second;
      for (const auto& [name, unused] : Factories()) known.push_back(name);
    }
    if (!factory) {
      return errors::InvalidArgument(
          "session target '", options.target, "': no session factory for scheme '", scheme,
          "' in this build (known: [", StrJoin(known, ", "),
          "]); grpc:// needs a build with the distributed runtime (not the WEIR_PYTHON_ONLY "
          "wheel) and RegisterGrpcSessionFactory()");
    }
    return factory(options);
  }
  // Bounds a hostile or mistyped request (devices=100000 would make as many
  // devices, each with its pools) before anything is allocated.
  constexpr int kMaxDevices = 1024, kMaxThreads = 4096;
  if (options.num_cpu_devices < 1 || options.num_cpu_devices > kMaxDevices) {
    return errors::InvalidArgument("SessionOptions.num_cpu_devices must be in [1, ", kMaxDevices,
                                   "], got ", options.num_cpu_devices);
  }
  if (options.intra_op_threads < 0 || options.intra_op_threads > kMaxThreads ||
      options.inter_op_threads < 0 || options.inter_op_threads > kMaxThreads) {
    return errors::InvalidArgument("SessionOptions thread counts must be in [0, ", kMaxThreads,
                                   "] (0: one per core), got intra_op_threads=",
                                   options.intra_op_threads,
                                   ", inter_op_threads=", options.inter_op_threads);
  }
  RegisterStandardOpsAndKernels();
  return std::unique_ptr<Session>(new LocalSession(options));
}

}  // namespace weir
