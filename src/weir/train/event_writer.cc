#include "weir/train/event_writer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "proto/event.pb.h"
#include "proto/summary.pb.h"
#include "weir/base/file_system.h"
#include "weir/base/record_writer.h"
#include "weir/graph/graph.h"
#include "weir/graph/graph_def_io.h"

namespace weir {
namespace {

constexpr char kFileVersion[] = "brain.Event:2";

double WallTimeSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string Serialize(const wire::Event& event) { return event.SerializeAsString(); }

}  // namespace

StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Create(
    const std::string& logdir, const EventFileWriterOptions& options) {
  if (!(options.flush_secs > 0)) {
    return errors::InvalidArgument("EventFileWriter: flush_secs must be positive, not ",
                                   options.flush_secs);
  }
  if (logdir.empty()) return errors::InvalidArgument("EventFileWriter: logdir is empty");
  WEIR_RETURN_IF_ERROR(RecursivelyCreateDir(logdir));
  const double now = WallTimeSeconds();
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%010lld", static_cast<long long>(now));
  const std::string base =
      StrCat(logdir, "/events.out.tfevents.", seconds, ".", HostName(), options.filename_suffix);
  // TensorFlow would truncate the file of another writer started in the
  // same second; an exclusive create and a counter keep both, even when
  // they race (TensorBoard reads every file whose name holds "tfevents").
  RecordWriterOptions record_options;
  record_options.atomic = false;  // readers see each flushed event at once
  record_options.exclusive = true;
  std::string path = base;
  StatusOr<std::unique_ptr<RecordWriter>> created = RecordWriter::Create(path, record_options);
  for (int n = 1; errors::IsAlreadyExists(created.status()) && n < 1000; ++n) {
    path = StrCat(base, ".", n);
    created = RecordWriter::Create(path, record_options);
  }
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<RecordWriter> records, std::move(created));
  wire::Event event;
  event.set_wall_time(now);
  event.set_file_version(kFileVersion);
  WEIR_RETURN_IF_ERROR(records->Write(Serialize(event)));
  WEIR_RETURN_IF_ERROR(records->Flush());
  return std::unique_ptr<EventFileWriter>(
      new EventFileWriter(std::move(path), std::move(records), options.flush_secs));
}

EventFileWriter::EventFileWriter(std::string path, std::unique_ptr<RecordWriter> writer,
                                 double flush_secs)
    : path_(std::move(path)), writer_(std::move(writer)) {
  flusher_ = std::thread([this, flush_secs] { FlushPeriodically(flush_secs); });
}

EventFileWriter::~EventFileWriter() { (void)Close(); }

void EventFileWriter::FlushPeriodically(double flush_secs) {
  // Capped so that the deadline below cannot overflow the clock.
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(flush_secs, 1e9)));
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    auto deadline = std::chrono::steady_clock::now() + interval;
    if (stop_requested_.wait_until(lock, deadline, [this] { return stop_; })) return;
    Status status = FlushLocked();
    if (!status.ok() && deferred_error_.ok()) deferred_error_ = status;
  }
}

Status EventFileWriter::FlushLocked() {
  if (writer_ == nullptr) return errors::FailedPrecondition("event file ", path_, " is closed");
  return writer_->Flush().WithContext(StrCat("flushing event file ", path_));
}

Status EventFileWriter::WriteEvent(std::string_view serialized_event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr) return errors::FailedPrecondition("event file ", path_, " is closed");
  if (!deferred_error_.ok()) return std::exchange(deferred_error_, Status::OK());
  return writer_->Write(serialized_event).WithContext(StrCat("writing event file ", path_));
}

Status EventFileWriter::AddSummary(std::string_view serialized_summary, int64_t step) {
  wire::Event event;
  event.set_wall_time(WallTimeSeconds());
  event.set_step(step);
  if (!event.mutable_summary()->ParseFromArray(serialized_summary.data(),
                                               static_cast<int>(serialized_summary.size()))) {
    return errors::InvalidArgument("EventFileWriter::AddSummary at step ", step, ": the ",
                                   serialized_summary.size(),
                                   " bytes given are not a serialized Summary");
  }
  return WriteEvent(Serialize(event));
}

Status EventFileWriter::AddScalar(std::string_view tag, double value, int64_t step) {
  wire::Event event;
  event.set_wall_time(WallTimeSeconds());
  event.set_step(step);
  wire::Summary::Value* summary_value = event.mutable_summary()->add_value();
  summary_value->set_tag(std::string(tag));
  summary_value->set_simple_value(static_cast<float>(value));
  return WriteEvent(Serialize(event));
}

Status EventFileWriter::AddGraph(const Graph& graph) {
  wire::Event event;
  event.set_wall_time(WallTimeSeconds());
  event.set_graph_def(SerializeGraphDef(graph.ToGraphDef()));
  return WriteEvent(Serialize(event));
}

Status EventFileWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!deferred_error_.ok()) return std::exchange(deferred_error_, Status::OK());
  return FlushLocked();
}

Status EventFileWriter::Close() {
  std::lock_guard<std::mutex> close_lock(close_mu_);
  if (closed_) return close_status_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_requested_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  std::lock_guard<std::mutex> lock(mu_);
  close_status_ = std::exchange(deferred_error_, Status::OK());
  Status status = writer_->Close().WithContext(StrCat("closing event file ", path_));
  if (close_status_.ok()) close_status_ = status;
  writer_.reset();
  closed_ = true;
  return close_status_;
}

}  // namespace weir
