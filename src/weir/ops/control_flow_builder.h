// Builders for conditionals and loops as dataflow: TensorFlow control flow
// v1's node structure (Switch, Merge, Enter, Exit, NextIteration, LoopCond
// and their pivots), so graphs built here and graphs exported by
// tf.compat.v1 look and run alike.
//
//   auto doubled = [&](const Scope& s, std::vector<Output>* out) {
//     out->push_back(ops::Mul(s, x, 2.f));
//     return Status::OK();
//   };
//   auto negated = [&](const Scope& s, std::vector<Output>* out) {
//     out->push_back(ops::Neg(s, x));
//     return Status::OK();
//   };
//   std::vector<Output> y;  // y[0] = pred ? 2 * x : -x
//   WEIR_RETURN_IF_ERROR(ops::Cond(scope, pred, doubled, negated, &y));
//
// The functions build their nodes through the Scope they are given. A tensor
// built outside and used inside is captured automatically: in a branch
// through a Switch on the predicate, in a loop through an `is_constant`
// Enter (one per tensor and loop). Nodes with no inputs from inside (Consts)
// get a control edge from the branch's or loop's pivot so they run only when
// it does. An error (from a function, or a check here) is returned with the
// construct named and is also kept in the scope's status.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"
#include "weir/graph/scope.h"

namespace weir {
namespace ops {

// Builds one branch: appends its results to `outputs`.
using BranchFn = std::function<Status(const Scope&, std::vector<Output>* outputs)>;

// outputs[i] is then_fn's i-th result where `pred` (a bool scalar) is true,
// else else_fn's, through Merge(else, then). The branches must return the
// same number (at least one) of results, with the same dtypes. Its nodes
// are named "<name>/..." within `scope` (made unique: "cond_1").
Status Cond(const Scope& scope, const Output& pred, const BranchFn& then_fn,
            const BranchFn& else_fn, std::vector<Output>* outputs,
            std::string_view name = "cond");

// Computes the loop condition (a bool scalar) from the loop variables.
using LoopCondFn =
    std::function<Status(const Scope&, const std::vector<Output>& vars, Output* pred)>;
// Computes the next values of the loop variables, one per variable, each of
// its dtype and of a shape its shape invariant allows.
using LoopBodyFn = std::function<Status(const Scope&, const std::vector<Output>& vars,
                                        std::vector<Output>* next_vars)>;

struct WhileLoopOptions {
  int parallel_iterations = 10;
  Output maximum_iterations;  // invalid: no limit; else an int32 scalar
  std::vector<PartialShape> shape_invariants;  // empty: each var's shape must stay as it entered
  std::string name = "while";  // frame name is the unique-ified scope name
};

// outputs[i] is loop_vars[i] after `body` ran while `cond` held (and at most
// maximum_iterations times). A shape invariant must be met by the variable's
// initial shape and by every body result (a result at least as specific); it
// is the shape the loop's Merge, and so cond and body, see.
Status WhileLoop(const Scope& scope, const std::vector<Output>& loop_vars, const LoopCondFn& cond,
                 const LoopBodyFn& body, std::vector<Output>* outputs,
                 const WhileLoopOptions& options = {});

}  // namespace ops
}  // namespace weir
