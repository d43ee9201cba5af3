// TensorFlow 1 reference variables, rewritten to resource variables on
// import. A TF1 graph (VariableV2, Assign, ApplyAdam, ScatterUpdate,
// RefEnter...) passes reference tensors between ops; Weir has no reference
// tensors, so each reference becomes a DT_RESOURCE handle:
//
// - A variable `v` (VariableV2, Variable) becomes VarHandleOp `v/_handle`
//   (shared_name: the variable's, else `v`; container, dtype and shape
//   kept) and ReadVariableOp `v` reading it, so `v:0` still fetches the
//   value and value consumers (`v/read`, SaveV2, MatMul) keep their inputs.
// - An update (Assign, AssignAdd/Sub, Apply*, SparseApply*, Scatter*,
//   ScatterNd*) named `a` becomes its resource op (AssignVariableOp,
//   ResourceApply*, ResourceScatter*...) `a/_update` on the handle, and a
//   ReadVariableOp `a` after it (a control edge): TensorFlow's update
//   outputs the new value, and `a:0` or `^a` keep that meaning.
// - Both reads carry kFetchAtStepEndAttr (subgraph.h): fetching `v:0` or
//   `a:0` gives the value at the end of the step, as a fetched TensorFlow
//   reference does (`sess.run([train_op, global_step])` sees the increment).
// - IsVariableInitialized and CountUpTo become VarIsInitializedOp and
//   ResourceCountUpTo of the same name.
// - RefIdentity, RefEnter, RefExit, RefSwitch, RefMerge and
//   RefNextIteration become Identity, Enter, ... on DT_RESOURCE: they carry
//   the handle; a value consumer of one gets a ReadVariableOp
//   `<node>/_read` (`/_read_<port>` for ports other than 0).
// - An op that consumes a reference through the output of an update gets a
//   control edge on that update's read, as TensorFlow orders it by the
//   data edge. A control input on a variable becomes one on its handle
//   (VariableV2 runs while uninitialized; a read would fail).
//
// New nodes take the device, `_class` colocation and source location of the
// node they replace; a generated name that is taken gets a suffix `_1`,
// `_2`, ... A reference op without a resource form in Weir (ApplyAdagradDA,
// TemporaryVariable, RefSelect, ...) is an InvalidArgument naming the node,
// the op and the missing resource op. Linear in nodes + edges.
#pragma once

#include "weir/base/status.h"
#include "weir/framework/node_def.h"

namespace weir {

class Graph;

// Whether `def` holds a node of a TensorFlow reference op that Weir does
// not declare itself (so RewriteRefVariables has work to do).
bool HasRefVariableOps(const GraphDef& def);

// Rewrites `def`'s reference ops as above. `existing` (may be null) is the
// graph `def` is added to (Session::Extend): a reference input naming one
// of its nodes uses the handle that node's read reads. On error, `def` is
// unspecified. The function library is left alone.
Status RewriteRefVariables(GraphDef* def, const Graph* existing = nullptr);

}  // namespace weir
