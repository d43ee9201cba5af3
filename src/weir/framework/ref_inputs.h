// TensorFlow's reference inputs, declared beside the ops that have them.
//
// TensorFlow declares some inputs `Ref(T)`: the op works on the producer's
// own state (a ref variable's buffer, or the queue or accumulator that a
// `Ref(string)` handle names), and its placer keeps the op on the producer's
// device along that reference edge. Weir has no reference edges: those inputs
// are plain tensors, and an op registration declares which of its inputs
// TensorFlow takes by reference, so that the placer colocates the op with
// the input's producer as TensorFlow does, and the op lists Weir exports say
// `is_ref` as TensorFlow's do.
//
// The declarations live here, not in OpDef, so that declaring one touches no
// header that most of the code includes. They are keyed by op name: being a
// reference input is a property of TensorFlow's op of that name.
#pragma once

#include <string>
#include <vector>

namespace weir {

struct OpDef;

// Declares input args `args` of op `op` as TensorFlow reference inputs.
// Thread-safe; declaring an arg twice is harmless.
void DeclareRefInputs(const std::string& op, const std::vector<std::string>& args);

// Whether input arg `arg_index` of `op` (an index into op.inputs) is a
// declared reference input. False for an index out of range.
bool IsRefInputArg(const OpDef& op, int arg_index);

// Whether `op` has any declared reference input (a cheap first check).
bool HasRefInputs(const OpDef& op);

}  // namespace weir
