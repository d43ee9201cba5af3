#include "weir/kernels/queue_base.h"

#include <utility>

#include "weir/base/str_util.h"
#include "weir/framework/node_def.h"
#include "weir/framework/op_kernel.h"
#include "weir/framework/resource_var.h"
#include "weir/kernels/array_copy.h"

namespace weir {

Status ReadQueueOptions(const NodeDef& node_def, QueueOptions* options) {
  options->op = node_def.op;
  WEIR_RETURN_IF_ERROR(GetAttr(node_def.attrs, "component_types", &options->component_types));
  WEIR_RETURN_IF_ERROR(GetAttr(node_def.attrs, "shapes", &options->shapes));
  return GetAttr(node_def.attrs, "capacity", &options->capacity);
}

QueueBase::QueueBase(std::string kind, QueueOptions options, std::vector<DType> dtypes,
                     std::vector<PartialShape> shapes)
    : options_(std::move(options)),
      queue_name_(StrCat(kind, " '", options_.name, "'")),
      dtypes_(std::move(dtypes)),
      shapes_(std::move(shapes)) {
  CHECK(shapes_.empty() || shapes_.size() == dtypes_.size()) << queue_name_;
}

// Waiters hold the queue, so none is left unless a user of QueueInterface
// let go of it while waiting: fail those rather than leak their callbacks.
QueueBase::~QueueBase() {
  AttemptList finished;
  finished.splice(finished.end(), enqueue_attempts_);
  finished.splice(finished.end(), dequeue_attempts_);
  for (Attempt& attempt : finished) {
    attempt.failure = errors::Cancelled(queue_name_, " was destroyed while an op waited on it");
  }
  RunFinished(&finished);
}

Status QueueBase::CheckComponentCount(const Tuple& tuple) const {
  if (tuple.size() != dtypes_.size()) {
    return errors::InvalidArgument(queue_name_, " has ", dtypes_.size(),
                                   " components but the element has ", tuple.size());
  }
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (tuple[i].dtype() != dtypes_[i]) {
      return errors::InvalidArgument(queue_name_, ": component ", i, " has dtype ",
                                     tuple[i].dtype(), ", expected ", dtypes_[i]);
    }
  }
  return Status::OK();
}

Status QueueBase::ValidateTuple(const Tuple& tuple) const {
  WEIR_RETURN_IF_ERROR(CheckComponentCount(tuple));
  if (shapes_.empty()) return Status::OK();
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (!shapes_[i].IsCompatibleWith(tuple[i].shape())) {
      return errors::InvalidArgument(queue_name_, ": component ", i, " (", dtypes_[i],
                                     ") has shape ", tuple[i].shape(), ", expected ", shapes_[i]);
    }
  }
  return Status::OK();
}

Status QueueBase::ValidateManyTuple(const Tuple& tuple) const {
  WEIR_RETURN_IF_ERROR(CheckComponentCount(tuple));
  for (size_t i = 0; i < tuple.size(); ++i) {
    const TensorShape& shape = tuple[i].shape();
    if (shape.rank() == 0) {
      return errors::InvalidArgument(queue_name_, ": component ", i, " (", dtypes_[i],
                                     ") is a scalar; EnqueueMany needs a batch along dim 0");
    }
    if (shape.dim_size(0) != tuple[0].dim_size(0)) {
      return errors::InvalidArgument(queue_name_, ": component ", i, " has ", shape.dim_size(0),
                                     " elements (shape ", shape, ") but component 0 has ",
                                     tuple[0].dim_size(0), " (shape ", tuple[0].shape(), ")");
    }
    if (shapes_.empty()) continue;
    TensorShape element = shape;
    element.RemoveDim(0);
    if (!shapes_[i].IsCompatibleWith(element)) {
      return errors::InvalidArgument(queue_name_, ": component ", i, " (", dtypes_[i],
                                     ") has elements of shape ", element, " (batch ", shape,
                                     "), expected ", shapes_[i]);
    }
  }
  return Status::OK();
}

void QueueBase::TryEnqueue(Tuple tuple, OpKernelContext* context, DoneCallback callback) {
  Status valid = ValidateTuple(tuple);
  if (!valid.ok()) {
    context->SetStatus(valid);
    callback();
    return;
  }
  Attempt attempt;
  attempt.action = Action::kEnqueue;
  attempt.context = context;
  attempt.done = std::move(callback);
  attempt.elements.push_back(std::move(tuple));
  Submit(std::move(attempt));
}

void QueueBase::TryEnqueueMany(Tuple tuple, OpKernelContext* context, DoneCallback callback) {
  Status valid = ValidateManyTuple(tuple);
  if (!valid.ok()) {
    context->SetStatus(valid);
    callback();
    return;
  }
  // Elements are slices sharing the batch's buffers: splitting copies nothing.
  const int64_t n = tuple[0].dim_size(0);
  if (n == 0) {  // as TensorFlow: done at once, even on a closed or full queue
    callback();
    return;
  }
  Attempt attempt;
  attempt.action = Action::kEnqueue;
  attempt.context = context;
  attempt.done = std::move(callback);
  attempt.elements.resize(n);
  for (size_t c = 0; c < tuple.size(); ++c) {
    TensorShape element_shape = tuple[c].shape();
    element_shape.RemoveDim(0);
    const int64_t per_element = element_shape.num_elements();
    for (int64_t k = 0; k < n; ++k) {
      attempt.elements[k].push_back(ShareElements(tuple[c], k * per_element, element_shape));
    }
  }
  Submit(std::move(attempt));
}

void QueueBase::TryDequeue(OpKernelContext* context, CallbackWithTuple callback) {
  Attempt attempt;
  attempt.action = Action::kDequeue;
  attempt.context = context;
  attempt.deliver = std::move(callback);
  attempt.requested = 1;
  Submit(std::move(attempt));
}

void QueueBase::TryDequeueMany(int64_t num_elements, OpKernelContext* context,
                               bool allow_small_batch, CallbackWithTuple callback) {
  Status can = num_elements < 0 ? errors::InvalidArgument(queue_name_, ": cannot dequeue ",
                                                          num_elements, " < 0 elements")
                                : CheckCanDequeueMany();
  if (!can.ok()) {
    context->SetStatus(can);
    callback(Tuple());
    return;
  }
  if (num_elements == 0) {  // as TensorFlow: at once, even from a closed queue
    std::vector<Tuple> none;
    StatusOr<Tuple> batch = MakeBatch(context, none);
    if (!batch.ok()) context->SetStatus(batch.status());
    callback(batch.ok() ? std::move(batch).value() : Tuple());
    return;
  }
  Attempt attempt;
  attempt.action = Action::kDequeue;
  attempt.context = context;
  attempt.deliver = std::move(callback);
  attempt.requested = num_elements;
  attempt.batch = true;
  attempt.allow_small_batch = allow_small_batch;
  Submit(std::move(attempt));
}

void QueueBase::Close(OpKernelContext* context, bool cancel_pending_enqueues,
                      DoneCallback callback) {
  if (!cancel_pending_enqueues) {
    // As TensorFlow: the close waits behind the enqueues already pending.
    Attempt attempt;
    attempt.action = Action::kClose;
    attempt.context = context;
    attempt.done = std::move(callback);
    Submit(std::move(attempt));
    return;
  }
  AttemptList finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    for (Attempt& attempt : enqueue_attempts_) {
      attempt.failure = errors::Cancelled(
          queue_name_, attempt.action == Action::kClose ? " is already closed"
                                                        : " was closed with cancel_pending_enqueues"
                                                          " while the enqueue waited");
    }
    finished.splice(finished.end(), enqueue_attempts_);
    FlushLocked(&finished);
  }
  RunFinished(&finished);
  callback();
}

int64_t QueueBase::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return StoredLocked();
}

bool QueueBase::is_closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

void QueueBase::Submit(Attempt attempt) {
  AttemptList finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    AttemptList& attempts =
        attempt.action == Action::kDequeue ? dequeue_attempts_ : enqueue_attempts_;
    attempts.push_back(std::move(attempt));
    Attempt* self = &attempts.back();
    FlushLocked(&finished);
    // Flushing only pops from the front, so a waiting `self` is still last.
    const bool waiting = !attempts.empty() && &attempts.back() == self;
    CancellationManager* cancellation = waiting ? self->context->cancellation_manager() : nullptr;
    if (cancellation != nullptr) {
      self->cancellation = cancellation;
      self->token = cancellation->GetToken();
      std::weak_ptr<QueueBase> weak = weak_from_this();
      self->registered =
          cancellation->RegisterCallback(self->token, [weak, cancellation, token = self->token] {
            if (std::shared_ptr<QueueBase> queue = weak.lock()) queue->Cancel(cancellation, token);
          });
      if (!self->registered) {  // the step is already cancelled: fail now
        if (self->action == Action::kDequeue && !self->elements.empty()) {
          RestoreLocked(std::move(self->elements));
        }
        self->failure = errors::Cancelled("the step was cancelled while waiting on ", queue_name_);
        finished.splice(finished.end(), attempts, std::prev(attempts.end()));
        FlushLocked(&finished);
      }
    }
  }
  RunFinished(&finished);
}

void QueueBase::Cancel(CancellationManager* cancellation, CancellationToken token) {
  AttemptList finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (AttemptList* attempts : {&enqueue_attempts_, &dequeue_attempts_}) {
      for (auto it = attempts->begin(); it != attempts->end(); ++it) {
        if (it->cancellation != cancellation || it->token != token) continue;
        if (it->action == Action::kDequeue && !it->elements.empty()) {
          RestoreLocked(std::move(it->elements));
        }
        it->registered = false;  // its callback is this one, already removed
        it->failure = errors::Cancelled(
            it->action == Action::kDequeue   ? "dequeue from "
            : it->action == Action::kEnqueue ? "enqueue to "
                                             : "close of ",
            queue_name_,
            " was cancelled (the step was cancelled, timed out or its session closed)");
        finished.splice(finished.end(), *attempts, it);
        FlushLocked(&finished);
        break;
      }
      if (!finished.empty()) break;
    }
  }
  RunFinished(&finished);
}

Status QueueBase::ClosedAndInsufficient(int64_t requested) const {
  return errors::OutOfRange(queue_name_, " is closed and has insufficient elements (requested ",
                            requested, ", current size ", StoredLocked(), ")");
}

QueueBase::RunResult QueueBase::RunLocked(Attempt* attempt) {
  switch (attempt->action) {
    case Action::kClose:
      if (closed_) {
        attempt->failure = errors::Cancelled(queue_name_, " is already closed");
      }
      closed_ = true;
      return RunResult::kComplete;
    case Action::kEnqueue: {
      if (closed_) {
        attempt->failure = errors::Cancelled(queue_name_, " is closed");
        return RunResult::kComplete;
      }
      bool progress = false;
      while (attempt->next < attempt->elements.size() &&
             (options_.capacity < 0 || StoredLocked() < options_.capacity)) {
        PushLocked(std::move(attempt->elements[attempt->next++]));
        progress = true;
      }
      if (attempt->next == attempt->elements.size()) return RunResult::kComplete;
      return progress ? RunResult::kProgress : RunResult::kNoProgress;
    }
    case Action::kDequeue: {
      bool progress = false;
      while (static_cast<int64_t>(attempt->elements.size()) < attempt->requested &&
             DequeuableLocked() > 0) {
        attempt->elements.push_back(PopLocked());
        progress = true;
      }
      if (static_cast<int64_t>(attempt->elements.size()) == attempt->requested) {
        return RunResult::kComplete;
      }
      if (closed_) {
        if (attempt->allow_small_batch && !attempt->elements.empty()) return RunResult::kComplete;
        if (!attempt->elements.empty()) RestoreLocked(std::move(attempt->elements));
        attempt->elements.clear();
        attempt->failure = ClosedAndInsufficient(attempt->requested);
        return RunResult::kComplete;
      }
      return progress ? RunResult::kProgress : RunResult::kNoProgress;
    }
  }
  return RunResult::kNoProgress;
}

bool QueueBase::TryFrontLocked(AttemptList* attempts, AttemptList* finished) {
  bool progress = false;
  while (!attempts->empty()) {
    RunResult result = RunLocked(&attempts->front());
    if (result == RunResult::kNoProgress) break;
    progress = true;
    if (result == RunResult::kProgress) break;
    finished->splice(finished->end(), *attempts, attempts->begin());
  }
  return progress;
}

void QueueBase::FlushLocked(AttemptList* finished) {
  bool progress;
  do {
    progress = TryFrontLocked(&enqueue_attempts_, finished);
    progress = TryFrontLocked(&dequeue_attempts_, finished) || progress;
  } while (progress);
}

void QueueBase::RunFinished(AttemptList* finished) const {
  for (Attempt& attempt : *finished) {
    // If the deregistration loses to a running StartCancel, that callback
    // finds no attempt and does nothing.
    if (attempt.registered) attempt.cancellation->DeregisterCallback(attempt.token);
    if (!attempt.failure.ok()) attempt.context->SetStatus(attempt.failure);
    if (attempt.action != Action::kDequeue) {
      attempt.done();
      continue;
    }
    Tuple result;
    if (attempt.failure.ok()) {
      if (!attempt.batch) {
        result = std::move(attempt.elements[0]);
      } else {
        StatusOr<Tuple> batch = MakeBatch(attempt.context, attempt.elements);
        if (batch.ok()) {
          result = std::move(batch).value();
        } else {
          attempt.context->SetStatus(batch.status());
        }
      }
    }
    attempt.deliver(std::move(result));
  }
}

Status QueueBase::CheckCanDequeueMany() const {
  bool defined = !shapes_.empty();
  for (const PartialShape& shape : shapes_) defined = defined && shape.IsFullyDefined();
  if (!defined) {
    return errors::InvalidArgument(queue_name_,
                                   ": DequeueMany and DequeueUpTo need every component's shape "
                                   "fully defined (the `shapes` attr)");
  }
  return Status::OK();
}

StatusOr<QueueInterface::Tuple> QueueBase::MakeBatch(OpKernelContext* context,
                                                     std::vector<Tuple>& elements) const {
  const int64_t n = static_cast<int64_t>(elements.size());
  Tuple batch(dtypes_.size());
  for (size_t c = 0; c < dtypes_.size(); ++c) {
    TensorShape shape = shapes_[c].ToTensorShape();
    const int64_t per_element = shape.num_elements();
    WEIR_RETURN_IF_ERROR(shape.InsertDimWithStatus(0, n));
    WEIR_RETURN_IF_ERROR(context->allocate_temp(dtypes_[c], shape, &batch[c]));
    DispatchByElementSize(dtypes_[c], [&]<typename T>() {
      T* out = ElementsAs<T>(batch[c]);
      for (int64_t k = 0; k < n; ++k) {
        CopyElements(ElementsAs<T>(elements[k][c]), per_element, out + k * per_element);
      }
    });
  }
  return batch;
}

Status QueueBase::MatchesKindAttrs(const NodeDef&) const { return Status::OK(); }

Status QueueBase::MatchesNodeDef(const NodeDef& node_def) const {
  QueueOptions other;
  WEIR_RETURN_IF_ERROR(ReadQueueOptions(node_def, &other));
  auto differs = [&](std::string_view what, const std::string& mine, const std::string& theirs) {
    return errors::InvalidArgument("shared queue '", options_.name, "' has ", what, " ", mine,
                                   " but node '", node_def.name, "' asks for ", theirs);
  };
  if (other.op != options_.op) return differs("type", options_.op, other.op);
  if (other.component_types != options_.component_types) {
    return differs("component types", StrCat("[", StrJoin(options_.component_types, ","), "]"),
                   StrCat("[", StrJoin(other.component_types, ","), "]"));
  }
  if (other.shapes != options_.shapes) {
    return differs("shapes", StrCat("[", StrJoin(options_.shapes, ","), "]"),
                   StrCat("[", StrJoin(other.shapes, ","), "]"));
  }
  if (other.capacity != options_.capacity) {
    return differs("capacity", StrCat(options_.capacity), StrCat(other.capacity));
  }
  return MatchesKindAttrs(node_def);
}

std::string QueueBase::DebugString() const { return queue_name_; }

StatusOr<std::shared_ptr<QueueInterface>> LookupQueue(OpKernelContext* context, int input) {
  WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle,
                        HandleFromInput(context, input, kQueueTypeName));
  StatusOr<std::shared_ptr<QueueInterface>> queue =
      context->resource_manager()->Lookup<QueueInterface>(handle->container(), handle->name());
  if (!queue.ok()) {
    return errors::NotFound("queue '", handle->name(), "' (container '", handle->container(),
                            "') does not exist: it was never created in this session or its "
                            "container was reset");
  }
  return queue;
}

}  // namespace weir
