#include "weir/runtime/session.h"

#include "weir/runtime/local_session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {

StatusOr<std::unique_ptr<Session>> Session::New(const SessionOptions& options) {
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
