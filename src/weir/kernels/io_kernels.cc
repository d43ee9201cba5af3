// Kernels of the io family: SaveV2, RestoreV2 and MergeV2Checkpoints over
// the checkpoint format of framework/tensor_bundle.h (file I/O, so
// expensive), and the small string ops of a save graph: ShardedFilename,
// ShardedFilespec and StringJoin.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include "weir/framework/kernel_registry.h"
#include "weir/framework/tensor_bundle.h"
#include "weir/framework/tensor_slice.h"
#include "weir/kernels/all_kernels.h"

namespace weir {
namespace {

// Checks the inputs SaveV2 and RestoreV2 share: a scalar prefix and one name
// and one slice spec per tensor.
Status CheckCommonInputs(std::string_view op, const Tensor& prefix, const Tensor& names,
                         const Tensor& specs, int num_tensors) {
  if (prefix.dims() != 0) {
    return errors::InvalidArgument(op, ": prefix must be a scalar but has shape ",
                                   prefix.shape());
  }
  for (const auto& [input, what] : {std::pair{&names, "tensor_names"},
                                    std::pair{&specs, "shape_and_slices"}}) {
    if (input->dims() != 1 || input->dim_size(0) != num_tensors) {
      return errors::InvalidArgument(op, ": ", what, " must be a vector of ", num_tensors,
                                     " strings (one per tensor) but has shape ",
                                     input->shape());
    }
  }
  return Status::OK();
}

class SaveV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const int num_tensors = context->num_inputs() - 3;
    const Tensor& names = context->input(1);
    const Tensor& specs = context->input(2);
    OP_REQUIRES_OK(context, CheckCommonInputs("SaveV2", context->input(0), names, specs,
                                              num_tensors));
    const std::string& prefix = context->input(0).scalar<std::string>();
    BundleWriter writer(prefix);
    for (int i = 0; i < num_tensors; ++i) {
      const std::string& name = names.data<std::string>()[i];
      const std::string& spec = specs.data<std::string>()[i];
      if (spec.empty()) {
        OP_REQUIRES_OK(context, writer.Add(name, context->input(3 + i)).WithContext("SaveV2"));
        continue;
      }
      // A slice of a partitioned variable: the tensor is that slice.
      StatusOr<ShapeAndSlice> slice = ParseShapeAndSlice(spec);
      OP_REQUIRES_OK(context, slice.status().WithContext(StrCat("SaveV2: tensor '", name, "'")));
      OP_REQUIRES_OK(context,
                     writer.AddSlice(name, *slice, context->input(3 + i)).WithContext("SaveV2"));
    }
    OP_REQUIRES_OK(context, writer.Finish().WithContext("SaveV2"));
  }
  bool IsExpensive() const override { return true; }
};

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtypes", &dtypes_));
  }

  void Compute(OpKernelContext* context) override {
    const int num_tensors = context->num_outputs();
    const Tensor& names = context->input(1);
    const Tensor& specs = context->input(2);
    OP_REQUIRES_OK(context, CheckCommonInputs("RestoreV2", context->input(0), names, specs,
                                              num_tensors));
    const std::string& prefix = context->input(0).scalar<std::string>();
    StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
    OP_REQUIRES_OK(context, reader.status().WithContext("RestoreV2"));
    for (int i = 0; i < num_tensors; ++i) {
      const std::string& name = names.data<std::string>()[i];
      const std::string& spec = specs.data<std::string>()[i];
      const BundleTensorInfo* info = (*reader)->FindTensor(name);
      OP_REQUIRES(context, info != nullptr,
                  errors::NotFound("RestoreV2: tensor '", name, "' is not in checkpoint '",
                                   prefix, "'"));
      // DT_INVALID (a dtype Weir lacks) is left to Lookup, which names it.
      OP_REQUIRES(context, info->dtype == DT_INVALID || info->dtype == dtypes_[i],
                  errors::InvalidArgument("RestoreV2: tensor '", name, "' of checkpoint '",
                                          prefix, "' is ", info->dtype, " ", info->shape,
                                          " but dtypes[", i, "] expects ", dtypes_[i]));
      ShapeAndSlice slice;
      if (!spec.empty()) {
        StatusOr<ShapeAndSlice> parsed = ParseShapeAndSlice(spec);
        OP_REQUIRES_OK(context, parsed.status().WithContext(
                                    StrCat("RestoreV2: tensor '", name, "'")));
        slice = std::move(parsed).value();
        OP_REQUIRES(context, slice.full_shape == info->shape,
                    errors::InvalidArgument("RestoreV2: tensor '", name, "' of checkpoint '",
                                            prefix, "' has shape ", info->shape,
                                            " but its shape_and_slices '", spec,
                                            "' says ", slice.full_shape));
      }
      // A slice reads only the saved pieces that overlap it.
      StatusOr<Tensor> tensor =
          spec.empty() ? (*reader)->Lookup(name) : (*reader)->LookupSlice(name, slice);
      OP_REQUIRES_OK(context, tensor.status().WithContext("RestoreV2"));
      context->set_output(i, std::move(tensor).value());
    }
  }
  bool IsExpensive() const override { return true; }

 private:
  std::vector<DType> dtypes_;
};

// "<basename>-%05d-of-%05d", or with "?????" for the shard (a glob).
std::string ShardName(const std::string& basename, const char* shard, int num_shards) {
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), "-%s-of-%05d", shard, num_shards);
  return basename + suffix;
}

// The inputs of ShardedFilename and ShardedFilespec: scalars, a positive
// number of shards.
Status CheckShardInputs(OpKernelContext* context, std::string_view op) {
  for (int i = 0; i < context->num_inputs(); ++i) {
    if (context->input(i).dims() != 0) {
      return errors::InvalidArgument(op, ": input ", i, " must be a scalar but has shape ",
                                     context->input(i).shape());
    }
  }
  const int32_t num_shards = context->input(context->num_inputs() - 1).scalar<int32_t>();
  if (num_shards < 1) {
    return errors::InvalidArgument(op, ": num_shards is ", num_shards, "; it must be >= 1");
  }
  return Status::OK();
}

class ShardedFilenameOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    OP_REQUIRES_OK(context, CheckShardInputs(context, "ShardedFilename"));
    const int32_t shard = context->input(1).scalar<int32_t>();
    const int32_t num_shards = context->input(2).scalar<int32_t>();
    OP_REQUIRES(context, shard >= 0 && shard < num_shards,
                errors::InvalidArgument("ShardedFilename: shard ", shard, " is not in [0, ",
                                        num_shards, ")"));
    char digits[16];
    std::snprintf(digits, sizeof(digits), "%05d", shard);
    context->set_output(0, Tensor::Scalar<std::string>(ShardName(
                               context->input(0).scalar<std::string>(), digits, num_shards)));
  }
};

class ShardedFilespecOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    OP_REQUIRES_OK(context, CheckShardInputs(context, "ShardedFilespec"));
    context->set_output(
        0, Tensor::Scalar<std::string>(ShardName(context->input(0).scalar<std::string>(), "?????",
                                                 context->input(1).scalar<int32_t>())));
  }
};

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("delete_old_dirs", &delete_old_dirs_));
    if (context->status().ok()) {
      context->SetStatus(context->GetAttr("allow_missing_files", &allow_missing_files_));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& prefixes = context->input(0);
    const Tensor& destination = context->input(1);
    OP_REQUIRES(context, prefixes.dims() == 1,
                errors::InvalidArgument("MergeV2Checkpoints: checkpoint_prefixes must be a "
                                        "vector but has shape ",
                                        prefixes.shape()));
    OP_REQUIRES(context, destination.dims() == 0,
                errors::InvalidArgument("MergeV2Checkpoints: destination_prefix must be a "
                                        "scalar but has shape ",
                                        destination.shape()));
    const std::string& merged_prefix = destination.scalar<std::string>();
    std::vector<std::string> inputs(prefixes.data<std::string>(),
                                    prefixes.data<std::string>() + prefixes.NumElements());
    OP_REQUIRES_OK(context, MergeBundles(inputs, merged_prefix, allow_missing_files_)
                                .WithContext("MergeV2Checkpoints"));
    if (!delete_old_dirs_) return;
    // The inputs' directories (a sharded save's "<prefix>_temp"), each
    // removed only when empty: best effort, as another task's leftovers or
    // a concurrent save may still be there.
    namespace fs = std::filesystem;
    const fs::path merged_dir = fs::path(merged_prefix).parent_path();
    std::set<fs::path> dirs;
    for (const std::string& input : inputs) dirs.insert(fs::path(input).parent_path());
    for (const fs::path& dir : dirs) {
      std::error_code error;
      if (dir.empty() || dir == merged_dir || !fs::is_directory(dir, error)) continue;
      if (fs::is_empty(dir, error) && !error) fs::remove(dir, error);
    }
  }
  bool IsExpensive() const override { return true; }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

class StringJoinOp : public OpKernel {
 public:
  explicit StringJoinOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("separator", &separator_));
  }

  void Compute(OpKernelContext* context) override {
    // The output's shape: that of the non-scalar inputs, which must agree.
    const Tensor* shaped = nullptr;
    for (int i = 0; i < context->num_inputs(); ++i) {
      const Tensor& input = context->input(i);
      if (input.dims() == 0) continue;
      if (shaped == nullptr) {
        shaped = &input;
        continue;
      }
      OP_REQUIRES(context, input.shape() == shaped->shape(),
                  errors::InvalidArgument("StringJoin: the non-scalar inputs must have one "
                                          "shape, but ",
                                          shaped->shape(), " and input ", i, "'s ", input.shape(),
                                          " differ"));
    }
    const TensorShape shape = shaped != nullptr ? shaped->shape() : TensorShape({});
    Tensor out(DT_STRING, shape);
    std::string* joined = out.data<std::string>();
    const int64_t n = out.NumElements();
    for (int i = 0; i < context->num_inputs(); ++i) {
      const Tensor& input = context->input(i);
      const std::string* values = input.data<std::string>();
      const bool scalar = input.dims() == 0;
      for (int64_t k = 0; k < n; ++k) {
        if (i > 0) joined[k] += separator_;
        joined[k] += values[scalar ? 0 : k];
      }
    }
    context->set_output(0, std::move(out));
  }

 private:
  std::string separator_;
};

}  // namespace

void RegisterIoKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("SaveV2"), MakeKernel<SaveV2Op>);
  registry->Register(KernelBuilder("RestoreV2"), MakeKernel<RestoreV2Op>);
  registry->Register(KernelBuilder("MergeV2Checkpoints"), MakeKernel<MergeV2CheckpointsOp>);
  registry->Register(KernelBuilder("ShardedFilename"), MakeKernel<ShardedFilenameOp>);
  registry->Register(KernelBuilder("ShardedFilespec"), MakeKernel<ShardedFilespecOp>);
  registry->Register(KernelBuilder("StringJoin"), MakeKernel<StringJoinOp>);
}

}  // namespace weir
