#include "tests/fuzz/fuzz_support.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "weir/base/sanitizers.h"
#include "weir/graph/graph.h"
#include "weir/graph/graph_constructor.h"
#include "weir/runtime/session.h"
#include "weir/runtime/standard_registration.h"

namespace weir::fuzz {

__attribute__((weak)) int MaxAllocationMb() { return 512; }

}  // namespace weir::fuzz

#if defined(WEIR_ADDRESS_SANITIZER)
// A huge tensor allocation fails cleanly (malloc returns null and the
// allocator's caller reports ResourceExhausted) instead of being served: the
// fuzzers' per-run memory ceiling. Throwing operator new still reports a
// crash, as a vector sized by an unchecked count should. ASAN_OPTIONS in the
// environment overrides these.
// Called before ASan is initialized: no libc, no allocation.
extern "C" const char* __asan_default_options() {
  static char options[128] = "detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=";
  char* end = options;
  while (*end != '\0') ++end;
  char digits[12];
  int n = 0;
  for (int mb = weir::fuzz::MaxAllocationMb(); n == 0 || mb > 0; mb /= 10)
    digits[n++] = '0' + mb % 10;
  while (n > 0) *end++ = digits[--n];
  *end = '\0';
  return options;
}
#endif

namespace weir::fuzz {

void InitOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    setenv("WEIR_MIN_LOG_LEVEL", "2", /*overwrite=*/0);
    RegisterStandardOpsAndKernels();
  });
}

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
  std::abort();
}

void ImportAndCompile(const GraphDef& def) {
  InitOnce();
  // Import once on our own to choose the signature; Create imports again.
  Graph graph;
  if (!ImportGraphDef(def, &graph).ok()) return;

  constexpr int kMaxNames = 16;
  CallableOptions signature;
  for (const Node* node : graph.nodes()) {
    if (node->type_string() == "Placeholder" && signature.feeds.size() < kMaxNames) {
      signature.feeds.push_back(node->name());
    } else if (node->num_outputs() == 0 && signature.targets.size() < kMaxNames) {
      signature.targets.push_back(node->name());
    }
    for (int i = 0; i < node->num_outputs() && signature.fetches.size() < kMaxNames; ++i) {
      signature.fetches.push_back(node->name() + ":" + std::to_string(i));
    }
  }
  if (signature.fetches.empty() && signature.targets.empty()) return;

  SessionOptions options;
  options.num_cpu_devices = 2;  // so that placement and partitioning have choices
  options.intra_op_threads = 1;
  options.inter_op_threads = 1;
  StatusOr<std::unique_ptr<Session>> session = Session::New(options);
  Require(session.ok(), "Session::New failed");
  if (!(*session)->Create(def).ok()) return;
  StatusOr<CallableHandle> handle = (*session)->MakeCallable(signature);
  if (handle.ok()) (void)(*session)->ReleaseCallable(*handle);
}

}  // namespace weir::fuzz
