// Shared by the harnesses: one-time setup and the import + compile pipeline.
#pragma once

#include "weir/framework/node_def.h"

namespace weir::fuzz {

// Registers every op and kernel and quiets info/warning logs (a fuzzer
// prints millions of them otherwise). Idempotent.
void InitOnce();

// What a user's graph goes through before its first step: ImportGraphDef
// (Session::Create), then prune, placement on two CPU devices, partitioning
// and executor construction (Session::MakeCallable) for a signature that
// feeds every Placeholder and fetches the outputs of the first nodes. No
// kernel runs. Errors are expected and ignored; only a crash, a sanitizer
// report or a hang is a finding.
void ImportAndCompile(const GraphDef& graph);

// Under ASan, the largest single allocation served (MiB); larger ones
// return null, which tensor allocation reports as ResourceExhausted. 512 by
// default; a harness whose legitimate work grows with its outputs' size
// defines a smaller one.
int MaxAllocationMb();

// Aborts with `what` when `condition` is false: an invariant of the code
// under test, which libFuzzer then reports as a crash.
void Require(bool condition, const char* what);

}  // namespace weir::fuzz
