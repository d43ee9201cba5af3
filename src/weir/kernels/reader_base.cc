#include "weir/kernels/reader_base.h"

#include <algorithm>
#include <atomic>

#include "weir/base/cancellation.h"
#include "weir/framework/op_kernel.h"
#include "weir/framework/resource_var.h"

namespace weir {

struct ReaderBase::Request {
  uint64_t id = 0;
  int64_t max_records = 1;
  bool allow_partial = false;
  std::shared_ptr<QueueInterface> queue;
  OpKernelContext* context = nullptr;
  ReadCallback done;
  Records records;
  QueueInterface::Tuple dequeued;
  CancellationToken token = -1;  // >= 0 while registered to wait in line
};

ReaderBase::ReaderBase(std::string name, std::string signature)
    : name_(std::move(name)), signature_(std::move(signature)) {}

ReaderBase::~ReaderBase() = default;

std::string ReaderBase::DebugString() const { return StrCat(signature_, " '", name_, "'"); }

int64_t ReaderBase::num_records_produced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_produced_;
}

int64_t ReaderBase::num_work_units_completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return work_completed_;
}

void ReaderBase::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  if (has_work_) OnWorkFinishedLocked();
  has_work_ = false;
  work_.clear();
  records_produced_ = 0;
  work_completed_ = 0;
}

void ReaderBase::Read(int64_t max_records, bool allow_partial,
                      std::shared_ptr<QueueInterface> queue, OpKernelContext* context,
                      ReadCallback done) {
  auto request = std::make_shared<Request>();
  request->max_records = max_records;
  request->allow_partial = allow_partial;
  request->queue = std::move(queue);
  request->context = context;
  request->done = std::move(done);
  // A huge max_records reserves nothing up front: records are counted in.
  const size_t reserve = static_cast<size_t>(std::min<int64_t>(max_records, 1024));
  request->records.keys.reserve(reserve);
  request->records.values.reserve(reserve);

  std::unique_lock<std::mutex> lock(mu_);
  if (!busy_) {
    busy_ = true;
    lock.unlock();
    Drive(std::move(request), /*dequeued=*/false);
    return;
  }
  // Wait in line; a cancelled step leaves it at once.
  request->id = next_request_id_++;
  CancellationManager* cancellation = context->cancellation_manager();
  if (cancellation != nullptr) {
    request->token = cancellation->GetToken();
    std::weak_ptr<ReaderBase> self = weak_from_this();
    const uint64_t id = request->id;
    bool registered = cancellation->RegisterCallback(request->token, [self, id] {
      if (std::shared_ptr<ReaderBase> reader = self.lock()) reader->CancelWaiting(id);
    });
    if (!registered) {
      lock.unlock();
      request->done(errors::Cancelled("read from reader '", name_, "' was cancelled"), {});
      return;
    }
  }
  waiting_.push_back(std::move(request));
}

void ReaderBase::CancelWaiting(uint64_t id) {
  std::shared_ptr<Request> cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(waiting_.begin(), waiting_.end(),
                           [id](const std::shared_ptr<Request>& r) { return r->id == id; });
    if (it == waiting_.end()) return;  // already being served
    cancelled = std::move(*it);
    waiting_.erase(it);
  }
  cancelled->done(errors::Cancelled("read from reader '", name_,
                                    "' was cancelled while waiting for another read"),
                  {});
}

std::shared_ptr<ReaderBase::Request> ReaderBase::Finish(std::shared_ptr<Request> request,
                                                        const Status& status) {
  std::shared_ptr<Request> next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (waiting_.empty()) {
      busy_ = false;
    } else {
      next = std::move(waiting_.front());
      waiting_.pop_front();
    }
  }
  if (next != nullptr && next->token >= 0) {
    // If its cancellation already runs, that callback finds nothing to do
    // and the step's cancellation ends the request's dequeue instead.
    next->context->cancellation_manager()->DeregisterCallback(next->token);
    next->token = -1;
  }
  // The reader is handed on (or idle) before the callback runs, so the
  // caller's downstream work does not hold up other reads.
  request->done(status, std::move(request->records));
  return next;
}

bool ReaderBase::ReadFromCurrentFile(Request* request, Status* status) {
  std::lock_guard<std::mutex> lock(mu_);
  while (static_cast<int64_t>(request->records.keys.size()) < request->max_records) {
    if (!has_work_) return false;
    std::string key, value;
    bool produced = false, at_end = false;
    Status read = ReadLocked(&key, &value, &produced, &at_end);
    if (!read.ok()) {
      // The file is dropped: the next read starts the next one.
      OnWorkFinishedLocked();
      has_work_ = false;
      *status = read.WithContext(StrCat("reader '", name_, "'"));
      return true;
    }
    if (produced) {
      request->records.keys.push_back(std::move(key));
      request->records.values.push_back(std::move(value));
      ++records_produced_;
    }
    if (at_end) {
      OnWorkFinishedLocked();
      has_work_ = false;
      ++work_completed_;
    }
  }
  return true;
}

Status ReaderBase::StartDequeuedWork(Request* request) {
  QueueInterface::Tuple tuple = std::move(request->dequeued);
  if (tuple.empty()) {
    // The queue set its failure (closed and drained, cancelled) on the context.
    Status failed = request->context->status();
    if (failed.ok()) failed = errors::Internal("dequeue of a file name failed without a status");
    return failed;
  }
  if (tuple.size() != 1 || tuple[0].dtype() != DT_STRING || tuple[0].NumElements() != 1) {
    return errors::InvalidArgument(
        "reader '", name_, "' needs a queue of single string file names, but dequeued ",
        tuple.size(), " component(s)",
        tuple.empty() ? std::string()
                      : StrCat(", the first ", tuple[0].dtype(), " of shape ", tuple[0].shape()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (has_work_) OnWorkFinishedLocked();  // a Reset raced with the dequeue
  work_ = *tuple[0].data<std::string>();
  Status started = OnWorkStartedLocked(work_);
  has_work_ = started.ok();
  return started.WithContext(StrCat("reader '", name_, "'"));
}

void ReaderBase::Drive(std::shared_ptr<Request> request, bool dequeued) {
  std::shared_ptr<ReaderBase> self = shared_from_this();
  while (request != nullptr) {
    Status status;
    if (dequeued) {
      dequeued = false;
      status = StartDequeuedWork(request.get());
      if (!status.ok()) {
        request = Finish(std::move(request), status);
        continue;
      }
    }
    if (ReadFromCurrentFile(request.get(), &status)) {
      request = Finish(std::move(request), status);
      continue;
    }
    // The file is done and more records are wanted. With records in hand,
    // ReadUpTo returns them rather than wait on an empty queue.
    if (request->allow_partial && !request->records.keys.empty() && request->queue->size() == 0) {
      request = Finish(std::move(request), Status::OK());
      continue;
    }
    // Whichever of the caller and the callback comes second continues, so
    // a dequeue that completes at once loops here instead of recursing.
    auto arrivals = std::make_shared<std::atomic<int>>(0);
    request->queue->TryDequeue(request->context,
                               [self, request, arrivals](QueueInterface::Tuple tuple) {
                                 request->dequeued = std::move(tuple);
                                 if (arrivals->fetch_add(1) == 1) self->Drive(request, true);
                               });
    if (arrivals->fetch_add(1) == 0) return;  // the callback continues
    dequeued = true;
  }
}

StatusOr<std::shared_ptr<ReaderBase>> LookupReader(OpKernelContext* context, int input) {
  WEIR_ASSIGN_OR_RETURN(const ResourceHandle* handle,
                        HandleFromInput(context, input, kReaderTypeName));
  StatusOr<std::shared_ptr<ReaderBase>> reader =
      context->resource_manager()->Lookup<ReaderBase>(handle->container(), handle->name());
  if (!reader.ok()) {
    return errors::NotFound("reader '", handle->name(), "' (container '", handle->container(),
                            "') does not exist: it was never created in this session or was "
                            "reset");
  }
  return reader;
}

}  // namespace weir
