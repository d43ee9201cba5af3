// ReverseSequence, SpaceToBatchND, BatchToSpaceND, SpaceToDepth,
// DepthToSpace and MatrixBandPart: element-moving ops of any dtype, written
// as strided copies (array_copy.h) so one kernel serves every element type,
// strings included.
//
// SpaceToDepth and DepthToSpace are one strided view of their input each
// (the block offsets are dims of their own); MatrixBandPart copies each
// row's band and leaves the rest zero.
// ReverseSequence copies each batch entry as two blocks: its first len[b]
// steps read backwards, the rest as they are. SpaceToBatchND pads (only
// when a padding is non-zero) and then reads the padded tensor through a
// permuted view; BatchToSpaceND reads the input through the inverse
// permutation and then crops (only when a crop is non-zero).
#include <algorithm>
#include <optional>
#include <type_traits>

#include "weir/base/checked_math.h"
#include "weir/base/threadpool.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/space_batch_shape.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"

namespace weir {
namespace {

class ReverseSequenceOp : public OpKernel {
 public:
  explicit ReverseSequenceOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("seq_dim", &seq_dim_));
    context->SetStatus(context->GetAttr("batch_dim", &batch_dim_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& lengths_tensor = context->input(1);
    const int rank = input.dims();
    OP_REQUIRES(context,
                seq_dim_ != batch_dim_ && seq_dim_ >= 0 && batch_dim_ >= 0 && seq_dim_ < rank &&
                    batch_dim_ < rank,
                errors::InvalidArgument("ReverseSequence: seq_dim ", seq_dim_, " and batch_dim ",
                                        batch_dim_, " must be two different dims of the input ",
                                        input.shape(), " (", input.dtype(), ")"));
    OP_REQUIRES(context, lengths_tensor.dims() == 1,
                errors::InvalidArgument("ReverseSequence: seq_lengths must be a vector, not ",
                                        lengths_tensor.shape()));
    const int64_t batch = input.dim_size(static_cast<int>(batch_dim_));
    const int64_t steps = input.dim_size(static_cast<int>(seq_dim_));
    OP_REQUIRES(
        context, lengths_tensor.dim_size(0) == batch,
        errors::InvalidArgument("ReverseSequence: seq_lengths has ", lengths_tensor.dim_size(0),
                                " entries but dim batch_dim ", batch_dim_, " of the input (shape ",
                                input.shape(), ") is ", batch));
    StatusOr<std::vector<int64_t>> lengths =
        IntTensorValues(lengths_tensor, "ReverseSequence: seq_lengths");
    OP_REQUIRES_OK(context, lengths.status());
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t length = (*lengths)[b];
      OP_REQUIRES(
          context, length >= 0 && length <= steps,
          errors::InvalidArgument("ReverseSequence: seq_lengths[", b, "] = ", length,
                                  " is outside [0, ", steps, "], the size of seq_dim ", seq_dim_,
                                  " (input shape ", input.shape(), ", ", input.dtype(), ")"));
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &output));
    if (input.NumElements() == 0) return;
    const std::vector<int64_t> strides = DenseStrides(input.shape());
    const int64_t seq_stride = strides[seq_dim_], batch_stride = strides[batch_dim_];
    ThreadPool* pool = context->device()->intra_op_pool();
    std::vector<int64_t> dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    dims[batch_dim_] = 1;
    std::vector<int64_t> reversed = strides;
    reversed[seq_dim_] = -seq_stride;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t length = (*lengths)[b], base = b * batch_stride;
      // Steps [0, length) read from length - 1 down to 0.
      dims[seq_dim_] = length;
      CopyStrided(pool, dims, input, base + (length > 0 ? (length - 1) * seq_stride : 0), reversed,
                  output, base, strides);
      // Steps [length, steps) as they are.
      dims[seq_dim_] = steps - length;
      CopyStrided(pool, dims, input, base + length * seq_stride, strides, output,
                  base + length * seq_stride, strides);
    }
  }

 private:
  int64_t seq_dim_ = 0;
  int64_t batch_dim_ = 0;
};

// block_shape (a vector of M) and the [M, 2] paddings or crops (`what`).
Status ReadBlockArgs(OpKernelContext* context, const char* what, std::vector<int64_t>* block,
                     std::vector<int64_t>* pads) {
  const Tensor& block_tensor = context->input(1);
  const Tensor& pads_tensor = context->input(2);
  if (block_tensor.dims() != 1) {
    return errors::InvalidArgument("block_shape must be a vector but has shape ",
                                   block_tensor.shape());
  }
  if (pads_tensor.dims() != 2 || pads_tensor.dim_size(0) != block_tensor.dim_size(0) ||
      pads_tensor.dim_size(1) != 2) {
    return errors::InvalidArgument(what, " must have shape [M, 2] = [", block_tensor.dim_size(0),
                                   ",2] but has shape ", pads_tensor.shape());
  }
  WEIR_ASSIGN_OR_RETURN(*block, IntTensorValues(block_tensor, "block_shape"));
  WEIR_ASSIGN_OR_RETURN(*pads, IntTensorElements(pads_tensor, what));
  return Status::OK();
}

class SpaceToBatchNDOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    std::vector<int64_t> block, paddings;
    const std::string where =
        StrCat("SpaceToBatchND (input shape ", input.shape(), ", ", input.dtype(), ")");
    OP_REQUIRES_OK(context,
                   ReadBlockArgs(context, "paddings", &block, &paddings).WithContext(where));
    const std::span<const int64_t> in_dims = input.shape().dim_sizes();
    StatusOr<std::vector<int64_t>> out_dims = SpaceToBatchDims(in_dims, block, paddings);
    OP_REQUIRES_OK(context, out_dims.status().WithContext(where));
    StatusOr<TensorShape> out_shape = CheckedShape(*out_dims, "SpaceToBatchND");
    OP_REQUIRES_OK(context, out_shape.status());
    const size_t m = block.size();
    if (out_shape->num_elements() == 0) {
      // Nothing to copy; and a huge padding of an empty input must not size
      // the index maps below.
      Tensor* output = nullptr;
      OP_REQUIRES_OK(context, context->allocate_output(0, *out_shape, &output));
      return;
    }

    // The padded input: spatial dim k + 1 grows by paddings[k].
    Tensor padded = input;
    bool any_padding = false;
    for (int64_t p : paddings) any_padding |= p != 0;
    if (any_padding) {
      std::vector<int64_t> padded_dims(in_dims.begin(), in_dims.end());
      for (size_t k = 0; k < m; ++k) padded_dims[k + 1] = (*out_dims)[k + 1] * block[k];
      StatusOr<TensorShape> padded_shape = CheckedShape(padded_dims, "SpaceToBatchND");
      OP_REQUIRES_OK(context, padded_shape.status());
      // Allocated first: a padding too large for memory is an error here,
      // before index maps of its size are built.
      OP_REQUIRES_OK(context, context->allocate_temp(input.dtype(), *padded_shape, &padded));
      std::vector<std::vector<int64_t>> maps(input.dims());
      for (int d = 0; d < input.dims(); ++d) {
        const bool spatial = d >= 1 && d <= static_cast<int>(m);
        const int64_t before = spatial ? paddings[2 * (d - 1)] : 0;
        maps[d].resize(padded_dims[d]);
        for (int64_t o = 0; o < padded_dims[d]; ++o) {
          const int64_t i = o - before;
          maps[d][o] = i >= 0 && i < in_dims[d] ? i : -1;
        }
      }
      CopyWithIndexMaps(context->device()->intra_op_pool(), input, maps, nullptr, &padded);
    }
    // [batch, q1, b1, ..., qM, bM, rest] read as [b1..bM, batch, q1..qM, rest].
    const std::vector<int64_t> strides = DenseStrides(padded.shape());
    std::vector<int64_t> dims, view_strides;
    for (size_t k = 0; k < m; ++k) {
      dims.push_back(block[k]);
      view_strides.push_back(strides[k + 1]);
    }
    dims.push_back(in_dims[0]);
    view_strides.push_back(strides[0]);
    for (size_t k = 0; k < m; ++k) {
      dims.push_back((*out_dims)[k + 1]);
      view_strides.push_back(block[k] * strides[k + 1]);
    }
    for (int d = static_cast<int>(m) + 1; d < input.dims(); ++d) {
      dims.push_back(in_dims[d]);
      view_strides.push_back(strides[d]);
    }
    SetOutputToView(context, padded, *out_shape, dims, 0, view_strides);
  }
};

class BatchToSpaceNDOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    std::vector<int64_t> block, crops;
    const std::string where =
        StrCat("BatchToSpaceND (input shape ", input.shape(), ", ", input.dtype(), ")");
    OP_REQUIRES_OK(context, ReadBlockArgs(context, "crops", &block, &crops).WithContext(where));
    const std::span<const int64_t> in_dims = input.shape().dim_sizes();
    StatusOr<std::vector<int64_t>> out_dims = BatchToSpaceDims(in_dims, block, crops);
    OP_REQUIRES_OK(context, out_dims.status().WithContext(where));
    StatusOr<TensorShape> out_shape = CheckedShape(*out_dims, "BatchToSpaceND");
    OP_REQUIRES_OK(context, out_shape.status());
    const size_t m = block.size();
    const int64_t batch = (*out_dims)[0];

    // The input's batch index is (r1, ..., rM, b) row-major: read it as
    // [batch, s1, b1, ..., sM, bM, rest], the uncropped output.
    const std::vector<int64_t> strides = DenseStrides(input.shape());
    std::vector<int64_t> block_strides(m);
    int64_t stride = batch * strides[0];
    for (size_t k = m; k-- > 0;) {
      block_strides[k] = stride;
      stride *= block[k];
    }
    std::vector<int64_t> dims{batch}, view_strides{strides[0]}, full_dims{batch};
    for (size_t k = 0; k < m; ++k) {
      dims.insert(dims.end(), {in_dims[k + 1], block[k]});
      view_strides.insert(view_strides.end(), {strides[k + 1], block_strides[k]});
      full_dims.push_back(in_dims[k + 1] * block[k]);  // <= the output's dim + crops: checked
    }
    for (int d = static_cast<int>(m) + 1; d < input.dims(); ++d) {
      dims.push_back(in_dims[d]);
      view_strides.push_back(strides[d]);
      full_dims.push_back(in_dims[d]);
    }
    bool any_crop = false;
    for (int64_t c : crops) any_crop |= c != 0;
    if (!any_crop) {
      SetOutputToView(context, input, *out_shape, dims, 0, view_strides);
      return;
    }
    StatusOr<TensorShape> full_shape = CheckedShape(full_dims, "BatchToSpaceND");
    OP_REQUIRES_OK(context, full_shape.status());
    Tensor full;
    OP_REQUIRES_OK(context, context->allocate_temp(input.dtype(), *full_shape, &full));
    ThreadPool* pool = context->device()->intra_op_pool();
    std::vector<int64_t> dense(dims.size());
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1, s = 1; k >= 0; s *= dims[k--]) {
      dense[k] = s;
    }
    CopyStrided(pool, dims, input, 0, view_strides, &full, 0, dense);
    // The crop: a window of `full` starting at the crops' first values.
    const std::vector<int64_t> full_strides = DenseStrides(full.shape());
    int64_t offset = 0;
    for (size_t k = 0; k < m; ++k) offset += crops[2 * k] * full_strides[k + 1];
    SetOutputToView(context, full, *out_shape, *out_dims, offset, full_strides);
  }
};

template <bool kToDepth>
class DepthSpaceOp : public OpKernel {
 public:
  explicit DepthSpaceOp(OpKernelConstruction* context) : OpKernel(context) {
    std::string format;
    context->SetStatus(context->GetAttr("block_size", &block_));
    context->SetStatus(context->GetAttr("data_format", &format));
    nchw_ = format == "NCHW";
    if (format != "NHWC" && format != "NCHW") {
      context->SetStatus(errors::Unimplemented(kToDepth ? "SpaceToDepth" : "DepthToSpace",
                                               ": data_format ", format,
                                               " (quantized int8 images) is not supported"));
    }
  }

  void Compute(OpKernelContext* context) override {
    const char* op = kToDepth ? "SpaceToDepth" : "DepthToSpace";
    const Tensor& input = context->input(0);
    StatusOr<std::vector<int64_t>> out_dims =
        DepthSpaceDims(input.shape().dim_sizes(), block_, nchw_, kToDepth);
    OP_REQUIRES_OK(context, out_dims.status().WithContext(StrCat(
                                op, " (input shape ", input.shape(), ", ", input.dtype(), ")")));
    StatusOr<TensorShape> out_shape = CheckedShape(*out_dims, op);
    OP_REQUIRES_OK(context, out_shape.status());
    const std::vector<int64_t> s = DenseStrides(input.shape());
    const int64_t b = block_;
    std::vector<int64_t> dims, strides;
    if (kToDepth) {
      // out [n, h, w, by, bx, c] (NCHW: [n, by, bx, c, h, w]) of the input
      // [n, h * b + by, w * b + bx, c].
      const std::vector<int64_t>& o = *out_dims;
      if (nchw_) {
        dims = {o[0], b, b, input.dim_size(1), o[2], o[3]};
        strides = {s[0], s[2], s[3], s[1], b * s[2], b * s[3]};
      } else {
        dims = {o[0], o[1], o[2], b, b, input.dim_size(3)};
        strides = {s[0], b * s[1], b * s[2], s[1], s[2], s[3]};
      }
    } else {
      // out [n, h, by, w, bx, c] of the input [n, h, w, (by * b + bx) * c + c'].
      const int64_t c = nchw_ ? (*out_dims)[1] : (*out_dims)[3];
      const int64_t cs = nchw_ ? s[1] : s[3];
      if (nchw_) {
        dims = {input.dim_size(0), c, input.dim_size(2), b, input.dim_size(3), b};
        strides = {s[0], cs, s[2], b * c * cs, s[3], c * cs};
      } else {
        dims = {input.dim_size(0), input.dim_size(1), b, input.dim_size(2), b, c};
        strides = {s[0], s[1], b * c * cs, s[2], c * cs, cs};
      }
    }
    SetOutputToView(context, input, *out_shape, dims, 0, strides);
  }

 private:
  int64_t block_ = 2;
  bool nchw_ = false;
};

class MatrixBandPartOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    OP_REQUIRES(context, input.dims() >= 2,
                errors::InvalidArgument("MatrixBandPart: the input must have rank >= 2 but has "
                                        "shape ",
                                        input.shape()));
    OP_REQUIRES(context, input.dtype() != DT_RESOURCE && input.dtype() != DT_VARIANT,
                errors::InvalidArgument("MatrixBandPart: no kernel for dtype ", input.dtype()));
    int64_t bounds[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& t = context->input(1 + i);
      OP_REQUIRES(context, t.dims() == 0,
                  errors::InvalidArgument("MatrixBandPart: ", i == 0 ? "num_lower" : "num_upper",
                                          " must be a scalar but has shape ", t.shape()));
      StatusOr<std::vector<int64_t>> v = IntTensorValues(t, "MatrixBandPart: bound");
      OP_REQUIRES_OK(context, v.status());
      bounds[i] = (*v)[0];
    }
    const int64_t rows = input.dim_size(input.dims() - 2), cols = input.dim_size(input.dims() - 1);
    // TensorFlow refuses bounds past the matrix; negative ones mean "all".
    OP_REQUIRES(context, bounds[0] <= rows && bounds[1] <= cols,
                errors::InvalidArgument("MatrixBandPart: num_lower ", bounds[0],
                                        " must be <= ", rows, " and num_upper ", bounds[1],
                                        " <= ", cols, " (input shape ", input.shape(), ")"));
    const int64_t lower = bounds[0] < 0 ? rows : bounds[0];
    const int64_t upper = bounds[1] < 0 ? cols : bounds[1];
    Tensor* output = nullptr;
    OP_REQUIRES_OK(context, context->allocate_output(0, input.shape(), &output));
    if (input.NumElements() == 0) return;
    const int64_t matrices = input.NumElements() / (rows * cols);
    DispatchByElementSize(input.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, ResourceHandle> || std::is_same_v<T, Variant>) {
        return;  // refused above
      } else {
        const T* in = ElementsAs<T>(input);
        T* out = ElementsAs<T>(*output);
        context->device()->intra_op_pool()->ParallelFor(
            matrices * rows, cols * static_cast<int64_t>(sizeof(T)) + 1,
            [&](int64_t first, int64_t last) {
              for (int64_t r = first; r < last; ++r) {
                const int64_t i = r % rows;
                // Columns j with i - lower <= j <= i + upper.
                const int64_t begin = std::max<int64_t>(0, i - lower);
                const int64_t end = std::min<int64_t>(cols, i + upper + 1);
                T* row = out + r * cols;
                std::fill(row, row + cols, T{});
                if (begin < end) CopyElements(in + r * cols + begin, end - begin, row + begin);
              }
            });
      }
    });
  }
};

}  // namespace

void RegisterSequenceSpaceKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("ReverseSequence"), MakeKernel<ReverseSequenceOp>);
  registry->Register(KernelBuilder("SpaceToBatchND"), MakeKernel<SpaceToBatchNDOp>);
  registry->Register(KernelBuilder("BatchToSpaceND"), MakeKernel<BatchToSpaceNDOp>);
  registry->Register(KernelBuilder("SpaceToDepth"), MakeKernel<DepthSpaceOp<true>>);
  registry->Register(KernelBuilder("DepthToSpace"), MakeKernel<DepthSpaceOp<false>>);
  registry->Register(KernelBuilder("MatrixBandPart"), MakeKernel<MatrixBandPartOp>);
}

}  // namespace weir
