#include "weir/kernels/openmp_threads.h"

#include <omp.h>

namespace weir {

void KeepOpenMpSingleThreaded() {
  thread_local const bool done = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)done;
}

}  // namespace weir
