#include "weir/kernels/conditional_accumulator.h"

#include <algorithm>
#include <limits>
#include <span>
#include <utility>

#include "weir/base/checked_math.h"
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
void DivideBy(Tensor* sum, int64_t count) {
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
  const bool sparse = node_def.op == "SparseConditionalAccumulator";
  return std::shared_ptr<ConditionalAccumulator>(new ConditionalAccumulator(
      StrCat(sparse ? "SparseConditionalAccumulator '" : "ConditionalAccumulator '", name, "'"),
      sparse, attrs.dtype, std::move(attrs.shape), reduction, attrs.reduction));
}

ConditionalAccumulator::ConditionalAccumulator(std::string name, bool sparse, DType dtype,
                                               PartialShape shape, Reduction reduction,
                                               std::string reduction_name)
    : name_(std::move(name)),
      sparse_(sparse),
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
  if ((node_def.op == "SparseConditionalAccumulator") != sparse_) {
    return errors::InvalidArgument("shared ", name_, " is ", sparse_ ? "sparse" : "dense",
                                   " but node '", node_def.name, "' (", node_def.op,
                                   ") asks for the other kind");
  }
  if (other.dtype != dtype_) return differs("dtype", StrCat(dtype_), StrCat(other.dtype));
  if (other.shape != shape_) return differs("shape", StrCat(shape_), StrCat(other.shape));
  if (other.reduction != reduction_name_) {
    return differs("reduction_type", reduction_name_, other.reduction);
  }
  return Status::OK();
}

Status ConditionalAccumulator::ApplyGradient(int64_t local_step, const Tensor& gradient) {
  if (sparse_) {
    return errors::InvalidArgument(name_,
                                   " takes IndexedSlices: apply with "
                                   "SparseAccumulatorApplyGradient");
  }
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

namespace {

// "[a,b]" of a dim list.
std::string DimsString(std::span<const int64_t> dims) {
  return StrCat("[", StrJoin(std::vector<int64_t>(dims.begin(), dims.end()), ","), "]");
}

template <typename T>
void AddRows(const Tensor& values, const std::vector<int64_t>& slots, int64_t row_elements,
             std::vector<double>* sums) {
  const T* in = values.data<T>();
  for (size_t i = 0; i < slots.size(); ++i) {
    double* out = sums->data() + slots[i] * row_elements;
    const T* row = in + static_cast<int64_t>(i) * row_elements;
    for (int64_t j = 0; j < row_elements; ++j) out[j] += static_cast<double>(row[j]);
  }
}

template <typename T>
void WriteRows(const std::vector<double>& sums, const std::vector<int64_t>& counts,
               const std::vector<int64_t>& slot_order, int64_t row_elements, bool mean,
               Tensor* values) {
  T* out = values->data<T>();
  for (size_t i = 0; i < slot_order.size(); ++i) {
    const int64_t slot = slot_order[i];
    const double* row = sums.data() + slot * row_elements;
    const double divisor = mean ? static_cast<double>(counts[slot]) : 1.0;
    for (int64_t j = 0; j < row_elements; ++j) {
      out[static_cast<int64_t>(i) * row_elements + j] = static_cast<T>(row[j] / divisor);
    }
  }
}

}  // namespace

Status ConditionalAccumulator::ApplySparseGradient(int64_t local_step, const Tensor& indices,
                                                   const Tensor& values,
                                                   const Tensor* dense_shape) {
  if (!sparse_) {
    return errors::InvalidArgument(name_,
                                   " takes dense gradients: apply with "
                                   "AccumulatorApplyGradient");
  }
  if (values.dtype() != dtype_) {
    return errors::InvalidArgument(name_, " holds ", dtype_, " gradients, got ", values.dtype());
  }
  if (indices.shape().dims() != 1) {
    return errors::InvalidArgument(name_, ": gradient_indices must be a vector, got shape ",
                                   indices.shape());
  }
  if (values.shape().dims() < 1 || values.shape().dim_size(0) != indices.NumElements()) {
    return errors::InvalidArgument("Shape mismatch: ", name_, " (", dtype_,
                                   ") needs one row of gradient_values per index: indices ",
                                   indices.shape(), ", values ", values.shape());
  }
  const std::span<const int64_t> value_dims = values.shape().dim_sizes();
  if (shape_.known_rank()) {
    if (shape_.rank() != values.shape().dims()) {
      return errors::InvalidArgument("Shape mismatch: ", name_, " (", dtype_, ") has shape ",
                                     shape_, " but gradient_values have shape ", values.shape());
    }
    for (int i = 1; i < shape_.rank(); ++i) {
      const int64_t want = shape_.dim_sizes()[i];
      if (want >= 0 && want != value_dims[i]) {
        return errors::InvalidArgument("Shape mismatch: ", name_, " (", dtype_,
                                       ") expected values dim ", i, " to be ", want, ", got ",
                                       value_dims[i], " (values ", values.shape(), ")");
      }
    }
  }
  // The limit of dim 0: the given dense shape's, else the accumulator's.
  int64_t limit = shape_.known_rank() && shape_.rank() > 0 ? shape_.dim_sizes()[0] : -1;
  if (dense_shape != nullptr) {
    if (dense_shape->shape().dims() != 1 || dense_shape->NumElements() != values.shape().dims()) {
      return errors::InvalidArgument("Shape mismatch: ", name_, ": gradient_shape ",
                                     dense_shape->shape(), " must list the ", values.shape().dims(),
                                     " dims of the gradient (values ", values.shape(), ")");
    }
    const int64_t* dims = dense_shape->data<int64_t>();
    for (int i = 1; i < values.shape().dims(); ++i) {
      if (dims[i] != value_dims[i]) {
        return errors::InvalidArgument(
            "Shape mismatch: ", name_, ": gradient_shape ",
            DimsString({dims, static_cast<size_t>(dense_shape->NumElements())}),
            " does not match gradient_values ", values.shape());
      }
    }
    if (dims[0] < 0 || (limit >= 0 && dims[0] != limit)) {
      return errors::InvalidArgument(
          "Shape mismatch: ", name_, " (shape ", shape_, "): gradient_shape ",
          DimsString({dims, static_cast<size_t>(dense_shape->NumElements())}));
    }
    limit = dims[0];
  }
  const int64_t* index = indices.data<int64_t>();
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    if (index[i] < 0 || (limit >= 0 && index[i] >= limit)) {
      return errors::InvalidArgument(name_, ": index ", i, " of the gradient is ", index[i],
                                     ", outside [0, ",
                                     limit >= 0 ? StrCat(limit) : std::string("inf"), ")");
    }
  }
  const std::vector<int64_t> row_shape(value_dims.begin() + 1, value_dims.end());
  WEIR_ASSIGN_OR_RETURN(int64_t row_elements, CheckedElementCount(row_shape, "a gradient row"));
  TakeList finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (local_step < global_step_) return Status::OK();  // stale: dropped
    if (has_row_shape_ && row_shape != row_shape_) {
      return errors::InvalidArgument("Shape mismatch: ", name_, " (", dtype_,
                                     ") has accumulated rows of shape ", DimsString(row_shape_),
                                     " this step, got gradient_values ", values.shape());
    }
    row_shape_ = row_shape;
    has_row_shape_ = true;
    // Each index's slot; a row repeated in this gradient is summed and
    // counted once.
    std::vector<int64_t> slots(indices.NumElements());
    std::map<int64_t, bool> counted;
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      auto [it, inserted] = rows_.try_emplace(index[i], static_cast<int64_t>(row_counts_.size()));
      if (inserted) {
        row_counts_.push_back(0);
        row_sums_.resize(row_sums_.size() + row_elements, 0.0);
      }
      slots[i] = it->second;
      if (counted.emplace(it->second, true).second) ++row_counts_[it->second];
    }
    if (dtype_ == DT_FLOAT) {
      AddRows<float>(values, slots, row_elements, &row_sums_);
    } else {
      AddRows<double>(values, slots, row_elements, &row_sums_);
    }
    ++counter_;
    FlushLocked(&finished);
  }
  RunFinished(&finished);
  return Status::OK();
}

StatusOr<std::vector<Tensor>> ConditionalAccumulator::TakeSparseLocked() {
  // Without a gradient that had rows, the rows' shape is the accumulator's.
  std::vector<int64_t> row_shape = row_shape_;
  if (!has_row_shape_ && shape_.known_rank() && shape_.rank() > 0) {
    row_shape.assign(shape_.dim_sizes().begin() + 1, shape_.dim_sizes().end());
    for (int64_t& dim : row_shape) dim = std::max<int64_t>(dim, 0);
  }
  WEIR_ASSIGN_OR_RETURN(int64_t row_elements, CheckedElementCount(row_shape, "a gradient row"));
  const int64_t n = static_cast<int64_t>(rows_.size());
  std::vector<int64_t> value_dims = {n};
  value_dims.insert(value_dims.end(), row_shape.begin(), row_shape.end());
  WEIR_ASSIGN_OR_RETURN(TensorShape value_shape, TensorShape::FromDims(value_dims));
  WEIR_ASSIGN_OR_RETURN(Tensor indices,
                        Tensor::Allocate(DefaultCpuAllocator(), DT_INT64, TensorShape({n})));
  WEIR_ASSIGN_OR_RETURN(Tensor values,
                        Tensor::Allocate(DefaultCpuAllocator(), dtype_, value_shape));
  std::vector<int64_t> slot_order;
  slot_order.reserve(n);
  int64_t i = 0;
  for (const auto& [index, slot] : rows_) {
    indices.data<int64_t>()[i++] = index;
    slot_order.push_back(slot);
  }
  const bool mean = reduction_ == Reduction::kMean;
  if (dtype_ == DT_FLOAT) {
    WriteRows<float>(row_sums_, row_counts_, slot_order, row_elements, mean, &values);
  } else {
    WriteRows<double>(row_sums_, row_counts_, slot_order, row_elements, mean, &values);
  }
  // The dense shape: dim 0 as the accumulator knows it (else -1), then the rows'.
  const int64_t dim0 = shape_.known_rank() && shape_.rank() > 0 ? shape_.dim_sizes()[0] : -1;
  const int64_t rank = 1 + static_cast<int64_t>(row_shape.size());
  WEIR_ASSIGN_OR_RETURN(Tensor dense_shape,
                        Tensor::Allocate(DefaultCpuAllocator(), DT_INT64, TensorShape({rank})));
  dense_shape.data<int64_t>()[0] = dim0;
  for (size_t d = 0; d < row_shape.size(); ++d) dense_shape.data<int64_t>()[d + 1] = row_shape[d];
  return std::vector<Tensor>{std::move(indices), std::move(values), std::move(dense_shape)};
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
    StatusOr<std::vector<Tensor>> result = sparse_ ? TakeSparseLocked() : TakeDenseLocked();
    if (result.ok()) {
      take.result = std::move(result).value();
    } else {
      take.failure = result.status();
    }
    sum_ = Tensor();
    rows_.clear();
    row_sums_.clear();
    row_counts_.clear();
    has_row_shape_ = false;
    counter_ = 0;
    ++global_step_;
    finished->splice(finished->end(), takes_, takes_.begin());
  }
}

StatusOr<std::vector<Tensor>> ConditionalAccumulator::TakeDenseLocked() {
  if (reduction_ == Reduction::kMean) {
    if (dtype_ == DT_FLOAT) {
      DivideBy<float>(&sum_, counter_);
    } else {
      DivideBy<double>(&sum_, counter_);
    }
  }
  return std::vector<Tensor>{std::move(sum_)};
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
  return static_cast<int32_t>(std::min<int64_t>(counter_, std::numeric_limits<int32_t>::max()));
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
