#include "weir/kernels/openmp_threads.h"

#include <omp.h>

namespace weir {

ScopedOpenMpSingleThread::ScopedOpenMpSingleThread() : previous_(omp_get_max_threads()) {
  if (previous_ != 1) omp_set_num_threads(1);
}

ScopedOpenMpSingleThread::~ScopedOpenMpSingleThread() {
  if (previous_ != 1) omp_set_num_threads(previous_);
}

}  // namespace weir
