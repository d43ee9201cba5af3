#include "weir/kernels/conditional_accumulator.h"

#include <utility>

#include "weir/base/logging.h"
#include "weir/base/str_util.h"
#include "weir/framework/allocator.h"
#include "weir/framework/attr_value.h"
#include "weir/framework/op_kernel.h"

namespace weir {
namespace {

template <typename T>
void AddInto(Tensor* sum, const Tensor& gradient) {
  T* out = sum->data<T>();
  const T* in = gradient.data<T>();
  const int64_t n = sum->NumElements();
  for (int64_t i = 0; i < n; ++i) out[i] += in[i];
}

template <typename T>
void DivideBy(Tensor* sum, int32_t count) {
  const T divisor = static_cast<T>(count);
  for (T& value : sum->flat<T>()) value /= divisor;
}

bool Summable(DType dtype) { return dtype == DT_FLOAT || dtype == DT_DOUBLE; }

struct Attrs {
  DType dtype = DT_INVALID;
  PartialShape shape;
  std::string reduction;
};

Status ReadAttrs(const NodeDef& node_def, Attrs* attrs) {
  WEIR_RETURN_IF_ERROR(GetAttr(node_def.attrs, "dtype", &attrs->dtype));
  WEIR_RETURN_IF_ERROR(GetAttr(node_def.attrs, "shape", &attrs->shape));
  return GetAttr(node_def.attrs, "reduction_type", &attrs->reduction);
}

}  // namespace

StatusOr<std::shared_ptr<ConditionalAccumulator>> ConditionalAccumulator::Create(
    const NodeDef& node_def, std::string name) {
  Attrs attrs;
  WEIR_RETURN_IF_ERROR(ReadAttrs(node_def, &attrs));
  if (!Summable(attrs.dtype)) {
    return errors::Unimplemented(node_def.op, " of dtype ", attrs.dtype,
                                 ": Weir's accumulators sum float and double gradients");
  }
  Reduction reduction;
  if (attrs.reduction == "MEAN") {
    reduction = Reduction::kMean;
  } else if (attrs.reduction == "SUM") {
    reduction = Reduction::kSum;
  } else {
    return errors::InvalidArgument(node_def.op, ": reduction_type must be MEAN or SUM, got '",
                                   attrs.reduction, "'");
  }
  return std::shared_ptr<ConditionalAccumulator>(
      new ConditionalAccumulator(StrCat("ConditionalAccumulator '", name, "'"), attrs.dtype,
                                 std::move(attrs.shape), reduction, attrs.reduction));
}

ConditionalAccumulator::ConditionalAccumulator(std::string name, DType dtype, PartialShape shape,
                                               Reduction reduction, std::string reduction_name)
    : name_(std::move(name)),
      dtype_(dtype),
      shape_(std::move(shape)),
      reduction_(reduction),
      reduction_name_(std::move(reduction_name)) {}

// Waiting takes hold the accumulator (the kernels capture it), so none is
// left unless a caller let go while waiting: fail those rather than leak.
ConditionalAccumulator::~ConditionalAccumulator() {
  TakeList finished;
  finished.splice(finished.end(), takes_);
  for (Take& take : finished) {
    take.failure = errors::Cancelled(name_, " was destroyed while a take waited on it");
  }
  RunFinished(&finished);
}

Status ConditionalAccumulator::MatchesNodeDef(const NodeDef& node_def) const {
  Attrs other;
  WEIR_RETURN_IF_ERROR(ReadAttrs(node_def, &other));
  auto differs = [&](std::string_view what, const std::string& mine, const std::string& theirs) {
    return errors::InvalidArgument("shared ", name_, " has ", what, " ", mine, " but node '",
                                   node_def.name, "' asks for ", theirs);
  };
  if (other.dtype != dtype_) return differs("dtype", StrCat(dtype_), StrCat(other.dtype));
  if (other.shape != shape_) return differs("shape", StrCat(shape_), StrCat(other.shape));
  if (other.reduction != reduction_name_) {
    return differs("reduction_type", reduction_name_, other.reduction);
  }
  return Status::OK();
}

Status ConditionalAccumulator::ApplyGradient(int64_t local_step, const Tensor& gradient) {
  if (gradient.dtype() != dtype_) {
    return errors::InvalidArgument(name_, " holds ", dtype_, " gradients, got ", gradient.dtype());
  }
  if (!shape_.IsCompatibleWith(gradient.shape())) {
    return errors::InvalidArgument("Shape mismatch: ", name_, " (", dtype_, ") expects shape ",
                                   shape_, ", got ", gradient.shape());
  }
  TakeList finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (local_step < global_step_) return Status::OK();  // stale: dropped
    if (counter_ == 0) {
      // A copy of its own: the sum is updated in place and outlives the step.
      WEIR_ASSIGN_OR_RETURN(sum_, gradient.DeepCopy(DefaultCpuAllocator()));
    } else {
      if (sum_.shape() != gradient.shape()) {
        return errors::InvalidArgument("Shape mismatch: ", name_, " (", dtype_,
                                       ") has accumulated gradients of shape ", sum_.shape(),
                                       " this step, got ", gradient.shape());
      }
      if (dtype_ == DT_FLOAT) {
        AddInto<float>(&sum_, gradient);
      } else {
        AddInto<double>(&sum_, gradient);
      }
    }
    ++counter_;
    FlushLocked(&finished);
  }
  RunFinished(&finished);
  return Status::OK();
}

void ConditionalAccumulator::TryTakeGradient(int32_t num_required, OpKernelContext* context,
                                             TakeCallback done) {
  TakeList finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Take* self = &takes_.emplace_back();
    self->num_required = num_required;
    self->context = context;
    self->done = std::move(done);
    FlushLocked(&finished);
    // Flushing only pops from the front, so a waiting `self` is still last.
    const bool waiting = !takes_.empty() && &takes_.back() == self;
    CancellationManager* cancellation = waiting ? context->cancellation_manager() : nullptr;
    if (cancellation != nullptr) {
      self->cancellation = cancellation;
      self->token = cancellation->GetToken();
      std::weak_ptr<ConditionalAccumulator> weak = weak_from_this();
      self->registered =
          cancellation->RegisterCallback(self->token, [weak, cancellation, token = self->token] {
            if (auto accumulator = weak.lock()) accumulator->Cancel(cancellation, token);
          });
      if (!self->registered) {  // the step is already cancelled: fail now
        self->failure = errors::Cancelled("the step was cancelled while taking from ", name_);
        finished.splice(finished.end(), takes_, std::prev(takes_.end()));
      }
    }
  }
  RunFinished(&finished);
}

void ConditionalAccumulator::FlushLocked(TakeList* finished) {
  while (!takes_.empty() && counter_ >= takes_.front().num_required) {
    Take& take = takes_.front();
    if (reduction_ == Reduction::kMean) {
      if (dtype_ == DT_FLOAT) {
        DivideBy<float>(&sum_, counter_);
      } else {
        DivideBy<double>(&sum_, counter_);
      }
    }
    take.result = std::move(sum_);
    sum_ = Tensor();
    counter_ = 0;
    ++global_step_;
    finished->splice(finished->end(), takes_, takes_.begin());
  }
}

void ConditionalAccumulator::RunFinished(TakeList* finished) {
  for (Take& take : *finished) {
    // If the deregistration loses to a running StartCancel, that callback
    // finds no take and does nothing.
    if (take.registered) take.cancellation->DeregisterCallback(take.token);
    if (take.failure.ok()) {
      take.done(std::move(take.result));
    } else {
      take.context->SetStatus(take.failure);
      take.done(take.failure);
    }
  }
}

void ConditionalAccumulator::Cancel(CancellationManager* cancellation, CancellationToken token) {
  TakeList finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = takes_.begin(); it != takes_.end(); ++it) {
      if (it->cancellation != cancellation || it->token != token) continue;
      it->registered = false;  // its callback is this one, already removed
      it->failure = errors::Cancelled(
          "take from ", name_,
          " was cancelled (the step was cancelled, timed out or its session closed)");
      finished.splice(finished.end(), takes_, it);
      // A take behind this one may now be at the front with enough gradients.
      FlushLocked(&finished);
      break;
    }
  }
  RunFinished(&finished);
}

int32_t ConditionalAccumulator::num_accumulated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counter_;
}

int64_t ConditionalAccumulator::global_step() const {
  std::lock_guard<std::mutex> lock(mu_);
  return global_step_;
}

void ConditionalAccumulator::SetGlobalStep(int64_t step) {
  std::lock_guard<std::mutex> lock(mu_);
  if (step < global_step_) {
    LOG(Warning) << name_ << ": global step set back from " << global_step_ << " to " << step;
  }
  global_step_ = step;
}

}  // namespace weir
