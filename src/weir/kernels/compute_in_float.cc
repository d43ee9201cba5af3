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
                       const std::vector<std::string>& attrs, bool elementwise)
      : OpKernel(context), narrow_(narrow), elementwise_(elementwise) {
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
    if (elementwise_ && ComputeInChunks(context)) return;
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

  // An elementwise op whose inputs all have one shape (no broadcasting)
  // and are all converted: its outputs have that shape too, and each range
  // of elements is computed alone, in chunks spread over the intra-op pool.
  // False (nothing done) when that does not apply.
  bool ComputeInChunks(OpKernelContext* context) const {
    const TensorShape shape = context->input(0).shape();
    const int64_t n = shape.num_elements();
    if (n <= kChunk) return false;
    for (int i = 0; i < context->num_inputs(); ++i) {
      if (!convert_input_[i] || context->input(i).shape() != shape) return false;
    }
    std::vector<Tensor*> outs(context->num_outputs());
    for (int i = 0; i < context->num_outputs(); ++i) {
      if (!context->allocate_output(i, shape, &outs[i]).ok()) return true;  // status is set
    }
    std::mutex mu;
    Status first_error;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    auto run_chunks = [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) {
        const int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
        const TensorShape flat({len});
        std::vector<Tensor> inputs;
        for (int i = 0; i < context->num_inputs(); ++i) {
          inputs.emplace_back(DT_FLOAT, flat);
          const Tensor& in = context->input(i);
          if (narrow_ == DT_HALF) {
            HalfToFloat(in.data<Eigen::half>() + begin, inputs.back().data<float>(), len);
          } else {
            Bfloat16ToFloat(in.data<Eigen::bfloat16>() + begin, inputs.back().data<float>(), len);
          }
        }
        std::vector<Tensor> outputs(context->num_outputs());
        bool dead = false;
        Status status = RunFloat(context, &inputs, &outputs, &dead);
        for (int i = 0; status.ok() && i < context->num_outputs(); ++i) {
          const Tensor& out = outputs[i];
          if (!out.IsInitialized() || out.NumElements() != len) {
            status = errors::Internal(type_string(), ": elementwise float kernel gave output ", i,
                                      " of shape ", out.shape(), " for ", len, " elements");
          } else if (convert_output_[i] && narrow_ == DT_HALF) {
            FloatToHalf(out.data<float>(), outs[i]->data<Eigen::half>() + begin, len);
          } else if (convert_output_[i]) {
            FloatToBfloat16(out.data<float>(), outs[i]->data<Eigen::bfloat16>() + begin, len);
          } else {
            const size_t bytes = DTypeSize(out.dtype());
            std::memcpy(static_cast<char*>(outs[i]->raw_data()) + begin * bytes, out.raw_data(),
                        len * bytes);
          }
        }
        if (!status.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          first_error.Update(status);
          return;
        }
      }
    };
    // Per chunk: the op's float work plus the conversions, a few cycles an
    // element.
    context->device()->intra_op_pool()->ParallelFor(chunks, kChunk * 4, run_chunks);
    context->SetStatus(first_error);
    return true;
  }

  const DType narrow_;
  const bool elementwise_;
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
  const bool elementwise = how == FloatCompute::kElementwise;
  registry->Register(builder, [registry, dtype, names, elementwise](OpKernelConstruction* context) {
    return std::make_unique<ComputeInFloatKernel>(context, registry, dtype, names, elementwise);
  });
}

}  // namespace weir
