// ReaderBase: what every reader (TFRecordReaderV2, FixedLengthRecordReaderV2,
// TextLineReaderV2, WholeFileReaderV2) shares: a resource that turns file
// names, dequeued from a queue when the current file is done, into (key,
// value) records, as TensorFlow's ReaderBase.
//
// Reads are serialized: requests wait in FIFO order, so threads sharing one
// reader lose and duplicate no record. Waiting costs no thread: a request
// behind another, or on an empty file-name queue, is resumed by a callback,
// and a cancelled step (Session::Close, timeout) ends its waiting request
// with Cancelled. A file that fails to open or read is reported (naming the
// reader, the file and, for records, the offset) and dropped: the next
// read starts the next file.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/resource_mgr.h"
#include "weir/kernels/queue_interface.h"

namespace weir {

class OpKernelContext;

// The type name a reader's handle carries.
inline constexpr char kReaderTypeName[] = "Reader";

class ReaderBase : public ResourceBase, public std::enable_shared_from_this<ReaderBase> {
 public:
  // `name` names the reader in messages; `signature` is its op and attrs:
  // a node may use an existing reader only with the same signature.
  ReaderBase(std::string name, std::string signature);
  ~ReaderBase() override;

  struct Records {
    std::vector<std::string> keys;
    std::vector<std::string> values;
  };
  using ReadCallback = std::function<void(const Status&, Records)>;

  // Reads up to `max_records` (>= 1) records into the callback, which runs
  // exactly once, on any thread; `context` must stay valid until then and
  // its step's cancellation ends a wait. With `allow_partial`, fewer (at
  // least one) come back rather than wait on an empty queue while holding
  // records; otherwise exactly `max_records` or an error. A closed, drained
  // queue is OutOfRange.
  void Read(int64_t max_records, bool allow_partial, std::shared_ptr<QueueInterface> queue,
            OpKernelContext* context, ReadCallback done);

  int64_t num_records_produced() const;
  int64_t num_work_units_completed() const;
  // Drops the current file and zeroes the counts.
  void Reset();

  const std::string& name() const { return name_; }
  const std::string& signature() const { return signature_; }
  std::string DebugString() const override;

 protected:
  // The hooks of a reader kind, called with the reader's lock held, one
  // request at a time. OnWorkStarted opens `filename`; ReadLocked sets
  // *produced when it made a record and *at_end when the file is done (it
  // may do both at once).
  virtual Status OnWorkStartedLocked(const std::string& filename) = 0;
  virtual Status ReadLocked(std::string* key, std::string* value, bool* produced, bool* at_end) = 0;
  // Closes the current file (after its end, an error, or a reset).
  virtual void OnWorkFinishedLocked() = 0;

  const std::string& current_work() const { return work_; }

 private:
  struct Request;
  // Runs `request` until it finishes or waits on the queue, then the
  // requests queued behind it. `dequeued` says its dequeue has called back.
  void Drive(std::shared_ptr<Request> request, bool dequeued);
  // Reads from the current file into the request; true when it is done
  // (all records, or an error in `status`).
  bool ReadFromCurrentFile(Request* request, Status* status);
  // Starts the file the request dequeued; an error when there is none.
  Status StartDequeuedWork(Request* request);
  // Hands the reader to the next waiting request (null: none; then the
  // reader is idle) and calls `request`'s callback.
  std::shared_ptr<Request> Finish(std::shared_ptr<Request> request, const Status& status);
  void CancelWaiting(uint64_t id);

  const std::string name_;
  const std::string signature_;

  mutable std::mutex mu_;
  // The request being served holds the reader ("busy"); others wait.
  bool busy_ = false;
  std::deque<std::shared_ptr<Request>> waiting_;
  uint64_t next_request_id_ = 0;
  bool has_work_ = false;
  std::string work_;
  int64_t records_produced_ = 0;
  int64_t work_completed_ = 0;
};

// The reader behind the handle in input `input`: NotFound when it does not
// exist, InvalidArgument when the handle is not a reader's or is for
// another device.
StatusOr<std::shared_ptr<ReaderBase>> LookupReader(OpKernelContext* context, int input);

}  // namespace weir
