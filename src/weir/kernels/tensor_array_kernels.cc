// Kernels of the TensorArray*V3 ops (ops/data_flow_ops.cc) on the state of
// kernels/tensor_array.h. The flow inputs carry no data: each op that
// changes an array passes its flow_in on as flow_out, so ops on one array
// run in the order their flow edges give. One kernel per op for every
// dtype: elements are moved, never computed on (a gradient array's adding
// writes are the exception, in tensor_array.cc).
#include <numeric>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/shape_util.h"
#include "weir/kernels/step_resources.h"
#include "weir/kernels/tensor_array.h"

namespace weir {
namespace {

StatusOr<std::shared_ptr<TensorArray>> LookupArray(OpKernelContext* context) {
  return LookupStepResource<TensorArray>(context, 0, kTensorArrayTypeName);
}

// The int32 scalar or vector `input` as int64 indices.
StatusOr<std::vector<int64_t>> Indices(OpKernelContext* context, int input, int rank,
                                       const char* what) {
  const Tensor& t = context->input(input);
  if (t.dims() != rank) {
    return errors::InvalidArgument(what, " must be a ", rank == 0 ? "scalar" : "vector",
                                   ", has shape ", t.shape());
  }
  const int32_t* data = t.data<int32_t>();
  return std::vector<int64_t>(data, data + t.NumElements());
}

Status CheckDType(const TensorArray& array, DType dtype) {
  if (array.dtype() == dtype) return Status::OK();
  return errors::InvalidArgument("TensorArray ", array.name(), " holds ", array.dtype(),
                                 " but the op expects ", dtype);
}

// Copies `pieces` one after the other into `out` (whose size they fill).
// Output 0 of `dims`, which come from stored elements and attrs: checked.
Status AllocateOutput(OpKernelContext* context, const std::vector<int64_t>& dims, Tensor** out) {
  WEIR_ASSIGN_OR_RETURN(TensorShape shape, CheckedShape(dims, context->op_kernel().type_string()));
  return context->allocate_output(0, shape, out);
}

void CopyPieces(const std::vector<Tensor>& pieces, Tensor* out) {
  DispatchByElementSize(out->dtype(), [&]<typename T>() {
    T* dst = ElementsAs<T>(*out);
    for (const Tensor& piece : pieces) {
      CopyElements(ElementsAs<T>(piece), piece.NumElements(), dst);
      dst += piece.NumElements();
    }
  });
}

// Rows [start, start + rows) of `value` as a tensor of `shape`, sharing
// its buffer.
Tensor RowsAs(const Tensor& value, int64_t start, int64_t rows, const TensorShape& shape) {
  Tensor piece;
  CHECK(piece.CopyFrom(value.Slice(start, start + rows), shape));
  return piece;
}

class TensorArrayOp final : public OpKernel {
 public:
  explicit TensorArrayOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &options_.dtype));
    context->SetStatus(context->GetAttr("element_shape", &options_.element_shape));
    context->SetStatus(context->GetAttr("dynamic_size", &options_.dynamic_size));
    context->SetStatus(context->GetAttr("clear_after_read", &options_.clear_after_read));
    context->SetStatus(
        context->GetAttr("identical_element_shapes", &options_.identical_element_shapes));
    context->SetStatus(context->GetAttr("tensor_array_name", &array_name_));
    if (array_name_.empty()) array_name_ = name();
  }
  void Compute(OpKernelContext* context) override {
    StatusOr<std::vector<int64_t>> size = Indices(context, 0, 0, "size");
    OP_REQUIRES_OK(context, size.status());
    OP_REQUIRES(context, (*size)[0] >= 0,
                errors::InvalidArgument("size must be >= 0, is ", (*size)[0]));
    std::string name = UniqueStepResourceName(array_name_);
    auto array = std::make_shared<TensorArray>(name, (*size)[0], options_);
    OP_REQUIRES_OK(context,
                   CreateStepResource<TensorArray>(context, kTensorArrayTypeName, name, array, 0));
    Tensor* flow;
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape(), &flow));
    flow->scalar<float>() = 0.0f;
  }

 private:
  TensorArray::Options options_;
  std::string array_name_;
};

class TensorArrayWriteOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    StatusOr<std::vector<int64_t>> index = Indices(context, 1, 0, "index");
    OP_REQUIRES_OK(context, index.status());
    OP_REQUIRES_OK(context, (*array)->Write(context, *index, {context->input(2)}));
    context->set_output(0, context->input(3));
  }
};

class TensorArrayReadOp final : public OpKernel {
 public:
  explicit TensorArrayReadOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    OP_REQUIRES_OK(context, CheckDType(**array, dtype_));
    StatusOr<std::vector<int64_t>> index = Indices(context, 1, 0, "index");
    OP_REQUIRES_OK(context, index.status());
    std::vector<Tensor> values;
    OP_REQUIRES_OK(context, (*array)->Read(context, *index, &values));
    context->set_output(0, std::move(values[0]));
  }

 private:
  DType dtype_ = DT_FLOAT;
};

class TensorArrayGatherOp final : public OpKernel {
 public:
  explicit TensorArrayGatherOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
    context->SetStatus(context->GetAttr("element_shape", &element_shape_));
  }
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    TensorArray& ta = **array;
    OP_REQUIRES_OK(context, CheckDType(ta, dtype_));
    StatusOr<std::vector<int64_t>> indices = Indices(context, 1, 1, "indices");
    OP_REQUIRES_OK(context, indices.status());
    std::vector<int64_t> dims = {static_cast<int64_t>(indices->size())};
    if (indices->empty()) {
      // No element to take the shape from: the declared one must be full.
      StatusOr<PartialShape> declared = ta.ElementShape();
      OP_REQUIRES_OK(context, declared.status());
      StatusOr<PartialShape> shape = declared->Merge(element_shape_);
      OP_REQUIRES(context, shape.ok() && shape->IsFullyDefined(),
                  errors::InvalidArgument("TensorArray ", ta.name(),
                                          ": gathering no elements needs a fully defined "
                                          "element shape, but it is ",
                                          *declared, " (the op says ", element_shape_, ")"));
      dims.insert(dims.end(), shape->dim_sizes().begin(), shape->dim_sizes().end());
      Tensor* out;
      OP_REQUIRES_OK(context, AllocateOutput(context, dims, &out));
      return;
    }
    std::vector<Tensor> values;
    OP_REQUIRES_OK(context, ta.Read(context, *indices, &values));
    const TensorShape& shape = values[0].shape();
    OP_REQUIRES(context, element_shape_.IsCompatibleWith(shape),
                errors::InvalidArgument("TensorArray ", ta.name(), ": the op's element shape ",
                                        element_shape_, " does not fit index ", (*indices)[0],
                                        ", of shape ", shape));
    for (size_t i = 1; i < values.size(); ++i) {
      OP_REQUIRES(
          context, values[i].shape() == shape,
          errors::InvalidArgument("TensorArray ", ta.name(), " has inconsistent shapes: index ",
                                  (*indices)[0], " has shape ", shape, " but index ", (*indices)[i],
                                  " has shape ", values[i].shape()));
    }
    dims.insert(dims.end(), shape.dim_sizes().begin(), shape.dim_sizes().end());
    Tensor* out;
    OP_REQUIRES_OK(context, AllocateOutput(context, dims, &out));
    CopyPieces(values, out);
  }

 private:
  DType dtype_ = DT_FLOAT;
  PartialShape element_shape_;
};

class TensorArrayScatterOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    TensorArray& ta = **array;
    StatusOr<std::vector<int64_t>> indices = Indices(context, 1, 1, "indices");
    OP_REQUIRES_OK(context, indices.status());
    const Tensor& value = context->input(2);
    OP_REQUIRES(context,
                value.dims() >= 1 && value.dim_size(0) == static_cast<int64_t>(indices->size()),
                errors::InvalidArgument("TensorArray ", ta.name(), ": scattering ", indices->size(),
                                        " indices needs as many rows, but the "
                                        "value has shape ",
                                        value.shape()));
    TensorShape element_shape = value.shape();
    element_shape.RemoveDim(0);
    std::vector<Tensor> rows;
    rows.reserve(indices->size());
    for (size_t i = 0; i < indices->size(); ++i) {
      rows.push_back(RowsAs(value, static_cast<int64_t>(i), 1, element_shape));
    }
    OP_REQUIRES_OK(context, ta.Write(context, *indices, std::move(rows)));
    context->set_output(0, context->input(3));
  }
};

class TensorArrayConcatOp final : public OpKernel {
 public:
  explicit TensorArrayConcatOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("dtype", &dtype_));
    context->SetStatus(context->GetAttr("element_shape_except0", &except0_));
  }
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    TensorArray& ta = **array;
    OP_REQUIRES_OK(context, CheckDType(ta, dtype_));
    StatusOr<int64_t> size = ta.Size();
    OP_REQUIRES_OK(context, size.status());
    // The size may come from input unwritten (2^31 - 1): no index list that long.
    OP_REQUIRES(context, *size <= TensorArray::kMaxStoredElements,
                errors::ResourceExhausted("TensorArray ", ta.name(), ": concatenating its ", *size,
                                          " elements is past the most an array holds (",
                                          TensorArray::kMaxStoredElements, ")"));
    std::vector<int64_t> indices(*size);
    std::iota(indices.begin(), indices.end(), int64_t{0});
    std::vector<Tensor> values;
    OP_REQUIRES_OK(context, ta.Read(context, indices, &values));
    Tensor* lengths;
    OP_REQUIRES_OK(context, context->allocate_output(1, TensorShape({*size}), &lengths));
    if (values.empty()) {
      OP_REQUIRES(context, except0_.IsFullyDefined(),
                  errors::InvalidArgument("TensorArray ", ta.name(),
                                          ": concatenating no elements needs a fully defined "
                                          "element_shape_except0, but it is ",
                                          except0_));
      std::vector<int64_t> dims = {0};
      dims.insert(dims.end(), except0_.dim_sizes().begin(), except0_.dim_sizes().end());
      Tensor* out;
      OP_REQUIRES_OK(context, AllocateOutput(context, dims, &out));
      return;
    }
    std::vector<int64_t> rest;
    int64_t rows = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      const TensorShape& shape = values[i].shape();
      OP_REQUIRES(context, shape.rank() >= 1,
                  errors::InvalidArgument("TensorArray ", ta.name(),
                                          ": concatenating needs "
                                          "elements of rank >= 1, but index ",
                                          i, " is a scalar"));
      std::vector<int64_t> dims(shape.dim_sizes().begin() + 1, shape.dim_sizes().end());
      if (i == 0) {
        rest = dims;
        OP_REQUIRES(
            context, except0_.IsCompatibleWith(PartialShape(rest)),
            errors::InvalidArgument("TensorArray ", ta.name(), ": index 0 has shape ", shape,
                                    ", which does not fit the op's "
                                    "element_shape_except0 ",
                                    except0_));
      }
      OP_REQUIRES(context, dims == rest,
                  errors::InvalidArgument("TensorArray ", ta.name(),
                                          " has inconsistent "
                                          "shapes: index 0 has shape ",
                                          values[0].shape(), " but index ", i, " has shape ", shape,
                                          " (they may differ in dim 0 only)"));
      lengths->data<int64_t>()[i] = shape.dim_size(0);
      rows += shape.dim_size(0);  // fits: the rows are in memory
    }
    std::vector<int64_t> dims = {rows};
    dims.insert(dims.end(), rest.begin(), rest.end());
    Tensor* out;
    OP_REQUIRES_OK(context, AllocateOutput(context, dims, &out));
    CopyPieces(values, out);
  }

 private:
  DType dtype_ = DT_FLOAT;
  PartialShape except0_;
};

class TensorArraySplitOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    TensorArray& ta = **array;
    const Tensor& value = context->input(1);
    const Tensor& lengths = context->input(2);
    OP_REQUIRES(context, value.dims() >= 1,
                errors::InvalidArgument("TensorArray ", ta.name(),
                                        ": the value to split must "
                                        "have rank >= 1, has shape ",
                                        value.shape()));
    OP_REQUIRES(context, lengths.dims() == 1,
                errors::InvalidArgument("lengths must be a vector, has shape ", lengths.shape()));
    const int64_t* length = lengths.data<int64_t>();
    const int64_t pieces = lengths.NumElements();
    int64_t total = 0;
    for (int64_t i = 0; i < pieces; ++i) {
      OP_REQUIRES(
          context, length[i] >= 0 && length[i] <= value.dim_size(0) - total,
          errors::InvalidArgument("TensorArray ", ta.name(), ": lengths ", lengths.DebugString(),
                                  " do not split the value's ", value.dim_size(0), " rows"));
      total += length[i];
    }
    OP_REQUIRES(context, total == value.dim_size(0),
                errors::InvalidArgument("TensorArray ", ta.name(), ": lengths sum to ", total,
                                        " but the value has ", value.dim_size(0), " rows"));
    StatusOr<int64_t> size = ta.Size();
    OP_REQUIRES_OK(context, size.status());
    StatusOr<bool> dynamic = ta.DynamicSize();
    OP_REQUIRES_OK(context, dynamic.status());
    OP_REQUIRES(context, *size == pieces || (*dynamic && *size < pieces),
                errors::InvalidArgument("TensorArray ", ta.name(), ": splitting into ", pieces,
                                        " pieces needs an array of that size, but its size is ",
                                        *size, *dynamic ? "" : " and it cannot grow"));
    std::vector<int64_t> indices(pieces);
    std::iota(indices.begin(), indices.end(), int64_t{0});
    std::vector<Tensor> values;
    values.reserve(pieces);
    TensorShape shape = value.shape();
    for (int64_t i = 0, start = 0; i < pieces; start += length[i], ++i) {
      shape.set_dim(0, length[i]);
      values.push_back(RowsAs(value, start, length[i], shape));
    }
    OP_REQUIRES_OK(context, ta.Write(context, indices, std::move(values)));
    context->set_output(0, context->input(3));
  }
};

class TensorArraySizeOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    StatusOr<int64_t> size = (*array)->Size();
    OP_REQUIRES_OK(context, size.status());
    // Sizes come from int32 sizes and indices, so they fit.
    Tensor* out;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = static_cast<int32_t>(*size);
  }
};

class TensorArrayCloseOp final : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    (*array)->Close();
  }
};

// The gradient array of input 0 for `source`: one per (array, source) in
// the step, made by the first GradV3 to run (a gradient loop runs one per
// iteration).
class TensorArrayGradOp final : public OpKernel {
 public:
  explicit TensorArrayGradOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("source", &source_));
  }
  void Compute(OpKernelContext* context) override {
    StatusOr<std::shared_ptr<TensorArray>> array = LookupArray(context);
    OP_REQUIRES_OK(context, array.status());
    StatusOr<ResourceMgr*> resources = StepResources(context);
    OP_REQUIRES_OK(context, resources.status());
    const std::string name = StrCat((*array)->name(), "@", source_);
    StatusOr<std::shared_ptr<TensorArray>> gradient =
        (*resources)->LookupOrCreate<TensorArray>((*resources)->default_container(), name, [&]() {
          return (*array)->MakeGradient(name);
        });
    OP_REQUIRES_OK(context, gradient.status());
    OP_REQUIRES_OK(context,
                   SetStepHandleOutput(context, 0, **resources, name, kTensorArrayTypeName));
    context->set_output(1, context->input(1));
  }

 private:
  std::string source_;
};

}  // namespace

void RegisterTensorArrayKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("TensorArrayV3"), MakeKernel<TensorArrayOp>);
  registry->Register(KernelBuilder("TensorArrayWriteV3"), MakeKernel<TensorArrayWriteOp>);
  registry->Register(KernelBuilder("TensorArrayReadV3"), MakeKernel<TensorArrayReadOp>);
  registry->Register(KernelBuilder("TensorArrayGatherV3"), MakeKernel<TensorArrayGatherOp>);
  registry->Register(KernelBuilder("TensorArrayScatterV3"), MakeKernel<TensorArrayScatterOp>);
  registry->Register(KernelBuilder("TensorArrayConcatV3"), MakeKernel<TensorArrayConcatOp>);
  registry->Register(KernelBuilder("TensorArraySplitV3"), MakeKernel<TensorArraySplitOp>);
  registry->Register(KernelBuilder("TensorArraySizeV3"), MakeKernel<TensorArraySizeOp>);
  registry->Register(KernelBuilder("TensorArrayCloseV3"), MakeKernel<TensorArrayCloseOp>);
  registry->Register(KernelBuilder("TensorArrayGradV3"), MakeKernel<TensorArrayGradOp>);
}

}  // namespace weir
