// The reader family: readers are resources in the device's ResourceMgr
// (kernels/reader_base.h) that turn the file names of a queue into records;
// the reader ops create them and read through them. MatchingFiles, ReadFile
// and WriteFile reach files directly. OpDefs and shape functions are
// TensorFlow 2.21's, so imported input pipelines run unchanged.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// TensorFlow's ScalarInputsAndOutputs: every input a scalar, every output too.
Status ScalarInputsAndOutputs(InferenceContext* c) {
  PartialShape unused;
  for (int i = 0; i < c->num_inputs(); ++i) WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &unused));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

Status ReadUpToShape(InferenceContext* c) {
  PartialShape unused;
  for (int i = 0; i < 3; ++i) WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &unused));
  c->set_output(0, PartialShape::UnknownDims(1));
  c->set_output(1, PartialShape::UnknownDims(1));
  return Status::OK();
}

Status MatchingFilesShape(InferenceContext* c) {
  if (c->input(0).rank() > 1) {
    return errors::InvalidArgument("pattern must be a scalar or a vector, got shape ", c->input(0));
  }
  c->set_output(0, PartialShape::UnknownDims(1));
  return Status::OK();
}

// The attrs every reader has, after its own.
OpDefBuilder& SharedAttrs(OpDefBuilder& builder) {
  return builder.Attr("container: string = ''").Attr("shared_name: string = ''");
}

constexpr char kSharedDoc[] =
    " A resource: `shared_name` (the node's name if empty) in `container` (the session's own "
    "if empty); readers of one name share their state. ReaderReadV2 and ReaderReadUpToV2 read "
    "through it.";

}  // namespace

void RegisterReaderOps(OpRegistry* registry) {
  {
    OpDefBuilder b("TFRecordReaderV2");
    b.Output("reader_handle: resource");
    SharedAttrs(b).Attr("compression_type: string = ''");
    registry->Register(
        b.SetIsStateful()
            .SetShapeFn(ScalarInputsAndOutputs)
            .Doc(std::string(
                     "A reader of TFRecord files (compression_type \"\", \"ZLIB\" or \"GZIP\"): "
                     "key \"<file>:<byte offset of the record>\", value the record.") +
                 kSharedDoc));
  }
  {
    OpDefBuilder b("FixedLengthRecordReaderV2");
    b.Output("reader_handle: resource")
        .Attr("header_bytes: int = 0")
        .Attr("record_bytes: int")
        .Attr("footer_bytes: int = 0")
        .Attr("hop_bytes: int = 0");
    SharedAttrs(b).Attr("encoding: string = ''");
    registry->Register(
        b.SetIsStateful()
            .SetShapeFn(ScalarInputsAndOutputs)
            .Doc(std::string(
                     "A reader of records of `record_bytes` bytes after `header_bytes`, starting "
                     "every `hop_bytes` bytes (every record_bytes if 0), each followed by at "
                     "least `footer_bytes` of the file; a partial last record is dropped. "
                     "`encoding` \"ZLIB\" or \"GZIP\" reads a compressed file. Key "
                     "\"<file>:<record number>\".") +
                 kSharedDoc));
  }
  {
    OpDefBuilder b("TextLineReaderV2");
    b.Output("reader_handle: resource").Attr("skip_header_lines: int = 0");
    SharedAttrs(b);
    registry->Register(
        b.SetIsStateful()
            .SetShapeFn(ScalarInputsAndOutputs)
            .Doc(std::string(
                     "A reader of the lines of text files (without '\\n' or '\\r\\n'), after "
                     "`skip_header_lines` of each: key \"<file>:<line number from 1>\".") +
                 kSharedDoc));
  }
  {
    OpDefBuilder b("WholeFileReaderV2");
    b.Output("reader_handle: resource");
    SharedAttrs(b);
    registry->Register(
        b.SetIsStateful()
            .SetShapeFn(ScalarInputsAndOutputs)
            .Doc(std::string("A reader of whole files: key the file name, value its contents.") +
                 kSharedDoc));
  }
  registry->Register(
      OpDefBuilder("ReaderReadV2")
          .Input("reader_handle: resource")
          .Input("queue_handle: resource")
          .Output("key: string")
          .Output("value: string")
          .SetIsStateful()
          .SetShapeFn(ScalarInputsAndOutputs)
          .Doc("The next record of the reader; when its file is done it dequeues the next file "
               "name from the queue (waiting, without holding a thread, while it is empty). A "
               "closed, drained queue is OutOfRange."));
  registry->Register(
      OpDefBuilder("ReaderReadUpToV2")
          .Input("reader_handle: resource")
          .Input("queue_handle: resource")
          .Input("num_records: int64")
          .Output("keys: string")
          .Output("values: string")
          .SetIsStateful()
          .SetShapeFn(ReadUpToShape)
          .Doc("Up to `num_records` records of the reader, dequeuing file names as ReaderReadV2. "
               "It may return fewer before the last batch: it starts another file within one "
               "call only if the queue holds a name, and never waits holding records."));
  registry->Register(OpDefBuilder("ReaderNumRecordsProducedV2")
                         .Input("reader_handle: resource")
                         .Output("records_produced: int64")
                         .SetIsStateful()
                         .SetShapeFn(ScalarInputsAndOutputs)
                         .Doc("How many records the reader has produced since it was made or "
                              "reset."));
  registry->Register(OpDefBuilder("ReaderNumWorkUnitsCompletedV2")
                         .Input("reader_handle: resource")
                         .Output("units_completed: int64")
                         .SetIsStateful()
                         .SetShapeFn(ScalarInputsAndOutputs)
                         .Doc("How many files the reader has finished since it was made or "
                              "reset."));
  registry->Register(OpDefBuilder("ReaderResetV2")
                         .Input("reader_handle: resource")
                         .SetIsStateful()
                         .SetShapeFn(ScalarInputsAndOutputs)
                         .Doc("Returns the reader to its initial state: no current file, counts "
                              "zero."));
  registry->Register(
      OpDefBuilder("MatchingFiles")
          .Input("pattern: string")
          .Output("filenames: string")
          .SetShapeFn(MatchingFilesShape)
          .Doc("The files matching a glob pattern (or any of a vector of them): '*', '?', "
               "'[...]' within one path component, sorted. No match is an empty vector."));
  registry->Register(OpDefBuilder("ReadFile")
                         .Input("filename: string")
                         .Output("contents: string")
                         .SetShapeFn(ScalarInputsAndOutputs)
                         .Doc("The contents of the file `filename`."));
  registry->Register(OpDefBuilder("WriteFile")
                         .Input("filename: string")
                         .Input("contents: string")
                         .SetIsStateful()
                         .SetShapeFn(ScalarInputsAndOutputs)
                         .Doc("Replaces the file `filename` with `contents` atomically (a "
                              "temporary file renamed over it), creating missing directories."));
}

}  // namespace weir
