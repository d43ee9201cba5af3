// Tile, BroadcastTo, Pad, PadV2 and MirrorPad: outputs larger than their
// input. Tile and BroadcastTo read the input through a strided view with
// zero strides (tile k of dim d is an extra outer dim of stride 0); the pads
// map each output index of each dim to an input index or to the pad value
// and copy whole runs of a row at a time.
#include <optional>

#include "weir/base/checked_math.h"
#include "weir/framework/array_shape_rules.h"
#include "weir/framework/broadcast_shape.h"
#include "weir/framework/int_tensor_values.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/array_copy.h"
#include "weir/kernels/array_kernels.h"
#include "weir/kernels/shape_util.h"

namespace weir {
namespace {

class TileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& multiples_tensor = context->input(1);
    OP_REQUIRES(context, multiples_tensor.dims() == 1,
                errors::InvalidArgument("Tile: multiples must be a vector but has shape ",
                                        multiples_tensor.shape(), " (input shape ",
                                        input.shape(), ")"));
    StatusOr<std::vector<int64_t>> values = IntTensorValues(multiples_tensor, "Tile: multiples");
    OP_REQUIRES_OK(context, values.status());
    const std::vector<int64_t>& multiples = *values;
    OP_REQUIRES_OK(context, TiledShape(input.shape(), multiples).status().WithContext("Tile"));
    // Each dim times its multiple, checked here: a product that wrapped
    // would size the output smaller than the copy below writes.
    std::vector<int64_t> out_dims(input.dims());
    for (int d = 0; d < input.dims(); ++d) {
      std::optional<int64_t> product = MultiplyWithoutOverflow(input.dim_size(d), multiples[d]);
      OP_REQUIRES(context, product.has_value(),
                  errors::InvalidArgument("Tile: dim ", d, " of input shape ", input.shape(),
                                          " times multiples [", StrJoin(multiples, ","),
                                          "] overflows int64"));
      out_dims[d] = *product;
    }
    StatusOr<TensorShape> out_shape = CheckedShape(out_dims, "Tile");
    OP_REQUIRES_OK(context, out_shape.status());
    // Output dim d is [multiples[d], input dim d] with the copy index
    // ignored: strides 0 and the input's.
    const std::vector<int64_t> strides = DenseStrides(input.shape());
    std::vector<int64_t> dims, view_strides;
    for (int d = 0; d < input.dims(); ++d) {
      dims.insert(dims.end(), {multiples[d], input.dim_size(d)});
      view_strides.insert(view_strides.end(), {0, strides[d]});
    }
    SetOutputToView(context, input, *out_shape, dims, 0, view_strides);
  }
};

class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& shape_tensor = context->input(1);
    OP_REQUIRES(context, shape_tensor.dims() == 1,
                errors::InvalidArgument("BroadcastTo: shape must be a vector but has shape ",
                                        shape_tensor.shape(), " (input shape ", input.shape(),
                                        ")"));
    StatusOr<std::vector<int64_t>> values = IntTensorValues(shape_tensor, "BroadcastTo: shape");
    OP_REQUIRES_OK(context, values.status());
    const std::vector<int64_t>& target = *values;
    StatusOr<TensorShape> out_shape = CheckedShape(target, "BroadcastTo");
    OP_REQUIRES_OK(context, out_shape.status());
    OP_REQUIRES_OK(context,
                   BroadcastToTarget(input.shape(), target).status().WithContext("BroadcastTo"));
    const std::vector<int64_t> strides = DenseStrides(input.shape());
    const int lead = out_shape->rank() - input.dims();
    std::vector<int64_t> view_strides(out_shape->rank(), 0);
    for (int d = 0; d < input.dims(); ++d) {
      if (input.dim_size(d) != 1) view_strides[lead + d] = strides[d];
    }
    SetOutputToView(context, input, *out_shape, target, 0, view_strides);
  }
};

// Pad, PadV2 (with constant_values) and MirrorPad (with the mode attr).
class PadOp : public OpKernel {
 public:
  explicit PadOp(OpKernelConstruction* context) : OpKernel(context) {
    if (type_string() == "MirrorPad") context->SetStatus(context->GetAttr("mode", &mode_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& input = context->input(0);
    const Tensor& paddings_tensor = context->input(1);
    const int rank = input.dims();
    OP_REQUIRES(context,
                paddings_tensor.dims() == 2 && paddings_tensor.dim_size(0) == rank &&
                    paddings_tensor.dim_size(1) == 2,
                errors::InvalidArgument(type_string(), ": paddings must have shape [", rank,
                                        ",2] but has shape ", paddings_tensor.shape(),
                                        " (input shape ", input.shape(), ")"));
    const Tensor* fill = nullptr;
    if (context->num_inputs() == 3) {
      fill = &context->input(2);
      OP_REQUIRES(context, fill->dims() == 0,
                  errors::InvalidArgument(type_string(), ": constant_values must be a scalar "
                                          "but has shape ", fill->shape()));
    }
    StatusOr<std::vector<int64_t>> values = IntTensorElements(paddings_tensor, "paddings");
    OP_REQUIRES_OK(context, values.status().WithContext(type_string()));
    const std::vector<int64_t>& paddings = *values;
    OP_REQUIRES_OK(context,
                   PaddedShape(input.shape(), paddings, mode_).status().WithContext(type_string()));
    if (std::all_of(paddings.begin(), paddings.end(), [](int64_t p) { return p == 0; })) {
      context->set_output(0, input);
      return;
    }
    // before + dim + after, checked here so that a sum past int64 is an
    // error rather than a small wrapped dim.
    std::vector<int64_t> out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      const auto what = [&] {
        return StrCat(type_string(), ": dim ", d, " of input shape ", input.shape(),
                      " padded by [", paddings[2 * d], ", ", paddings[2 * d + 1], "]");
      };
      std::optional<int64_t> sum = AddWithoutOverflow(input.dim_size(d), paddings[2 * d]);
      if (sum) sum = AddWithoutOverflow(*sum, paddings[2 * d + 1]);
      OP_REQUIRES(context, sum.has_value(),
                  errors::InvalidArgument(what(), " overflows int64"));
      out_dims[d] = *sum;
    }
    StatusOr<TensorShape> checked_shape = CheckedShape(out_dims, type_string());
    OP_REQUIRES_OK(context, checked_shape.status());
    const TensorShape& out_shape = *checked_shape;
    // The output first: a huge padding fails here, before the index maps
    // (one entry per output index of each dim) are built.
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, out_shape, &output));
    if (out_shape.num_elements() == 0) return;
    std::vector<std::vector<int64_t>> maps(rank);
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = input.dim_size(d), before = paddings[2 * d];
      maps[d].reserve(out_shape.dim_size(d));
      for (int64_t o = 0; o < out_shape.dim_size(d); ++o) {
        int64_t i = o - before;
        if (mode_.empty()) {
          if (i >= dim) i = -1;
        } else if (i < 0) {
          i = mode_ == "REFLECT" ? -i : -i - 1;
        } else if (i >= dim) {
          i = mode_ == "REFLECT" ? 2 * (dim - 1) - i : 2 * dim - 1 - i;
        }
        maps[d].push_back(i < 0 ? -1 : i);
      }
    }
    CopyWithIndexMaps(context->device()->intra_op_pool(), input, maps, fill, output);
  }

 private:
  std::string mode_;  // empty: constant padding
};

}  // namespace

void RegisterTilePadKernels(KernelRegistry* registry) {
  registry->Register(KernelBuilder("Tile"), MakeKernel<TileOp>);
  registry->Register(KernelBuilder("BroadcastTo"), MakeKernel<BroadcastToOp>);
  for (const char* op : {"Pad", "PadV2", "MirrorPad"}) {
    registry->Register(KernelBuilder(op), MakeKernel<PadOp>);
  }
}

}  // namespace weir
