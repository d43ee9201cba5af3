#include "weir/runtime/session.h"

#include "weir/runtime/local_session.h"
#include "weir/runtime/standard_registration.h"

namespace weir {

StatusOr<std::unique_ptr<Session>> Session::New(const SessionOptions& options) {
  if (options.num_cpu_devices < 1) {
    return errors::InvalidArgument("SessionOptions.num_cpu_devices must be >= 1, got ",
                                   options.num_cpu_devices);
  }
  RegisterStandardOpsAndKernels();
  return std::unique_ptr<Session>(new LocalSession(options));
}

}  // namespace weir
