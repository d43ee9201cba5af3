// The gradient of Einsum, by Einsum: the gradient of an operand is the
// output's gradient contracted with the other operand onto the operand's
// labels. Labels only the operand had (summed out) are broadcast back by an
// Einsum with ones of the operand's shape; diagonals (repeated labels) come
// out of the kernel's diagonal filling; "..." dims the operand broadcast
// are summed back, as in any broadcasting op.
#include <algorithm>
#include <string>
#include <vector>

#include "weir/framework/einsum_spec.h"
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

constexpr int kEllipsis = EinsumEquation::kEllipsisLabel;

bool Has(const std::vector<int>& term, int label) {
  return std::find(term.begin(), term.end(), label) != term.end();
}

int NamedCount(const std::vector<int>& term) {
  return static_cast<int>(term.size()) - (Has(term, kEllipsis) ? 1 : 0);
}

Output Einsum(const Scope& scope, InputList inputs, const std::string& equation) {
  return ops::Einsum(scope, std::move(inputs), equation);
}

// The gradient of the operand `self` (term `self_term`), given the output's
// gradient g and the other operand (absent for one operand); `out_rank` is
// the output's rank, or -1 when unknown.
StatusOr<Output> OperandGrad(const Scope& scope, const std::string& text, const Output& g,
                             const std::vector<int>& out_term, const Output& self,
                             const std::vector<int>& self_term, const Output* other,
                             const std::vector<int>* other_term, int out_rank) {
  std::vector<int> left;
  bool reduced = false;
  for (int label : self_term) {
    const bool kept = label == kEllipsis || Has(out_term, label) ||
                      (other_term != nullptr && Has(*other_term, label));
    if (kept) {
      left.push_back(label);
    } else {
      reduced = true;
    }
  }
  // "..." dims of the output the operand lacks are summed out of its
  // gradient: computed first as leading dims (none when "..." is empty).
  const bool extra_ellipsis = Has(out_term, kEllipsis) && !Has(self_term, kEllipsis);
  if (extra_ellipsis) left.insert(left.begin(), kEllipsis);
  Output grad;
  if (other == nullptr) {
    grad = Einsum(scope, {g}, EinsumTerm(out_term) + "->" + EinsumTerm(left));
  } else {
    grad = Einsum(scope, {g, *other},
                  EinsumTerm(out_term) + "," + EinsumTerm(*other_term) + "->" + EinsumTerm(left));
  }
  if (extra_ellipsis) {
    const int named = NamedCount(out_term);
    if (out_rank >= 0) {
      std::vector<int64_t> axes(out_rank - named);
      for (int i = 0; i < out_rank - named; ++i) axes[i] = i;
      if (!axes.empty()) grad = ops::Sum(scope, grad, IntVector(scope, axes));
    } else {
      grad = ops::Sum(scope, grad, ops::Range(scope, 0, ops::Sub(scope, ops::Rank(scope, g), named), 1));
    }
    left.erase(left.begin());
  }
  if (reduced) {
    // Ones over the summed labels, broadcast by an outer product.
    grad = Einsum(scope, {grad, ops::OnesLike(scope, self)},
                  EinsumTerm(left) + "," + EinsumTerm(self_term) + "->" + EinsumTerm(self_term));
  }
  return grad;
}

// Sums `grad` (the operand's gradient over the broadcast "..." dims) back to
// the operand's own "..." dims.
StatusOr<Output> Unbroadcast(const Scope& scope, const std::string& text, const Output& grad,
                             const Output& self, const std::vector<int>& self_term,
                             const Output& other, const std::vector<int>& other_term,
                             bool first) {
  if (!Has(self_term, kEllipsis)) return grad;
  if (self.shape().IsFullyDefined() && grad.shape().IsFullyDefined() &&
      self.shape().dim_sizes() == grad.shape().dim_sizes()) {
    return grad;
  }
  if (!self.shape().known_rank() || !other.shape().known_rank()) {
    return errors::Unimplemented("the gradient of Einsum '", text,
                                 "' with '...' needs operands of known rank");
  }
  // The "..." part of a shape: its start and length.
  auto ellipsis_dims = [&](const Output& t, const std::vector<int>& term) {
    if (!Has(term, kEllipsis)) return IntVector(scope, {});
    const int start = static_cast<int>(std::find(term.begin(), term.end(), kEllipsis) - term.begin());
    const int length = t.shape().rank() - NamedCount(term);
    return ops::Slice(scope, ops::Shape(scope, t), IntVector(scope, {start}), IntVector(scope, {length}));
  };
  const int start =
      static_cast<int>(std::find(self_term.begin(), self_term.end(), kEllipsis) - self_term.begin());
  Output self_dims = ellipsis_dims(self, self_term), other_dims = ellipsis_dims(other, other_term);
  Operation axes = first ? ops::BroadcastGradientArgs(scope, self_dims, other_dims)
                         : ops::BroadcastGradientArgs(scope, other_dims, self_dims);
  Output reduce = ops::AddV2(scope, axes.output(first ? 0 : 1), IntVector(scope, {start}));
  return ops::Reshape(scope, ops::Sum(scope, grad, reduce), ops::Shape(scope, self));
}

Status EinsumGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                  std::vector<Output>* grads) {
  std::string text;
  WEIR_RETURN_IF_ERROR(GetAttr(op.node()->def().attrs, "equation", &text));
  const int n = op.node()->num_inputs();
  WEIR_ASSIGN_OR_RETURN(EinsumEquation equation, ParseEinsumEquation(text, n));
  if (!IsFloatingDType(op.output(0).dtype())) {
    return errors::Unimplemented("the gradient of Einsum '", text, "' of dtype ",
                                 op.output(0).dtype());
  }
  const Output x = ForwardInput(op, 0);
  const int out_rank = op.output(0).shape().rank();
  if (n == 1) {
    WEIR_ASSIGN_OR_RETURN(Output gx, OperandGrad(scope, text, g[0], equation.output, x,
                                                 equation.inputs[0], nullptr, nullptr, out_rank));
    *grads = {gx};
    return scope.status();
  }
  const Output y = ForwardInput(op, 1);
  const std::vector<int>& xt = equation.inputs[0];
  const std::vector<int>& yt = equation.inputs[1];
  WEIR_ASSIGN_OR_RETURN(Output gx, OperandGrad(scope, text, g[0], equation.output, x, xt, &y, &yt, out_rank));
  WEIR_ASSIGN_OR_RETURN(Output gy, OperandGrad(scope, text, g[0], equation.output, y, yt, &x, &xt, out_rank));
  WEIR_ASSIGN_OR_RETURN(gx, Unbroadcast(scope, text, gx, x, xt, y, yt, /*first=*/true));
  WEIR_ASSIGN_OR_RETURN(gy, Unbroadcast(scope, text, gy, y, yt, x, xt, /*first=*/false));
  *grads = {gx, gy};
  return scope.status();
}

}  // namespace

void RegisterEinsumGradient(GradientRegistry* registry) {
  registry->Register("Einsum", EinsumGrad);
}

}  // namespace weir
