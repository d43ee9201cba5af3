// oneDNN is built on the OpenMP runtime here (libgomp). Left alone, every
// thread that calls into it would start an OpenMP team of one worker per
// core beside the device's intra-op pool, and those workers spin after
// each call: two pools on the same cores. Kernels that call oneDNN keep
// OpenMP to one thread and split their work over the intra-op pool
// instead, so the intra-op thread count is the one knob for all CPU
// kernels. (OpenMP's thread count is per calling thread, hence "once per
// thread" rather than once at startup.)
#pragma once

namespace weir {

// Sets the calling thread's OpenMP thread count to 1, the first time a
// thread calls it. Call before creating or running a oneDNN primitive.
void KeepOpenMpSingleThreaded();

}  // namespace weir
