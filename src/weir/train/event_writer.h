// EventFileWriter: a TensorBoard event file, written as TensorBoard's own
// writers do, so `tensorboard --logdir` shows Weir's curves and graph.
//
//   WEIR_ASSIGN_OR_RETURN(auto writer, EventFileWriter::Create("runs/mlp"));
//   WEIR_RETURN_IF_ERROR(writer->AddGraph(*root.graph()));
//   WEIR_RETURN_IF_ERROR(writer->AddScalar("loss", loss, step));
//   WEIR_RETURN_IF_ERROR(writer->AddSummary(merged.scalar<std::string>(), step));
//
// The file is `<logdir>/events.out.tfevents.<10-digit unix seconds>.<hostname><suffix>`
// (".1", ".2"... appended if another writer took that name in the same
// second), a TFRecord file of Event protos (proto/event.proto) whose first
// record has file_version "brain.Event:2". Events become readable when they
// are flushed: every flush_secs by a background thread, on Flush() and on
// Close(). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "weir/base/status.h"

namespace weir {

class Graph;
class RecordWriter;

struct EventFileWriterOptions {
  double flush_secs = 10;  // > 0
  std::string filename_suffix;
};

class EventFileWriter {
 public:
  // Creates `logdir` if needed and the event file, with its file_version
  // event already flushed. InvalidArgument for flush_secs <= 0 or NaN.
  static StatusOr<std::unique_ptr<EventFileWriter>> Create(
      const std::string& logdir, const EventFileWriterOptions& options = {});
  // Closes the file if Close() was not called (its error is lost).
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // An event holding `serialized_summary`, the bytes of a Summary proto (a
  // fetched ScalarSummary, HistogramSummary or MergeSummary output).
  // InvalidArgument if they do not parse as a Summary.
  Status AddSummary(std::string_view serialized_summary, int64_t step);
  // An event holding one scalar (stored as float, as TensorBoard's are).
  Status AddScalar(std::string_view tag, double value, int64_t step);
  // An event holding `graph` as a serialized GraphDef (TensorBoard's Graphs tab).
  Status AddGraph(const Graph& graph);

  // Makes every event added so far readable. An error of an earlier
  // background flush is returned by the next call (Add*, Flush or Close).
  Status Flush();
  // Stops the background flush, flushes and closes the file. Later calls
  // return the first call's status; later Add* and Flush are FailedPrecondition.
  Status Close();

  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::unique_ptr<RecordWriter> writer, double flush_secs);
  Status WriteEvent(std::string_view serialized_event);
  Status FlushLocked();
  void FlushPeriodically(double flush_secs);

  const std::string path_;
  std::mutex mu_;  // guards everything below but the thread
  std::unique_ptr<RecordWriter> writer_;
  Status deferred_error_;  // of a background flush, not yet returned
  bool stop_ = false;
  std::condition_variable stop_requested_;
  std::mutex close_mu_;  // one Close at a time
  bool closed_ = false;
  Status close_status_;
  std::thread flusher_;
};

}  // namespace weir
