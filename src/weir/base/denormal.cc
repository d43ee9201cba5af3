#include "weir/base/denormal.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace weir {
namespace {

#if defined(__SSE__)
// MXCSR bits: FTZ flushes denormal results, DAZ treats denormal inputs as 0.
constexpr unsigned int kFlushToZero = 0x8000;
constexpr unsigned int kDenormalsAreZero = 0x0040;

unsigned int ReadMode() { return _mm_getcsr(); }
void WriteMode(unsigned int mode) {
  if (mode != _mm_getcsr()) _mm_setcsr(mode);
}
unsigned int FlushingMode(unsigned int mode) { return mode | kFlushToZero | kDenormalsAreZero; }
#else
unsigned int ReadMode() { return 0; }
void WriteMode(unsigned int) {}
unsigned int FlushingMode(unsigned int mode) { return mode; }
#endif

}  // namespace

void EnableFlushDenormals() { WriteMode(FlushingMode(ReadMode())); }

ScopedFlushDenormals::ScopedFlushDenormals() : saved_mode_(ReadMode()) {
  WriteMode(FlushingMode(saved_mode_));
}

ScopedFlushDenormals::~ScopedFlushDenormals() { WriteMode(saved_mode_); }

}  // namespace weir
