#include "weir/kernels/dnnl_util.h"

namespace weir {

const dnnl::engine& DnnlCpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

Status DnnlErrorStatus(const std::exception& e, std::string_view what) {
  const auto* error = dynamic_cast<const dnnl::error*>(&e);
  if (error == nullptr) return errors::Internal("oneDNN ", what, " failed: ", e.what());
  if (error->status == dnnl_unimplemented) {
    return errors::Unimplemented("oneDNN has no implementation of ", what,
                                 " for this problem on this CPU: ", error->what());
  }
  return errors::Internal("oneDNN ", what, " failed: ", error->what(), " (status ",
                          static_cast<int>(error->status), ")");
}

}  // namespace weir
