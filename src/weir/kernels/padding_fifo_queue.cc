#include "weir/kernels/padding_fifo_queue.h"

#include <algorithm>
#include <cstring>

#include "weir/base/str_util.h"
#include "weir/framework/op_kernel.h"
#include "weir/kernels/array_copy.h"

namespace weir {

PaddingFIFOQueue::PaddingFIFOQueue(QueueOptions options)
    : FIFOQueue("PaddingFIFOQueue", std::move(options)) {}

StatusOr<std::shared_ptr<PaddingFIFOQueue>> PaddingFIFOQueue::Create(QueueOptions options) {
  const std::string name = StrCat("PaddingFIFOQueue '", options.name, "'");
  if (options.shapes.size() != options.component_types.size()) {
    return errors::InvalidArgument(name, ": needs a shape for each of its ",
                                   options.component_types.size(), " components, got ",
                                   options.shapes.size());
  }
  WEIR_RETURN_IF_ERROR(CheckQueueShapes(name, options.component_types, options.shapes, true));
  for (size_t i = 0; i < options.shapes.size(); ++i) {
    if (!options.shapes[i].known_rank()) {
      return errors::InvalidArgument(name, ": the shape of component ", i,
                                     " must have a known rank (its dims may be unknown)");
    }
  }
  return std::shared_ptr<PaddingFIFOQueue>(new PaddingFIFOQueue(std::move(options)));
}

StatusOr<QueueInterface::Tuple> PaddingFIFOQueue::MakeBatch(OpKernelContext* context,
                                                            std::vector<Tuple>& elements) const {
  const int64_t n = static_cast<int64_t>(elements.size());
  Tuple batch(component_dtypes().size());
  for (size_t c = 0; c < batch.size(); ++c) {
    const PartialShape& declared = component_shapes()[c];
    // Each dim: the declared one, or the largest among the elements (0 for none).
    std::vector<int64_t> dims(declared.rank());
    for (int d = 0; d < declared.rank(); ++d) {
      dims[d] = std::max<int64_t>(declared.dim(d), 0);
      for (const Tuple& element : elements) dims[d] = std::max(dims[d], element[c].dim_size(d));
    }
    WEIR_ASSIGN_OR_RETURN(TensorShape padded, TensorShape::FromDims(dims));
    TensorShape shape = padded;
    WEIR_RETURN_IF_ERROR(shape.InsertDimWithStatus(0, n));
    const DType dtype = component_dtypes()[c];
    WEIR_RETURN_IF_ERROR(context->allocate_temp(dtype, shape, &batch[c]));
    Tensor& out = batch[c];
    if (dtype != DT_STRING && dtype != DT_RESOURCE && out.TotalBytes() > 0) {
      std::memset(out.raw_data(), 0, out.TotalBytes());
    }
    const std::vector<int64_t> out_strides = DenseStrides(padded);
    for (int64_t k = 0; k < n; ++k) {
      const Tensor& element = elements[k][c];
      if (element.NumElements() == 0) continue;
      if (element.dims() == 0) {
        DispatchByElementSize(dtype, [&]<typename T>() {
          CopyElements(ElementsAs<T>(element), 1, ElementsAs<T>(out) + k);
        });
        continue;
      }
      const std::vector<int64_t> in_strides = DenseStrides(element.shape());
      CopyStrided(context->device()->intra_op_pool(), element.shape().dim_sizes(), element, 0,
                  in_strides, &out, k * padded.num_elements(), out_strides);
    }
  }
  return batch;
}

}  // namespace weir
