// Kernels of the reader family: the reader resources (file_readers.h), the
// verbs that read through them, and MatchingFiles, ReadFile, WriteFile.
#include <algorithm>

#include "weir/base/file_system.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_kernel.h"
#include "weir/framework/resource_mgr.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/file_readers.h"
#include "weir/kernels/queue_interface.h"
#include "weir/kernels/reader_base.h"

namespace weir {
namespace {

// The reader ops: a handle to reader `shared_name` (the node's name if
// empty) in `container` (the session's own if empty), made on first use.
class ReaderHandleOp final : public OpKernel {
 public:
  ReaderHandleOp(OpKernelConstruction* context, StatusOr<ReaderSpec> spec) : OpKernel(context) {
    context->SetStatus(context->GetAttr("container", &container_));
    context->SetStatus(context->GetAttr("shared_name", &shared_name_));
    if (shared_name_.empty()) shared_name_ = name();
    if (spec.ok()) {
      spec_ = std::move(spec).value();
    } else {
      context->SetStatus(spec.status().WithContext(context->node().Describe()));
    }
  }

  void Compute(OpKernelContext* context) override {
    const std::string container =
        container_.empty() ? std::string(context->default_container()) : container_;
    StatusOr<std::shared_ptr<ReaderBase>> reader =
        context->resource_manager()->LookupOrCreate<ReaderBase>(
            container, shared_name_,
            [this]() -> StatusOr<std::shared_ptr<ReaderBase>> { return spec_.make(shared_name_); });
    OP_REQUIRES_OK(context, reader.status());
    OP_REQUIRES(
        context, (*reader)->signature() == spec_.signature,
        errors::InvalidArgument("reader '", shared_name_, "' in container '", container, "' is a ",
                                (*reader)->signature(), ", not a ", spec_.signature));
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<ResourceHandle>() =
        ResourceHandle(context->device()->name(), container, shared_name_, kReaderTypeName);
  }

 private:
  std::string container_;
  std::string shared_name_;
  ReaderSpec spec_;
};

template <typename T>
T AttrOr(OpKernelConstruction* context, const std::string& name, T fallback) {
  T value = fallback;
  context->SetStatus(context->GetAttr(name, &value));
  return value;
}

std::unique_ptr<OpKernel> MakeTFRecordReader(OpKernelConstruction* c) {
  return std::make_unique<ReaderHandleOp>(
      c, TFRecordReaderSpec(AttrOr<std::string>(c, "compression_type", "")));
}

std::unique_ptr<OpKernel> MakeFixedLengthRecordReader(OpKernelConstruction* c) {
  return std::make_unique<ReaderHandleOp>(
      c, FixedLengthRecordReaderSpec(
             AttrOr<int64_t>(c, "header_bytes", 0), AttrOr<int64_t>(c, "record_bytes", 1),
             AttrOr<int64_t>(c, "footer_bytes", 0), AttrOr<int64_t>(c, "hop_bytes", 0),
             AttrOr<std::string>(c, "encoding", "")));
}

std::unique_ptr<OpKernel> MakeTextLineReader(OpKernelConstruction* c) {
  return std::make_unique<ReaderHandleOp>(
      c, TextLineReaderSpec(AttrOr<int64_t>(c, "skip_header_lines", 0)));
}

std::unique_ptr<OpKernel> MakeWholeFileReader(OpKernelConstruction* c) {
  return std::make_unique<ReaderHandleOp>(c, WholeFileReaderSpec());
}

Status StringOutput(OpKernelContext* context, int index, std::vector<std::string> values,
                    bool scalar) {
  Tensor* out;
  TensorShape shape = scalar ? TensorShape() : TensorShape({static_cast<int64_t>(values.size())});
  WEIR_RETURN_IF_ERROR(context->allocate_output(index, shape, &out));
  std::move(values.begin(), values.end(), out->data<std::string>());
  return Status::OK();
}

// ReaderReadV2 (one record, scalar outputs) and ReaderReadUpToV2.
template <bool kUpTo>
class ReaderReadOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void ComputeAsync(OpKernelContext* context, DoneCallback done) override {
    StatusOr<std::shared_ptr<ReaderBase>> reader = LookupReader(context, 0);
    OP_REQUIRES_OK_ASYNC(context, reader.status(), done);
    StatusOr<std::shared_ptr<QueueInterface>> queue = LookupQueue(context, 1);
    OP_REQUIRES_OK_ASYNC(context, queue.status(), done);
    int64_t num_records = 1;
    if constexpr (kUpTo) {
      const Tensor& n = context->input(2);
      OP_REQUIRES_ASYNC(context, n.dtype() == DT_INT64 && n.shape().rank() == 0,
                        errors::InvalidArgument("num_records must be an int64 scalar, got ",
                                                n.dtype(), " ", n.shape()),
                        done);
      num_records = n.scalar<int64_t>();
      OP_REQUIRES_ASYNC(context, num_records > 0,
                        errors::InvalidArgument("num_records must be > 0, not ", num_records),
                        done);
    }
    (*reader)->Read(
        num_records, /*allow_partial=*/kUpTo, *std::move(queue), context,
        [context, done = std::move(done)](const Status& status, ReaderBase::Records records) {
          if (!status.ok()) {
            context->SetStatus(status);
          } else {
            Status out = StringOutput(context, 0, std::move(records.keys), !kUpTo);
            if (out.ok()) out = StringOutput(context, 1, std::move(records.values), !kUpTo);
            context->SetStatus(out);
          }
          done();
        });
  }
};

// ReaderNumRecordsProducedV2 and ReaderNumWorkUnitsCompletedV2.
template <bool kRecords>
class ReaderCountOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<ReaderBase>> reader = LookupReader(context, 0);
    OP_REQUIRES_OK(context, reader.status());
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<int64_t>() =
        kRecords ? (*reader)->num_records_produced() : (*reader)->num_work_units_completed();
  }
};

class ReaderResetOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<ReaderBase>> reader = LookupReader(context, 0);
    OP_REQUIRES_OK(context, reader.status());
    (*reader)->Reset();
  }
};

Status ScalarStringInput(OpKernelContext* context, int index, const char* what,
                         const std::string** value) {
  const Tensor& t = context->input(index);
  if (t.dtype() != DT_STRING || t.shape().rank() != 0) {
    return errors::InvalidArgument(what, " must be a string scalar, got ", t.dtype(), " ",
                                   t.shape());
  }
  *value = t.data<std::string>();
  return Status::OK();
}

class MatchingFilesOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* context) override {
    const Tensor& patterns = context->input(0);
    OP_REQUIRES(context, patterns.shape().rank() <= 1,
                errors::InvalidArgument("pattern must be a scalar or a vector, got shape ",
                                        patterns.shape()));
    std::vector<std::string> all;
    for (int64_t i = 0; i < patterns.NumElements(); ++i) {
      StatusOr<std::vector<std::string>> matches =
          GetMatchingPaths(patterns.data<std::string>()[i]);
      OP_REQUIRES_OK(context, matches.status());
      all.insert(all.end(), matches->begin(), matches->end());
    }
    std::sort(all.begin(), all.end());  // as TensorFlow: one sorted list of every pattern's
    OP_REQUIRES_OK(context, StringOutput(context, 0, std::move(all), /*scalar=*/false));
  }
};

class ReadFileOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* context) override {
    const std::string* filename;
    OP_REQUIRES_OK(context, ScalarStringInput(context, 0, "filename", &filename));
    StatusOr<std::string> contents = ReadFileToString(*filename);
    OP_REQUIRES_OK(context, contents.status());
    OP_REQUIRES_OK(context, StringOutput(context, 0, {std::move(contents).value()}, true));
  }
};

class WriteFileOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* context) override {
    const std::string *filename, *contents;
    OP_REQUIRES_OK(context, ScalarStringInput(context, 0, "filename", &filename));
    OP_REQUIRES_OK(context, ScalarStringInput(context, 1, "contents", &contents));
    // As TensorFlow, missing directories are created.
    if (size_t slash = filename->rfind('/'); slash != std::string::npos && slash > 0) {
      OP_REQUIRES_OK(context, RecursivelyCreateDir(filename->substr(0, slash)));
    }
    OP_REQUIRES_OK(context, WriteStringToFileAtomic(*filename, *contents));
  }
};

}  // namespace

void RegisterReaderKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("TFRecordReaderV2"), MakeTFRecordReader);
  registry->Register(KernelBuilder("FixedLengthRecordReaderV2"), MakeFixedLengthRecordReader);
  registry->Register(KernelBuilder("TextLineReaderV2"), MakeTextLineReader);
  registry->Register(KernelBuilder("WholeFileReaderV2"), MakeWholeFileReader);
  registry->Register(KernelBuilder("ReaderReadV2"), MakeKernel<ReaderReadOp<false>>);
  registry->Register(KernelBuilder("ReaderReadUpToV2"), MakeKernel<ReaderReadOp<true>>);
  registry->Register(KernelBuilder("ReaderNumRecordsProducedV2"), MakeKernel<ReaderCountOp<true>>);
  registry->Register(KernelBuilder("ReaderNumWorkUnitsCompletedV2"),
                     MakeKernel<ReaderCountOp<false>>);
  registry->Register(KernelBuilder("ReaderResetV2"), MakeKernel<ReaderResetOp>);
  registry->Register(KernelBuilder("MatchingFiles"), MakeKernel<MatchingFilesOp>);
  registry->Register(KernelBuilder("ReadFile"), MakeKernel<ReadFileOp>);
  registry->Register(KernelBuilder("WriteFile"), MakeKernel<WriteFileOp>);
}

}  // namespace weir
