// The training family: fused optimizer updates of resource variables,
// with TensorFlow's names, inputs and attrs (graphs interoperate).
//
// Every op has the layout `var, slots..., scalars..., grad, [indices,]
// scalars...`: the variable and its slot variables (accumulators) as
// handles, hyperparameters as scalars of T, and the gradient; the sparse
// forms (ResourceSparseApply*) take gradient rows for the variable rows
// named by `indices`. One table below declares both forms of a family.
//
// Shape functions check what the graph knows: hyperparameters are scalars,
// and a sparse gradient has one row per index. A handle carries no shape
// here, so that grad and slots match the variable is checked by the kernel.
#include <string>
#include <vector>

#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

struct ApplyFamily {
  const char* name;  // ResourceApply<name>, ResourceSparseApply<name>
  std::vector<const char*> slots;
  std::vector<const char*> scalars_before_grad;
  const char* grad;
  std::vector<const char*> scalars_after_grad;
  std::vector<const char*> extra_attrs;
  bool has_sparse;
  const char* doc;
  const char* sparse_grad = nullptr;  // the sparse form's name for grad, if not `grad`'s
};

const std::vector<ApplyFamily>& Families() {
  static const std::vector<ApplyFamily> families = {
      {"GradientDescent", {}, {"alpha"}, "delta", {}, {}, false, "var -= alpha * delta."},
      {"Momentum",
       {"accum"},
       {"lr"},
       "grad",
       {"momentum"},
       {"use_nesterov: bool = false"},
       true,
       "accum = accum * momentum + grad; var -= lr * accum, or with use_nesterov "
       "var -= lr * (grad + momentum * accum)."},
      {"Adagrad",
       {"accum"},
       {"lr"},
       "grad",
       {},
       {"update_slots: bool = true"},
       true,
       "accum += grad^2 (when update_slots); var -= lr * grad / sqrt(accum)."},
      {"ProximalGradientDescent",
       {},
       {"alpha", "l1", "l2"},
       "delta",
       {},
       {},
       true,
       "prox_v = var - alpha * delta; var = sign(prox_v) / (1 + alpha * l2) * max(|prox_v| - "
       "alpha * l1, 0).",
       "grad"},
      {"ProximalAdagrad",
       {"accum"},
       {"lr", "l1", "l2"},
       "grad",
       {},
       {},
       true,
       "accum += grad^2; with rate = lr / sqrt(accum): prox_v = var - rate * grad; var = "
       "sign(prox_v) / (1 + rate * l2) * max(|prox_v| - rate * l1, 0)."},
      {"Adadelta",
       {"accum", "accum_update"},
       {"lr", "rho", "epsilon"},
       "grad",
       {},
       {},
       true,
       "accum = rho * accum + (1 - rho) * grad^2; update = sqrt(accum_update + epsilon) / "
       "sqrt(accum + epsilon) * grad; accum_update = rho * accum_update + (1 - rho) * "
       "update^2; var -= lr * update."},
      {"Ftrl",
       {"accum", "linear"},
       {},
       "grad",
       {"lr", "l1", "l2", "lr_power"},
       {"multiply_linear_by_lr: bool = false"},
       true,
       "FTRL-proximal: accum_new = accum + grad^2; linear += grad - (accum_new^(-lr_power) - "
       "accum^(-lr_power)) / lr * var; quadratic = accum_new^(-lr_power) / lr + 2 * l2; var = "
       "(sign(linear) * l1 - linear) / quadratic where |linear| > l1, else 0; accum = "
       "accum_new. With multiply_linear_by_lr, linear accumulates lr * grad and l1, l2 and "
       "the division by lr scale by lr instead."},
      {"FtrlV2",
       {"accum", "linear"},
       {},
       "grad",
       {"lr", "l1", "l2", "l2_shrinkage", "lr_power"},
       {"multiply_linear_by_lr: bool = false"},
       true,
       "Ftrl whose linear term takes grad + 2 * l2_shrinkage * var (accum still takes "
       "grad^2)."},
      {"RMSProp",
       {"ms", "mom"},
       {"lr", "rho", "momentum", "epsilon"},
       "grad",
       {},
       {},
       true,
       "ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / sqrt(ms + "
       "epsilon); var -= mom."},
      {"CenteredRMSProp",
       {"mg", "ms", "mom"},
       {"lr", "rho", "momentum", "epsilon"},
       "grad",
       {},
       {},
       true,
       "RMSProp normalized by the variance estimate: mg = rho * mg + (1 - rho) * grad; ms as "
       "RMSProp; mom = momentum * mom + lr * grad / sqrt(ms - mg^2 + epsilon); var -= mom."},
      {"Adam",
       {"m", "v"},
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"},
       "grad",
       {},
       {"use_nesterov: bool = false"},
       false,
       "m = beta1 * m + (1 - beta1) * grad; v = beta2 * v + (1 - beta2) * grad^2; var -= "
       "lr * sqrt(1 - beta2_power) / (1 - beta1_power) * m / (sqrt(v) + epsilon); with "
       "use_nesterov, m in the last step is beta1 * m + (1 - beta1) * grad."},
      {"AdamWithAmsgrad",
       {"m", "v", "vhat"},
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"},
       "grad",
       {},
       {},
       false,
       "Adam with vhat = max(vhat, v) in place of v in the step."},
  };
  return families;
}

// Hyperparameters must be scalars; a sparse gradient has a row per index.
ShapeFn ApplyShapeFn(std::vector<int> scalars, std::vector<std::string> names, int grad,
                     int indices) {
  return [scalars, names, grad, indices](InferenceContext* c) -> Status {
    for (size_t i = 0; i < scalars.size(); ++i) {
      const PartialShape& shape = c->input(scalars[i]);
      if (shape.known_rank() && shape.rank() != 0) {
        return errors::InvalidArgument(names[i], " must be a scalar but has shape ", shape);
      }
    }
    if (indices < 0) return Status::OK();
    PartialShape index_shape, grad_shape;
    WEIR_RETURN_IF_ERROR(c->WithRank(indices, 1, &index_shape));
    WEIR_RETURN_IF_ERROR(c->WithRankAtLeast(grad, 1, &grad_shape));
    if (grad_shape.known_rank()) {
      int64_t rows;
      Status merged = InferenceContext::MergeDim(index_shape.dim(0), grad_shape.dim(0), &rows);
      if (!merged.ok()) {
        return errors::InvalidArgument("grad ", grad_shape, " must have one row per index of ",
                                       index_shape);
      }
    }
    return Status::OK();
  };
}

void RegisterApplyOp(OpRegistry* registry, const ApplyFamily& family, bool sparse) {
  OpDefBuilder builder(std::string(sparse ? "ResourceSparseApply" : "ResourceApply") + family.name);
  int next = 0;
  builder.Input("var: resource");
  ++next;
  for (const char* slot : family.slots) {
    builder.Input(std::string(slot) + ": resource");
    ++next;
  }
  std::vector<int> scalars;
  std::vector<std::string> names;
  auto add_scalar = [&](const char* name) {
    builder.Input(std::string(name) + ": T");
    scalars.push_back(next++);
    names.push_back(name);
  };
  for (const char* name : family.scalars_before_grad) add_scalar(name);
  const int grad = next++;
  builder.Input(std::string(sparse && family.sparse_grad ? family.sparse_grad : family.grad) +
                ": T");
  int indices = -1;
  if (sparse) {
    indices = next++;
    builder.Input("indices: Tindices");
  }
  for (const char* name : family.scalars_after_grad) add_scalar(name);
  builder.Attr("T: numbertype");
  if (sparse) builder.Attr("Tindices: {int32, int64}");
  builder.Attr("use_locking: bool = false");
  for (const char* attr : family.extra_attrs) builder.Attr(attr);
  std::string doc = family.doc;
  if (sparse)
    doc += " Applied to the rows `indices` of var and the slots, one index after another.";
  registry->Register(
      builder.SetIsStateful().SetShapeFn(ApplyShapeFn(scalars, names, grad, indices)).Doc(doc));
}

}  // namespace

void RegisterTrainingOps(OpRegistry* registry) {
  for (const ApplyFamily& family : Families()) {
    RegisterApplyOp(registry, family, /*sparse=*/false);
    if (family.has_sparse) RegisterApplyOp(registry, family, /*sparse=*/true);
  }
}

}  // namespace weir
