// oneDNN is built on the OpenMP runtime here (libgomp). Left alone, every
// thread that calls into it would start an OpenMP team of one worker per
// core beside the device's intra-op pool, and those workers spin after
// each call: two pools on the same cores. Kernels that call oneDNN keep
// OpenMP to one thread and split their work over the intra-op pool
// instead, so the intra-op thread count is the one knob for all CPU
// kernels. OpenMP's thread count is a setting of the calling thread, which
// may be the user's own (a Session runs kernels inline on it), so it is
// set for the duration of the call and restored after.
#pragma once

namespace weir {

// Sets the calling thread's OpenMP thread count to 1 for its lifetime.
// Hold one while creating or running a oneDNN primitive.
class ScopedOpenMpSingleThread {
 public:
  ScopedOpenMpSingleThread();
  ~ScopedOpenMpSingleThread();
  ScopedOpenMpSingleThread(const ScopedOpenMpSingleThread&) = delete;
  ScopedOpenMpSingleThread& operator=(const ScopedOpenMpSingleThread&) = delete;

 private:
  int previous_;
};

}  // namespace weir
