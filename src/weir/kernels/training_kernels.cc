// Kernels of the training family (ops/training_ops.cc): fused optimizer
// updates, in place on the variable and its slots.
//
// One kernel template, ApplyOp<T, Family, kSparse>, does what every update
// shares — find and lock the variables, check dtypes, initialization and
// shapes, copy-on-write, read the hyperparameters — and calls the family's
// Update on Eigen views. A sparse kernel runs the same Update on one row
// of the variable and slots per index, in index order, so a repeated index
// is applied twice (TensorFlow's kernels do the same; the optimizers in
// train/ sum repeated indices first).
//
// Locking: all the op's variables are locked together, in address order
// (so two updates sharing variables cannot deadlock), for the whole update.
// That holds for use_locking=false too: the lock is what keeps the
// copy-on-write promise of resource_var.h (a fetched value never changes),
// which an unlocked ("Hogwild") update would break. use_locking is accepted
// for wire compatibility.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weir/base/denormal.h"
#include "weir/base/threadpool.h"
#include "weir/framework/eigen_tensor.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_def.h"
#include "weir/framework/op_kernel.h"
#include "weir/framework/resource_var.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/type_list.h"

namespace weir {
namespace {

// Updates smaller than this run on the calling thread: handing a few
// thousand multiply-adds to the pool costs more than it saves.
constexpr int64_t kParallelMinElements = 32 * 1024;

struct ApplyOptions {
  bool use_nesterov = false;
  bool update_slots = true;
  bool multiply_linear_by_lr = false;
};

// The n elements one update touches: the variable (vars[0]), its slots
// (vars[1..]) and the gradient, all of the same length.
template <typename T>
struct Operands {
  std::array<T*, 4> vars{};
  const T* grad = nullptr;
  int64_t n = 0;

  EigenTensorMap<T, 1> var(int i) const { return EigenTensorMap<T, 1>(vars[i], n); }
  ConstEigenTensorMap<T, 1> g() const { return ConstEigenTensorMap<T, 1>(grad, n); }
};

// Each family: its slot count, its hyperparameters before and after the
// gradient (in input order, `s` below), the attrs it reads, and the update.
// The formulas are the ops' docs (ops/training_ops.cc) and TensorFlow's.

struct GradientDescent {
  static constexpr const char* kName = "GradientDescent";
  static constexpr int kSlots = 0, kScalarsBefore = 1, kScalarsAfter = 0;
  static constexpr bool kHasSparse = false;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions&) {
    const T alpha = s[0];
    x.var(0).device(d) -= x.g() * alpha;
  }
};

struct Momentum {
  static constexpr const char* kName = "Momentum";
  static constexpr int kSlots = 1, kScalarsBefore = 1, kScalarsAfter = 1;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions& options) {
    const T lr = s[0], momentum = s[1];
    auto var = x.var(0);
    auto accum = x.var(1);
    accum.device(d) = accum * momentum + x.g();
    if (options.use_nesterov) {
      var.device(d) -= x.g() * lr + accum * (momentum * lr);
    } else {
      var.device(d) -= accum * lr;
    }
  }
};

struct Adagrad {
  static constexpr const char* kName = "Adagrad";
  static constexpr int kSlots = 1, kScalarsBefore = 1, kScalarsAfter = 0;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions& options) {
    const T lr = s[0];
    auto accum = x.var(1);
    if (options.update_slots) accum.device(d) += x.g().square();
    x.var(0).device(d) -= x.g() * lr * accum.rsqrt();
  }
};

// Proximal steps: a gradient step of `rate`, then the l1/l2 shrinkage
// sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2). Adagrad's rate
// is per element, lr / sqrt(accum).
struct ProximalGradientDescent {
  static constexpr const char* kName = "ProximalGradientDescent";
  static constexpr int kSlots = 0, kScalarsBefore = 3, kScalarsAfter = 0;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions&) {
    const T alpha = s[0], l1 = s[1], l2 = s[2];
    auto var = x.var(0);
    const auto prox = var - x.g() * alpha;
    var.device(d) = prox.sign() * (prox.abs() - alpha * l1).cwiseMax(T(0)) / (alpha * l2 + T(1));
  }
};

struct ProximalAdagrad {
  static constexpr const char* kName = "ProximalAdagrad";
  static constexpr int kSlots = 1, kScalarsBefore = 3, kScalarsAfter = 0;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions&) {
    const T lr = s[0], l1 = s[1], l2 = s[2];
    auto var = x.var(0);
    auto accum = x.var(1);
    accum.device(d) += x.g().square();
    const auto rate = accum.rsqrt() * lr;
    const auto prox = var - x.g() * rate;
    var.device(d) = prox.sign() * (prox.abs() - rate * l1).cwiseMax(T(0)) / (rate * l2 + T(1));
  }
};

// Zeiler's Adadelta: the step is scaled by the ratio of the running RMS of
// past steps to that of the gradients. accum_update is overwritten last, so
// the step computed from its old value serves var and accum_update alike.
struct Adadelta {
  static constexpr const char* kName = "Adadelta";
  static constexpr int kSlots = 2, kScalarsBefore = 3, kScalarsAfter = 0;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions&) {
    const T lr = s[0], rho = s[1], epsilon = s[2];
    auto accum = x.var(1);
    auto accum_update = x.var(2);
    accum.device(d) = accum * rho + x.g().square() * (T(1) - rho);
    x.var(0).device(d) -= (accum_update + epsilon).sqrt() * (accum + epsilon).rsqrt() * x.g() * lr;
    accum_update.device(d) =
        accum_update * rho +
        ((accum_update + epsilon).sqrt() * (accum + epsilon).rsqrt() * x.g()).square() *
            (T(1) - rho);
  }
};

// FTRL-proximal (McMahan et al.), the formula of the op's doc: `linear`
// accumulates the gradient less the change of the per-coordinate learning
// rate times var; var is the closed-form minimizer of the l1/l2-regularized
// model, 0 where |linear| <= l1. kShrinkage (FtrlV2): the linear term takes
// grad + 2 * l2_shrinkage * var. With multiply_linear_by_lr, linear is kept
// multiplied by lr (l1 and the quadratic scale by lr instead).
template <bool kShrinkage>
struct FtrlFamily {
  static constexpr const char* kName = kShrinkage ? "FtrlV2" : "Ftrl";
  static constexpr int kSlots = 2, kScalarsBefore = 0, kScalarsAfter = kShrinkage ? 5 : 4;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions& options) {
    const T lr = s[0], l1 = s[1], l2 = s[2];
    const T shrinkage = kShrinkage ? s[3] : T(0);
    const T power = -(kShrinkage ? s[4] : s[3]);  // accum^power is the inverse rate times lr
    auto var = x.var(0);
    auto accum = x.var(1);
    auto linear = x.var(2);
    const auto grad = x.g();
    const auto rate_change = (accum + grad.square()).pow(power) - accum.pow(power);
    const auto zero = linear.constant(T(0));
    if (options.multiply_linear_by_lr) {
      linear.device(d) += (grad + var * (T(2) * shrinkage)) * lr - rate_change * var;
      accum.device(d) += grad.square();
      var.device(d) =
          (linear.abs() > linear.constant(l1 * lr))
              .select((linear.sign() * (l1 * lr) - linear) / (accum.pow(power) + T(2) * l2 * lr),
                      zero);
    } else {
      linear.device(d) += grad + var * (T(2) * shrinkage) - rate_change / lr * var;
      accum.device(d) += grad.square();
      var.device(d) =
          (linear.abs() > linear.constant(l1))
              .select((linear.sign() * l1 - linear) / (accum.pow(power) / lr + T(2) * l2), zero);
    }
  }
};

struct RMSProp {
  static constexpr const char* kName = "RMSProp";
  static constexpr int kSlots = 2, kScalarsBefore = 4, kScalarsAfter = 0;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions&) {
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    auto ms = x.var(1);
    auto mom = x.var(2);
    ms.device(d) += (x.g().square() - ms) * (T(1) - rho);
    mom.device(d) = mom * momentum + x.g() * lr * (ms + epsilon).rsqrt();
    x.var(0).device(d) -= mom;
  }
};

struct CenteredRMSProp {
  static constexpr const char* kName = "CenteredRMSProp";
  static constexpr int kSlots = 3, kScalarsBefore = 4, kScalarsAfter = 0;
  static constexpr bool kHasSparse = true;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions&) {
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    auto mg = x.var(1);
    auto ms = x.var(2);
    auto mom = x.var(3);
    ms.device(d) += (x.g().square() - ms) * (T(1) - rho);
    mg.device(d) += (x.g() - mg) * (T(1) - rho);
    mom.device(d) = mom * momentum + x.g() * lr * (ms - mg.square() + epsilon).rsqrt();
    x.var(0).device(d) -= mom;
  }
};

// Adam and AMSGrad share the moment updates; kAmsgrad steps with
// vhat = max(vhat, v) instead of v.
template <bool kAmsgrad>
struct AdamFamily {
  static constexpr const char* kName = kAmsgrad ? "AdamWithAmsgrad" : "Adam";
  static constexpr int kSlots = kAmsgrad ? 3 : 2, kScalarsBefore = 6, kScalarsAfter = 0;
  static constexpr bool kHasSparse = false;
  template <typename T, typename D>
  static void Update(const D& d, const Operands<T>& x, const T* s, const ApplyOptions& options) {
    const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4],
            epsilon = s[5];
    const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    auto var = x.var(0);
    auto m = x.var(1);
    auto v = x.var(2);
    m.device(d) += (x.g() - m) * (T(1) - beta1);
    v.device(d) += (x.g().square() - v) * (T(1) - beta2);
    if constexpr (kAmsgrad) {
      auto vhat = x.var(3);
      vhat.device(d) = vhat.cwiseMax(v);
      var.device(d) -= m * alpha / (vhat.sqrt() + epsilon);
    } else if (options.use_nesterov) {
      var.device(d) -= (x.g() * (T(1) - beta1) + m * beta1) * alpha / (v.sqrt() + epsilon);
    } else {
      var.device(d) -= m * alpha / (v.sqrt() + epsilon);
    }
  }
};

// A family's Update is several Eigen expressions (Adam: m, then v, then
// var), each a sweep over all n elements; on a large variable (the 3136x1024
// dense kernel: 12.8 MB per operand) every sweep streams the operands from
// memory again. So a large update runs as blocks of kBlockElements, each
// block's expressions back to back on one thread while its operands sit in
// cache: one sweep over memory, the same expressions, bit-identical results.
// 2048 elements keep Adam's five operands (5 x 8 KB of float) in L1/L2.
constexpr int64_t kBlockElements = 2048;

template <typename T, typename Family>
void RunUpdate(OpKernelContext* context, const Operands<T>& x, const T* scalars,
               const ApplyOptions& options) {
  if (x.n < kParallelMinElements) {
    Family::Update(Eigen::DefaultDevice(), x, scalars, options);
    return;
  }
  const int64_t blocks = (x.n + kBlockElements - 1) / kBlockElements;
  // About 10 cycles per element and expression: a rough weight, enough for
  // the pool to cut shards of many blocks each.
  const int64_t cycles_per_block = kBlockElements * 10 * (1 + Family::kSlots);
  context->device()->intra_op_pool()->ParallelFor(
      blocks, cycles_per_block, [&](int64_t first, int64_t last) {
        Operands<T> block = x;
        for (int64_t b = first; b < last; ++b) {
          const int64_t begin = b * kBlockElements;
          for (int k = 0; k < 1 + Family::kSlots; ++k) block.vars[k] = x.vars[k] + begin;
          block.grad = x.grad + begin;
          block.n = std::min(kBlockElements, x.n - begin);
          Family::Update(Eigen::DefaultDevice(), block, scalars, options);
        }
      });
}

// The op's variables (input 0 and the slots after it), looked up, locked
// together and checked. `names[i]` is variable i's name for errors.
class LockedVars {
 public:
  Status Lock(OpKernelContext* context, const std::string& op, int count, DType dtype) {
    for (int i = 0; i < count; ++i) {
      WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle,
                            HandleFromInput(context, i, kVarTypeName));
      names_.push_back(handle->name());
      StatusOr<std::shared_ptr<Var>> var = LookupVar(context, i);
      if (!var.ok()) {
        if (!errors::IsNotFound(var.status())) return var.status();
        return Uninitialized(op, i);
      }
      if ((*var)->dtype() != dtype) {
        return errors::InvalidArgument(op, ": variable '", names_[i], "' holds ", (*var)->dtype(),
                                       " but the op updates ", dtype);
      }
      vars_.push_back(std::move(var).value());
    }
    // Address order; a variable passed twice is locked once.
    std::vector<Var*> order;
    for (const auto& var : vars_) order.push_back(var.get());
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
    for (Var* var : order) locks_.emplace_back(*var->mu());
    for (int i = 0; i < count; ++i) {
      if (!vars_[i]->is_initialized()) return Uninitialized(op, i);
    }
    return Status::OK();
  }

  // REQUIRES: Lock succeeded.
  Var* var(int i) const { return vars_[i].get(); }
  const std::string& name(int i) const { return names_[i]; }

 private:
  Status Uninitialized(const std::string& op, int i) const {
    return errors::FailedPrecondition(op, ": variable '", names_[i],
                                      "' is uninitialized: run its initializer first");
  }

  std::vector<std::shared_ptr<Var>> vars_;
  std::vector<std::string> names_;
  std::vector<std::unique_lock<std::mutex>> locks_;
};

// Reads indices of either width, checking each against `rows` before any
// update is made (so a bad index changes nothing).
Status ReadRowIndices(const std::string& op, const std::string& var_name, const Tensor& indices,
                      int64_t rows, std::vector<int64_t>* out) {
  out->resize(indices.NumElements());
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    const int64_t index =
        indices.dtype() == DT_INT32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
    if (index < 0 || index >= rows) {
      return errors::InvalidArgument(op, ": indices[", i, "] = ", index, " is not in [0, ", rows,
                                     ") (the rows of variable '", var_name, "')");
    }
    (*out)[i] = index;
  }
  return Status::OK();
}

template <typename T, typename Family, bool kSparse>
class ApplyOp final : public OpKernel {
 public:
  static constexpr int kVars = 1 + Family::kSlots;
  static constexpr int kGrad = kVars + Family::kScalarsBefore;
  static constexpr int kIndices = kGrad + 1;  // sparse only
  static constexpr int kFirstScalarAfter = kGrad + (kSparse ? 2 : 1);
  static constexpr int kScalars = Family::kScalarsBefore + Family::kScalarsAfter;

  explicit ApplyOp(OpKernelConstruction* context) : OpKernel(context) {
    if (context->op_def().FindAttr("use_nesterov") != nullptr) {
      context->SetStatus(context->GetAttr("use_nesterov", &options_.use_nesterov));
    }
    if (context->op_def().FindAttr("update_slots") != nullptr) {
      context->SetStatus(context->GetAttr("update_slots", &options_.update_slots));
    }
    if (context->op_def().FindAttr("multiply_linear_by_lr") != nullptr) {
      context->SetStatus(
          context->GetAttr("multiply_linear_by_lr", &options_.multiply_linear_by_lr));
    }
    if (num_inputs() != kFirstScalarAfter + Family::kScalarsAfter) {
      context->SetStatus(errors::Internal(type_string(), ": the kernel expects ",
                                          kFirstScalarAfter + Family::kScalarsAfter,
                                          " inputs but the op declares ", num_inputs()));
    }
  }

  void Compute(OpKernelContext* context) override {
    ScopedFlushDenormals flush_denormals;
    const std::string& op = type_string();
    std::array<T, kScalars> scalars{};
    for (int i = 0; i < kScalars; ++i) {
      const int input =
          i < Family::kScalarsBefore ? kVars + i : kFirstScalarAfter + i - Family::kScalarsBefore;
      const Tensor& t = context->input(input);
      OP_REQUIRES(context, t.dims() == 0,
                  errors::InvalidArgument(op, ": input ", input,
                                          " (a hyperparameter) must be a "
                                          "scalar but has shape ",
                                          t.shape()));
      scalars[i] = t.scalar<T>();
    }
    LockedVars vars;
    OP_REQUIRES_OK(context, vars.Lock(context, op, kVars, kDTypeOf<T>));
    const TensorShape& shape = vars.var(0)->tensor()->shape();
    for (int i = 1; i < kVars; ++i) {
      const TensorShape& slot = vars.var(i)->tensor()->shape();
      OP_REQUIRES(
          context, slot == shape,
          errors::InvalidArgument(op, ": slot variable '", vars.name(i), "' has shape ", slot,
                                  " but variable '", vars.name(0), "' has shape ", shape));
    }
    const Tensor& grad = context->input(kGrad);
    std::vector<int64_t> rows;
    if constexpr (kSparse) {
      OP_REQUIRES_OK(context, CheckSparse(op, vars, shape, grad, context->input(kIndices), &rows));
    } else {
      OP_REQUIRES(context, grad.shape() == shape,
                  errors::InvalidArgument(op, ": gradient has shape ", grad.shape(),
                                          " but variable '", vars.name(0), "' has shape ", shape));
    }
    for (int i = 0; i < kVars; ++i) {
      OP_REQUIRES_OK(context, PrepareToUpdate(context, vars.var(i)));
    }
    if (shape.num_elements() == 0) return;
    Operands<T> x;
    for (int i = 0; i < kVars; ++i) x.vars[i] = vars.var(i)->tensor()->template data<T>();
    x.grad = grad.data<T>();
    if constexpr (!kSparse) {
      x.n = shape.num_elements();
      RunUpdate<T, Family>(context, x, scalars.data(), options_);
    } else {
      const int64_t row = shape.num_elements() / shape.dim_size(0);
      x.n = row;
      Operands<T> at_row = x;
      for (size_t i = 0; i < rows.size(); ++i) {
        for (int k = 0; k < kVars; ++k) at_row.vars[k] = x.vars[k] + rows[i] * row;
        at_row.grad = x.grad + static_cast<int64_t>(i) * row;
        RunUpdate<T, Family>(context, at_row, scalars.data(), options_);
      }
    }
  }

 private:
  // grad is [indices, var's dims after the first]; every index a row.
  static Status CheckSparse(const std::string& op, const LockedVars& vars, const TensorShape& shape,
                            const Tensor& grad, const Tensor& indices, std::vector<int64_t>* rows) {
    if (shape.rank() < 1) {
      return errors::InvalidArgument(op, ": variable '", vars.name(0),
                                     "' must have rank >= 1 for a sparse update, has shape ",
                                     shape);
    }
    if (indices.dims() != 1) {
      return errors::InvalidArgument(op, ": indices must be a vector, have shape ",
                                     indices.shape());
    }
    std::vector<int64_t> expected_dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
    expected_dims[0] = indices.dim_size(0);
    WEIR_ASSIGN_OR_RETURN(TensorShape expected, CheckedShape(expected_dims, op));
    if (grad.shape() != expected) {
      return errors::InvalidArgument(op, ": gradient has shape ", grad.shape(), " but indices ",
                                     indices.shape(), " and variable '", vars.name(0),
                                     "' of shape ", shape, " need ", expected);
    }
    return ReadRowIndices(op, vars.name(0), indices, shape.dim_size(0), rows);
  }

  ApplyOptions options_;
};

template <typename Family>
void RegisterFamily(KernelRegistry* registry) {
  ForEachType<float, double>([&]<typename T>() {
    registry->Register(
        KernelBuilder(std::string("ResourceApply") + Family::kName).template TypeConstraint<T>("T"),
        MakeKernel<ApplyOp<T, Family, false>>);
    if constexpr (Family::kHasSparse) {
      registry->Register(KernelBuilder(std::string("ResourceSparseApply") + Family::kName)
                             .template TypeConstraint<T>("T"),
                         MakeKernel<ApplyOp<T, Family, true>>);
    }
  });
}

}  // namespace

void RegisterTrainingKernels(KernelRegistry* registry) {
  RegisterFamily<GradientDescent>(registry);
  RegisterFamily<Momentum>(registry);
  RegisterFamily<Adagrad>(registry);
  RegisterFamily<ProximalGradientDescent>(registry);
  RegisterFamily<ProximalAdagrad>(registry);
  RegisterFamily<Adadelta>(registry);
  RegisterFamily<FtrlFamily<false>>(registry);
  RegisterFamily<FtrlFamily<true>>(registry);
  RegisterFamily<RMSProp>(registry);
  RegisterFamily<CenteredRMSProp>(registry);
  RegisterFamily<AdamFamily<false>>(registry);
  RegisterFamily<AdamFamily<true>>(registry);
}

}  // namespace weir
