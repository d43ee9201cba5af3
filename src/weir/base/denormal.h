// Flushing denormal floats to zero on the current thread.
//
// Arithmetic on denormals costs about a hundred cycles per operation on x86,
// and ML values (decaying weights, tiny activations) drift into that range.
// Weir sets flush-to-zero and denormals-are-zero on every pool thread and
// around float kernels, trading IEEE gradual underflow for steady speed.
#pragma once

namespace weir {

// Turns flushing on for the calling thread (a no-op where unsupported).
void EnableFlushDenormals();

// Turns flushing on for its lifetime and restores the previous mode after.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals();
  ~ScopedFlushDenormals();
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  unsigned int saved_mode_;
};

}  // namespace weir
