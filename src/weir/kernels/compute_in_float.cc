#include "weir/kernels/compute_in_float.h"

#include <cctype>
#include <memory>
#include <vector>

#include <Eigen/Core>

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
      Bfloat16ToFloat(in.data<Eigen::bfloat16>() + begin, out->data<float>() + begin,
                      end - begin);
    }
  });
}

void FromFloat(ThreadPool* pool, DType narrow, const Tensor& in, Tensor* out) {
  ShardOrInline(pool, in.NumElements(), kConvertCycles, [&](int64_t begin, int64_t end) {
    if (narrow == DT_HALF) {
      FloatToHalf(in.data<float>() + begin, out->data<Eigen::half>() + begin, end - begin);
    } else {
      FloatToBfloat16(in.data<float>() + begin, out->data<Eigen::bfloat16>() + begin,
                      end - begin);
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
  ComputeInFloatKernel(OpKernelConstruction* context, const KernelRegistry* registry,
                       DType narrow, const std::vector<std::string>& attrs)
      : OpKernel(context), narrow_(narrow) {
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
    params.inputs = inputs;
    params.outputs = outputs;
    OpKernelContext float_context(&params);
    float_kernel_->Compute(&float_context);
    inputs.clear();  // frees the float copies before the outputs are made
    OP_REQUIRES_OK(context, float_context.status().ok()
                                ? Status::OK()
                                : AsNarrowError(float_context.status(), narrow_));
    if (float_context.outputs_dead()) {
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
  const DType narrow_;
  NodeDef float_node_;
  std::unique_ptr<OpKernel> float_kernel_;
  std::vector<bool> convert_input_;
  std::vector<bool> convert_output_;
};

// A node with the attrs kernels of the families here constrain: `attrs` of
// `dtype`, and the usual companions (index, label and scale types).
NodeDef ProbeNode(const std::string& op, DType dtype, std::initializer_list<const char*> attrs) {
  NodeDef node;
  node.op = op;
  node.attrs["Tidx"] = AttrValue(DT_INT32);
  node.attrs["Tlabels"] = AttrValue(DT_INT64);
  node.attrs["output_type"] = AttrValue(DT_INT64);
  node.attrs["U"] = AttrValue(DT_FLOAT);
  for (const char* attr : attrs) node.attrs[attr] = AttrValue(dtype);
  return node;
}

}  // namespace

void RegisterComputeInFloat(KernelRegistry* registry, const std::string& op, DType dtype,
                            std::initializer_list<const char*> attrs) {
  CHECK(dtype == DT_HALF || dtype == DT_BFLOAT16) << DTypeName(dtype);
  CHECK(registry->HasKernel(kDeviceCpu, ProbeNode(op, DT_FLOAT, attrs)))
      << "no float kernel of " << op << " to compute " << DTypeName(dtype) << " with";
  if (registry->HasKernel(kDeviceCpu, ProbeNode(op, dtype, attrs))) return;
  KernelBuilder builder(op);
  for (const char* attr : attrs) builder.TypeConstraint(attr, dtype);
  std::vector<std::string> names(attrs.begin(), attrs.end());
  registry->Register(builder, [registry, dtype, names](OpKernelConstruction* context) {
    return std::make_unique<ComputeInFloatKernel>(context, registry, dtype, names);
  });
}

}  // namespace weir
