// Einsum equations ("ij,jk->ik", "...ij,...jk->...ik", "ii->i"): parsing and
// resolution against operand shapes, shared by Einsum's shape function and
// its kernel. The rules are TensorFlow's: one or two operands, labels are
// ASCII letters, "..." stands for the broadcasting dims (NumPy rules, and
// they must appear in the output when there are any), other labels must
// have one size wherever they appear, a label repeated within an operand
// takes its diagonal and one repeated in the output fills a diagonal.
// Without "->" the output is the implicit one of NumPy: "..." and then the
// labels that appear once, in alphabetical order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/tensor_shape.h"

namespace weir {

// The equation as written: per operand and for the output, label ids
// (0-51 for a-z, A-Z), kEllipsisLabel where "..." stands.
struct EinsumEquation {
  static constexpr int kEllipsisLabel = -1;
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

// InvalidArgument naming the equation for a malformed one: a character
// other than letters, ',', "->" and "...", a number of operands other than
// `num_inputs` or than 1 or 2, two ellipses in one term, an output label in
// no operand.
StatusOr<EinsumEquation> ParseEinsumEquation(std::string_view equation, int num_inputs);

// The equation applied to operand shapes: every axis gets a label id, the
// broadcasting dims labels of their own (ids from 52 on, one per dim of
// the broadcast "..."), and each label a size (-1 when unknown).
struct EinsumDims {
  int num_labels = 0;
  std::vector<std::vector<int>> inputs;  // a label per axis of each operand
  std::vector<int> output;               // a label per axis of the output
  std::vector<int64_t> label_size;       // broadcast size of each label, or -1
  // Whether operand i's axis j has size 1 while its label is broadcast to
  // another size (only "..." dims broadcast).
  std::vector<std::vector<bool>> broadcast;
};

// InvalidArgument naming the equation and the shapes when an operand's
// rank does not fit its term, a label's sizes differ, or "..." has dims
// but is missing from the output. REQUIRES: every shape has a known rank.
StatusOr<EinsumDims> ResolveEinsum(const EinsumEquation& equation, std::string_view text,
                                   const std::vector<PartialShape>& shapes);

// Label ids back to an equation term ("ij", "...i"), for building
// equations (gradients).
std::string EinsumTerm(const std::vector<int>& labels);

}  // namespace weir
