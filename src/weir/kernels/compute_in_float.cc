#include "weir/kernels/compute_in_float.h"

#include <Eigen/Core>
#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/kernels/broadcast.h"
#include "weir/kernels/float16_convert.h"

namespace weir {
namespace {

// F16C / AVX-512 convert 8-16 elements per instruction: about a cycle per
// element with the loads and stores.
constexpr double kConvertCycles = 1.0;

void ToFloat(ThreadPool* pool, DType narrow, const Tensor& in, Tensor* out) {
  ShardOrInline(pool, in.NumElements(), kConvertCycles, [&](int64_t begin, int64_t end) {
    if (narrow == DT_HALF) {
      HalfToFloat(in.data<Eigen::half>() + begin, out->data<float>() + begin, end - begin);
    } else {
      Bfloat16ToFloat(in.data<Eigen::bfloat16>() + begin, out->data<float>() + begin, end - begin);
    }
  });
}

void FromFloat(ThreadPool* pool, DType narrow, const Tensor& in, Tensor* out) {
  ShardOrInline(pool, in.NumElements(), kConvertCycles, [&](int64_t begin, int64_t end) {
    if (narrow == DT_HALF) {
      FloatToHalf(in.data<float>() + begin, out->data<Eigen::half>() + begin, end - begin);
    } else {
      FloatToBfloat16(in.data<float>() + begin, out->data<Eigen::bfloat16>() + begin, end - begin);
    }
  });
}

// The float kernel's message, with the dtype the user's node has.
Status AsNarrowError(const Status& status, DType narrow) {
  std::string message = status.message();
  const std::string name(DTypeName(narrow));
  for (const char* from : {"dtype float", "T=float"}) {
    std::string to = from;
    to.replace(to.size() - 5, 5, name);
    for (size_t at = message.find(from); at != std::string::npos;
         at = message.find(from, at + to.size())) {
      const size_t after = at + std::string_view(from).size();
      // "dtype float" but not "dtype float32"/"dtype float64".
      if (after < message.size() && std::isalnum(static_cast<unsigned char>(message[after]))) {
        continue;
      }
      message.replace(at, std::string_view(from).size(), to);
    }
  }
  return Status(status.code(), std::move(message));
}

class ComputeInFloatKernel : public OpKernel {
 public:
  ComputeInFloatKernel(OpKernelConstruction* context, const KernelRegistry* registry, DType narrow,
                       const std::vector<std::string>& attrs, FloatCompute how)
      : OpKernel(context), narrow_(narrow), how_(how) {
    float_node_ = context->node();
    for (const std::string& attr : attrs) {
      auto it = float_node_.attrs.find(attr);
      if (it != float_node_.attrs.end() && it->second.is_type() && it->second.type() == narrow) {
        it->second = AttrValue(DT_FLOAT);
      }
    }
    StatusOr<std::unique_ptr<OpKernel>> kernel =
        registry->CreateKernel(context->device(), float_node_, context->op_def());
    if (!kernel.ok()) {
      context->SetStatus(AsNarrowError(kernel.status(), narrow));
      return;
    }
    float_kernel_ = std::move(kernel).value();
    // The float kernel's types say which inputs and outputs are converted.
    for (int i = 0; i < num_inputs(); ++i) {
      convert_input_.push_back(input_type(i) == narrow && float_kernel_->input_type(i) == DT_FLOAT);
    }
    for (int i = 0; i < num_outputs(); ++i) {
      convert_output_.push_back(output_type(i) == narrow &&
                                float_kernel_->output_type(i) == DT_FLOAT);
    }
  }

  bool IsExpensive() const override { return float_kernel_->IsExpensive(); }

  void Compute(OpKernelContext* context) override {
    if (how_ != FloatCompute::kWhole && ComputeInChunks(context)) return;
    ThreadPool* pool = context->device()->intra_op_pool();
    std::vector<Tensor> inputs(context->num_inputs());
    for (int i = 0; i < context->num_inputs(); ++i) {
      const Tensor& in = context->input(i);
      if (!convert_input_[i]) {
        inputs[i] = in;
        continue;
      }
      OP_REQUIRES_OK(context, context->allocate_temp(DT_FLOAT, in.shape(), &inputs[i]));
      ToFloat(pool, narrow_, in, &inputs[i]);
    }
    std::vector<Tensor> outputs(context->num_outputs());
    bool dead = false;
    OP_REQUIRES_OK(context, RunFloat(context, &inputs, &outputs, &dead));
    if (dead) {
      context->set_outputs_dead();
      return;
    }
    for (int i = 0; i < context->num_outputs(); ++i) {
      if (!convert_output_[i] || !outputs[i].IsInitialized()) {
        context->set_output(i, std::move(outputs[i]));
        continue;
      }
      Tensor* out = nullptr;
      OP_REQUIRES_OK(context, context->allocate_output(i, outputs[i].shape(), &out));
      FromFloat(pool, narrow_, outputs[i], out);
    }
  }

 private:
  // Elements per chunk: each chunk's float inputs and outputs stay in the
  // core's L2 cache, where converting them costs little next to the
  // memory traffic of whole-tensor float copies (and their page faults).
  static constexpr int64_t kChunk = 8192;

  // Runs the float kernel on `inputs` (moved from); the status in the
  // node's 16-bit terms.
  Status RunFloat(OpKernelContext* context, std::vector<Tensor>* inputs,
                  std::vector<Tensor>* outputs, bool* dead) const {
    const StepContext step{
        .step_id = context->step_id(),
        .rendezvous = context->rendezvous(),
        .cancellation = context->cancellation_manager(),
        .call_frame = context->call_frame(),
        .default_container = context->default_container(),
        .step_resources = context->step_resources(),
    };
    OpKernelContext::Params params;
    params.device = context->device();
    params.kernel = float_kernel_.get();
    params.step = &step;
    params.frame_iter = context->frame_iter();
    params.is_input_dead = context->is_input_dead();
    params.inputs = *inputs;
    params.outputs = *outputs;
    OpKernelContext float_context(&params);
    float_kernel_->Compute(&float_context);
    inputs->clear();  // frees the float copies before the outputs are made
    *dead = float_context.outputs_dead();
    return float_context.status().ok() ? Status::OK()
                                       : AsNarrowError(float_context.status(), narrow_);
  }

  // An op whose inputs all have one shape and are all converted, computed
  // alone per element (kElementwise) or per row of dim 0 (kRows): each
  // chunk of elements or rows runs through the float kernel on its own, the
  // chunks spread over the intra-op pool. The first chunk runs first and
  // its outputs give the outputs' shapes. False (no output set) when that
  // does not apply.
  bool ComputeInChunks(OpKernelContext* context) const {
    const TensorShape shape = context->input(0).shape();
    const int64_t n = shape.num_elements();
    const bool rows = how_ == FloatCompute::kRows;
    if (n <= kChunk || (rows && shape.dims() < 2)) return false;
    for (int i = 0; i < context->num_inputs(); ++i) {
      if (!convert_input_[i] || context->input(i).shape() != shape) return false;
    }
    const int64_t units = rows ? shape.dim_size(0) : n;
    const int64_t unit_size = n / units;
    const int64_t per_chunk = std::max<int64_t>(1, kChunk / unit_size);
    const int64_t chunks = (units + per_chunk - 1) / per_chunk;
    if (chunks < 2) return false;
    auto length = [&](int64_t c) { return std::min(per_chunk, units - c * per_chunk); };
    auto compute = [&](int64_t c, std::vector<Tensor>* outputs) {
      const int64_t begin = c * per_chunk * unit_size, len = length(c);
      TensorShape chunk_shape({len * unit_size});
      if (rows) {
        chunk_shape = shape;
        chunk_shape.set_dim(0, len);
      }
      std::vector<Tensor> inputs;
      for (int i = 0; i < context->num_inputs(); ++i) {
        inputs.emplace_back(DT_FLOAT, chunk_shape);
        const Tensor& in = context->input(i);
        if (narrow_ == DT_HALF) {
          HalfToFloat(in.data<Eigen::half>() + begin, inputs.back().data<float>(), len * unit_size);
        } else {
          Bfloat16ToFloat(in.data<Eigen::bfloat16>() + begin, inputs.back().data<float>(),
                          len * unit_size);
        }
      }
      outputs->assign(context->num_outputs(), Tensor());
      bool dead = false;
      return RunFloat(context, &inputs, outputs, &dead);
    };
    std::vector<Tensor> first;
    Status status = compute(0, &first);
    if (!status.ok()) {
      context->SetStatus(status);
      return true;
    }
    // Elements of output i per unit, and the outputs.
    std::vector<int64_t> out_unit(context->num_outputs());
    std::vector<TensorShape> out_shapes(context->num_outputs());
    for (int i = 0; i < context->num_outputs(); ++i) {
      const Tensor& out = first[i];
      if (!out.IsInitialized()) return false;
      if (rows) {
        if (out.dims() < 1 || out.dim_size(0) != per_chunk) return false;
        out_shapes[i] = out.shape();
        out_shapes[i].set_dim(0, units);
      } else {
        if (out.NumElements() != per_chunk) return false;
        out_shapes[i] = shape;
      }
      out_unit[i] = out.NumElements() / per_chunk;
    }
    std::vector<Tensor*> outs(context->num_outputs());
    for (int i = 0; i < context->num_outputs(); ++i) {
      if (!context->allocate_output(i, out_shapes[i], &outs[i]).ok()) return true;  // status set
    }
    auto store = [&](int64_t c, const std::vector<Tensor>& outputs) {
      for (int i = 0; i < context->num_outputs(); ++i) {
        const Tensor& out = outputs[i];
        const int64_t offset = c * per_chunk * out_unit[i], count = length(c) * out_unit[i];
        if (!out.IsInitialized() || out.NumElements() != count) {
          return errors::Internal(type_string(), ": float kernel gave output ", i, " of shape ",
                                  out.shape(), " for a chunk of ", length(c), " of ", units);
        }
        if (convert_output_[i] && narrow_ == DT_HALF) {
          FloatToHalf(out.data<float>(), outs[i]->data<Eigen::half>() + offset, count);
        } else if (convert_output_[i]) {
          FloatToBfloat16(out.data<float>(), outs[i]->data<Eigen::bfloat16>() + offset, count);
        } else {
          const size_t bytes = DTypeSize(out.dtype());
          std::memcpy(static_cast<char*>(outs[i]->raw_data()) + offset * bytes, out.raw_data(),
                      count * bytes);
        }
      }
      return Status::OK();
    };
    status = store(0, first);
    first.clear();
    std::mutex mu;
    auto run_chunks = [&](int64_t first_chunk, int64_t last_chunk) {
      std::vector<Tensor> outputs;
      for (int64_t c = first_chunk + 1; c < last_chunk + 1; ++c) {
        Status chunk_status = compute(c, &outputs);
        if (chunk_status.ok()) chunk_status = store(c, outputs);
        if (!chunk_status.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          status.Update(chunk_status);
          return;
        }
      }
    };
    // Per chunk: the op's float work plus the conversions, a few cycles an
    // element.
    if (status.ok()) {
      context->device()->intra_op_pool()->ParallelFor(chunks - 1, per_chunk * unit_size * 4,
                                                      run_chunks);
    }
    context->SetStatus(status);
    return true;
  }

  const DType narrow_;
  const FloatCompute how_;
  NodeDef float_node_;
  std::unique_ptr<OpKernel> float_kernel_;
  std::vector<bool> convert_input_;
  std::vector<bool> convert_output_;
};

// A node with the attrs kernels of the families here constrain: `attrs` of
// `dtype`, and the usual companions (index, label, scale and shape types).
NodeDef ProbeNode(const std::string& op, DType dtype, std::initializer_list<const char*> attrs) {
  NodeDef node;
  node.op = op;
  node.attrs["Tidx"] = AttrValue(DT_INT32);
  node.attrs["Tlabels"] = AttrValue(DT_INT64);
  node.attrs["output_type"] = AttrValue(DT_INT64);
  node.attrs["U"] = AttrValue(DT_FLOAT);
  node.attrs["T"] = AttrValue(DT_INT32);  // the shape's type, where T isn't converted
  for (const char* attr : attrs) node.attrs[attr] = AttrValue(dtype);
  return node;
}

}  // namespace

void RegisterComputeInFloat(KernelRegistry* registry, const std::string& op, DType dtype,
                            FloatCompute how, std::initializer_list<const char*> attrs) {
  CHECK(dtype == DT_HALF || dtype == DT_BFLOAT16) << DTypeName(dtype);
  CHECK(registry->HasKernel(kDeviceCpu, ProbeNode(op, DT_FLOAT, attrs)))
      << "no float kernel of " << op << " to compute " << DTypeName(dtype) << " with";
  if (registry->HasKernel(kDeviceCpu, ProbeNode(op, dtype, attrs))) return;
  KernelBuilder builder(op);
  for (const char* attr : attrs) builder.TypeConstraint(attr, dtype);
  std::vector<std::string> names(attrs.begin(), attrs.end());
  registry->Register(builder, [registry, dtype, names, how](OpKernelConstruction* context) {
    return std::make_unique<ComputeInFloatKernel>(context, registry, dtype, names, how);
  });
}

}  // namespace weir
