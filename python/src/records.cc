// weir._C.RecordWriter / RecordReader: TFRecord files (base/record_writer.h,
// record_reader.h) for weir.io.TFRecordWriter, weir.io.tf_record_iterator
// and the summary FileWriter's event files.
//
//   RecordWriter(path, compression="", atomic=True, exclusive=False)
//     .write(bytes)  .flush()  .close()  .path
//   RecordReader(path, compression="")
//     .read() -> bytes, or None at a clean end of file  .offset  .path
//
// compression is TensorFlow's string: "", "ZLIB" or "GZIP". Failures raise
// the registered class of the Status code (DataLoss naming file and offset
// for a corrupt record; FailedPrecondition for a write after close). The GIL
// is released around file I/O.
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "common.h"
#include "weir/base/record_reader.h"
#include "weir/base/record_writer.h"
#include "weir/base/zlib_stream.h"

namespace nb = nanobind;

namespace weir::python {
namespace {

RecordCompression Compression(const std::string& name) {
  StatusOr<RecordCompression> compression = ParseRecordCompression(name);
  if (!compression.ok()) ThrowStatus(compression.status());
  return *compression;
}

class PyRecordWriter {
 public:
  PyRecordWriter(const std::string& path, const std::string& compression, bool atomic,
                 bool exclusive) {
    RecordWriterOptions options;
    options.compression = Compression(compression);
    options.atomic = atomic;
    options.exclusive = exclusive;
    StatusOr<std::unique_ptr<RecordWriter>> writer = [&] {
      nb::gil_scoped_release release;
      return RecordWriter::Create(path, options);
    }();
    if (!writer.ok()) ThrowStatus(writer.status());
    writer_ = std::move(*writer);
    path_ = path;
  }

  void Write(nb::bytes record) {
    Status status = Open();
    // Small records are the common case: the copy into the writer's buffer
    // is cheaper than giving up the GIL.
    if (status.ok()) status = writer_->Write(std::string_view(record.c_str(), record.size()));
    if (!status.ok()) ThrowStatus(status);
  }

  void Flush() {
    Status status = Open();
    if (status.ok()) {
      nb::gil_scoped_release release;
      status = writer_->Flush();
    }
    if (!status.ok()) ThrowStatus(status);
  }

  // Idempotent (TensorFlow's writer close is): a second close does nothing.
  void Close() {
    if (writer_ == nullptr) return;
    Status status;
    {
      nb::gil_scoped_release release;
      status = writer_->Close();
    }
    writer_.reset();
    if (!status.ok()) ThrowStatus(status);
  }

  const std::string& path() const { return path_; }

 private:
  Status Open() const {
    if (writer_ == nullptr) {
      return Status(Code::kFailedPrecondition, "TFRecordWriter for '" + path_ + "' is closed");
    }
    return Status();
  }

  std::unique_ptr<RecordWriter> writer_;
  std::string path_;
};

class PyRecordReader {
 public:
  PyRecordReader(const std::string& path, const std::string& compression) {
    RecordCompression kind = Compression(compression);
    StatusOr<std::unique_ptr<RecordReader>> reader = [&] {
      nb::gil_scoped_release release;
      return RecordReader::Open(path, kind);
    }();
    if (!reader.ok()) ThrowStatus(reader.status());
    reader_ = std::move(*reader);
  }

  std::optional<nb::bytes> Read() {
    std::string record;
    Status status;
    {
      nb::gil_scoped_release release;
      status = reader_->ReadRecord(&record);
    }
    if (errors::IsOutOfRange(status)) return std::nullopt;
    if (!status.ok()) ThrowStatus(status);
    return nb::bytes(record.data(), record.size());
  }

  uint64_t offset() const { return reader_->offset(); }
  const std::string& path() const { return reader_->path(); }

 private:
  std::unique_ptr<RecordReader> reader_;
};

}  // namespace

void DefineRecords(nb::module_& m) {
  nb::class_<PyRecordWriter>(m, "RecordWriter")
      .def(nb::init<const std::string&, const std::string&, bool, bool>(), nb::arg("path"),
           nb::arg("compression") = "", nb::arg("atomic") = true, nb::arg("exclusive") = false)
      .def("write", &PyRecordWriter::Write, nb::arg("record"))
      .def("flush", &PyRecordWriter::Flush)
      .def("close", &PyRecordWriter::Close)
      .def_prop_ro("path", &PyRecordWriter::path);
  nb::class_<PyRecordReader>(m, "RecordReader")
      .def(nb::init<const std::string&, const std::string&>(), nb::arg("path"),
           nb::arg("compression") = "")
      .def("read", &PyRecordReader::Read)
      .def_prop_ro("offset", &PyRecordReader::offset)
      .def_prop_ro("path", &PyRecordReader::path);
}

}  // namespace weir::python
