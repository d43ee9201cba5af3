// Threading. oneDNN's OpenMP is kept to one thread (openmp_threads.h) and
// the batch is cut into one slice per intra-op thread, each slice one
// primitive execution on its own pool thread; filter gradients are summed
// over slices afterwards. The alternative, letting oneDNN's OpenMP team of
// intra-op-count threads run the whole batch, was measured against it on
// the 2-core development machine while other builds kept it loaded (load
// 10-15; best of 15 runs): an OpenMP team of 2 was 1.1-4x slower than one
// thread on every Fashion-MNIST and ResNet shape (its workers spin at
// barriers while the cores are busy), while slicing was never slower than
// one thread and up to 1.9x faster when a core was free (Fashion-MNIST
// conv1 forward: 8.8 ms one thread, 4.7 ms two slices, 16 ms OpenMP).
// Slicing also starts no threads of its own and leaves the pool free for
// other kernels between slices. Scaling on an idle many-core machine is
// still to be measured (bench/). Primitives are created on the calling
// thread with OpenMP at one thread, so oneDNN plans them single-threaded.
//
// The forward and input-gradient passes cut the batch into up to
// kSlicesPerThread slices per intra-op thread, not one: the pool hands
// slices out as threads ask for them, so a thread whose core another
// process holds takes fewer, and the call ends when the work does rather
// than when the slowest thread's half does. With one slice per thread on
// the loaded 2-core machine, a batch-256 convnet call often took as long as
// on one thread (bench/saved_model_bench.py). oneDNN runs these layers as
// fast per image on 16 images as on 128 (5x5 32->64 on 14x14: 133 and 132
// GFLOP/s on one thread; 5x5 1->32 on 28x28 is faster on small slices,
// 108 against 73, its output staying in cache). Filter gradients keep one
// slice per thread: each slice adds a partial gradient to sum.
//
// The filter is converted to the primitive's layout once per call, before
// the slices run, and shared by them.
//
// Batch 1 is one slice: a single image gets no intra-op parallelism here.
//
// bfloat16. Images and filters are bfloat16 and oneDNN accumulates in
// float; filter gradients stay float until the slices' partial sums are
// added, so the result is rounded to bfloat16 once rather than per slice.
#include "weir/kernels/conv_dnnl.h"

#include <Eigen/Core>
#include <algorithm>
#include <type_traits>
#include <unordered_map>

#include "weir/base/threadpool.h"
#include "weir/framework/op_kernel.h"
#include "weir/framework/window_shape.h"
#include "weir/kernels/dnnl_util.h"
#include "weir/kernels/openmp_threads.h"

namespace weir {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Below this many multiply-adds per slice, another slice costs more in
// task hand-off and filter-gradient summing than it saves.
constexpr double kMinMacsPerSlice = 1 << 22;
// Slices per intra-op thread for the forward and input-gradient passes
// (see the top of this file).
constexpr int64_t kSlicesPerThread = 4;
// Plans kept per kernel; shapes rarely vary, so a full cache is cleared.
constexpr size_t kMaxPlans = 32;
// Scratch buffers start on cache-line boundaries.
constexpr size_t kAlign = 64;

using DataType = memory::data_type;

memory::desc ImageDesc(DataType type, int64_t batch, int64_t rows, int64_t cols, int64_t depth) {
  return memory::desc({batch, depth, rows, cols}, type, Tag::nhwc);
}

// The filter of `d` in `groups` groups; `tag` hwio means Weir's layout
// ([rows, cols, in, out], or [rows, cols, in, multiplier] when grouped).
memory::desc FilterDesc(const Window2DDims& d, int64_t groups, DataType type, Tag tag) {
  if (groups == 1) {
    return memory::desc({d.out_depth, d.in_depth, d.rows.window, d.cols.window}, type, tag);
  }
  return memory::desc(
      {groups, d.out_depth / groups, d.in_depth / groups, d.rows.window, d.cols.window}, type,
      tag == Tag::hwio ? Tag::hwigo : tag);
}

size_t RoundUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// A byte buffer from the device's allocator (64-byte aligned).
StatusOr<char*> AllocateBytes(OpKernelContext* context, size_t bytes, Tensor* holder) {
  WEIR_RETURN_IF_ERROR(context->allocate_temp(
      DT_UINT8, TensorShape({static_cast<int64_t>(std::max<size_t>(bytes, 1))}), holder));
  return static_cast<char*>(holder->raw_data());
}

const char* TypeName(DataType type) { return type == DataType::bf16 ? "bfloat16" : "float"; }

}  // namespace

struct DnnlConv2D::Plan {
  dnnl::primitive conv;
  memory::desc a, b, out;  // the execution's argument layouts
  memory::desc bias;       // forward with a bias epilogue only
  int a_arg = 0, b_arg = 0, out_arg = 0;
  memory::desc scratchpad;
  // The filter as the primitive wants it (forward and backward input) or
  // writes it (backward filter), when that is not HWIO, and the reorder
  // between it and HWIO.
  bool reorder_filter = false;
  memory::desc filter_hwio;
  dnnl::primitive reorder;
  memory::desc reorder_scratchpad;

  void Execute(const void* a_data, const void* b_data, void* out_data, char* scratch,
               const void* bias_data = nullptr) const {
    const dnnl::engine& engine = DnnlCpuEngine();
    dnnl::stream stream(engine);
    std::unordered_map<int, memory> args = {{a_arg, memory(a, engine, const_cast<void*>(a_data))},
                                            {b_arg, memory(b, engine, const_cast<void*>(b_data))},
                                            {out_arg, memory(out, engine, out_data)}};
    if (bias_data != nullptr) {
      args.emplace(DNNL_ARG_BIAS, memory(bias, engine, const_cast<void*>(bias_data)));
    }
    if (scratchpad.get_size() > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratchpad, engine, scratch));
    }
    conv.execute(stream, args);
    stream.wait();
  }

  // Converts the filter between HWIO and the primitive's layout.
  void Reorder(const memory::desc& from, const void* from_data, const memory::desc& to,
               void* to_data, char* scratch) const {
    const dnnl::engine& engine = DnnlCpuEngine();
    dnnl::stream stream(engine);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_FROM, memory(from, engine, const_cast<void*>(from_data))},
        {DNNL_ARG_TO, memory(to, engine, to_data)}};
    if (reorder_scratchpad.get_size() > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(reorder_scratchpad, engine, scratch));
    }
    reorder.execute(stream, args);
    stream.wait();
  }

  // The filter's layout inside oneDNN.
  const memory::desc& filter_dnnl() const { return out_arg == DNNL_ARG_DIFF_WEIGHTS ? out : b; }
};

DnnlConv2D::DnnlConv2D() = default;
DnnlConv2D::~DnnlConv2D() = default;

StatusOr<std::shared_ptr<const DnnlConv2D::Plan>> DnnlConv2D::GetPlan(Pass pass,
                                                                      const Window2DDims& d,
                                                                      int64_t batch, int64_t groups,
                                                                      dnnl_data_type_t c_type,
                                                                      bool bias, bool relu) {
  const auto type = static_cast<DataType>(c_type);
  const WindowDim& r = d.rows;
  const WindowDim& c = d.cols;
  // clang-format off
  const Key key = {static_cast<int64_t>(pass), static_cast<int64_t>(type), batch,
                   d.in_depth, d.out_depth,
                   r.input, r.window, r.stride, r.dilation, r.pad_before, r.pad_after,
                   c.input, c.window, c.stride, c.dilation, c.pad_before, c.pad_after,
                   bias, relu, groups};
  // clang-format on
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  // Created outside the lock: two threads may both create a plan for a new
  // shape, and one of them is kept.
  auto plan = std::make_shared<Plan>();
  try {
    const memory::desc src = ImageDesc(type, batch, d.rows.input, d.cols.input, d.in_depth);
    const memory::desc dst = ImageDesc(type, batch, d.rows.output, d.cols.output, d.out_depth);
    const memory::desc any = FilterDesc(d, groups, type, Tag::any);
    // Filter gradients in float (see the top of this file).
    const memory::desc any_gradient = FilterDesc(d, groups, DataType::f32, Tag::any);
    const memory::dims strides = {d.rows.stride, d.cols.stride};
    const memory::dims dilates = {d.rows.dilation - 1, d.cols.dilation - 1};  // 0: none
    const memory::dims pad_before = {d.rows.pad_before, d.cols.pad_before};
    const memory::dims pad_after = {d.rows.pad_after, d.cols.pad_after};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // thread-safe executions
    const auto kind = dnnl::prop_kind::forward_training;
    const auto direct = dnnl::algorithm::convolution_direct;
    const dnnl::convolution_forward::primitive_desc forward(DnnlCpuEngine(), kind, direct, src,
                                                            any, dst, strides, dilates, pad_before,
                                                            pad_after, attr);
    switch (pass) {
      case Pass::kForward: {
        if (!bias && !relu) {
          plan->conv = dnnl::convolution_forward(forward);
          plan->b = forward.weights_desc();
          plan->scratchpad = forward.scratchpad_desc();
        } else {
          // The same convolution with the epilogue; backward passes are
          // planned against the plain forward above, as the epilogue is
          // not part of the convolution's gradient.
          // Its own attr: copies of a primitive_attr share one handle.
          dnnl::primitive_attr fused_attr;
          fused_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
          if (relu) {
            dnnl::post_ops post_ops;
            post_ops.append_eltwise(dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
            fused_attr.set_post_ops(post_ops);
          }
          if (bias) plan->bias = memory::desc({d.out_depth}, type, Tag::a);
          const dnnl::convolution_forward::primitive_desc fused =
              bias ? dnnl::convolution_forward::primitive_desc(
                         DnnlCpuEngine(), kind, direct, src, any, plan->bias, dst, strides,
                         dilates, pad_before, pad_after, fused_attr)
                   : dnnl::convolution_forward::primitive_desc(DnnlCpuEngine(), kind, direct, src,
                                                               any, dst, strides, dilates,
                                                               pad_before, pad_after, fused_attr);
          plan->conv = dnnl::convolution_forward(fused);
          plan->b = fused.weights_desc();
          plan->scratchpad = fused.scratchpad_desc();
        }
        plan->a = src, plan->out = dst;
        plan->a_arg = DNNL_ARG_SRC, plan->b_arg = DNNL_ARG_WEIGHTS, plan->out_arg = DNNL_ARG_DST;
        break;
      }
      case Pass::kBackwardInput: {
        const dnnl::convolution_backward_data::primitive_desc backward(
            DnnlCpuEngine(), direct, src, any, dst, strides, dilates, pad_before, pad_after,
            forward, attr);
        plan->conv = dnnl::convolution_backward_data(backward);
        plan->a = dst, plan->b = backward.weights_desc(), plan->out = src;
        plan->a_arg = DNNL_ARG_DIFF_DST, plan->b_arg = DNNL_ARG_WEIGHTS;
        plan->out_arg = DNNL_ARG_DIFF_SRC;
        plan->scratchpad = backward.scratchpad_desc();
        break;
      }
      case Pass::kBackwardFilter: {
        const dnnl::convolution_backward_weights::primitive_desc backward(
            DnnlCpuEngine(), direct, src, any_gradient, dst, strides, dilates, pad_before,
            pad_after, forward, attr);
        plan->conv = dnnl::convolution_backward_weights(backward);
        plan->a = src, plan->b = dst, plan->out = backward.diff_weights_desc();
        plan->a_arg = DNNL_ARG_SRC, plan->b_arg = DNNL_ARG_DIFF_DST;
        plan->out_arg = DNNL_ARG_DIFF_WEIGHTS;
        plan->scratchpad = backward.scratchpad_desc();
        break;
      }
    }
    plan->filter_hwio =
        FilterDesc(d, groups, pass == Pass::kBackwardFilter ? DataType::f32 : type, Tag::hwio);
    plan->reorder_filter = plan->filter_dnnl() != plan->filter_hwio;
    if (plan->reorder_filter) {
      const bool to_dnnl = pass != Pass::kBackwardFilter;
      const memory::desc& from = to_dnnl ? plan->filter_hwio : plan->filter_dnnl();
      const memory::desc& to = to_dnnl ? plan->filter_dnnl() : plan->filter_hwio;
      const dnnl::reorder::primitive_desc reorder(DnnlCpuEngine(), from, DnnlCpuEngine(), to, attr);
      plan->reorder = dnnl::reorder(reorder);
      plan->reorder_scratchpad = reorder.scratchpad_desc();
    }
  } catch (const std::exception& e) {
    return DnnlErrorStatus(e, StrCat(TypeName(type), " convolution setup"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (plans_.size() >= kMaxPlans) plans_.clear();
  return plans_.emplace(key, std::move(plan)).first->second;
}

template <typename T>
Status DnnlConv2D::Run(OpKernelContext* context, Pass pass, const Window2DDims& d, const T* a,
                       const T* b, T* out, const Epilogue& epilogue) {
  return RunGroups(context, pass, d, 1, a, b, out, epilogue);
}

template <typename T>
Status DnnlConv2D::RunDepthwise(OpKernelContext* context, Pass pass, const Window2DDims& d,
                                const T* a, const T* b, T* out) {
  return RunGroups(context, pass, d, d.in_depth, a, b, out, Epilogue());
}

template <typename T>
Status DnnlConv2D::RunGroups(OpKernelContext* context, Pass pass, const Window2DDims& d,
                             int64_t groups, const T* a, const T* b, T* out,
                             const Epilogue& epilogue) {
  const ScopedOpenMpSingleThread single_thread;
  ThreadPool* pool = context->device()->intra_op_pool();
  const double macs = static_cast<double>(d.batch) * d.rows.output * d.cols.output * d.out_depth *
                      d.rows.window * d.cols.window * (d.in_depth / groups);
  const int64_t per_thread = pass == Pass::kBackwardFilter ? 1 : kSlicesPerThread;
  const int64_t slices =
      std::max<int64_t>(1, std::min<int64_t>({d.batch, pool->NumThreads() * per_thread,
                                              static_cast<int64_t>(macs / kMinMacsPerSlice)}));
  // The first `extra` slices take one image more.
  const int64_t base = d.batch / slices, extra = d.batch % slices;
  constexpr DataType type = DnnlDataType<T>();
  const dnnl_data_type_t c_type = memory::convert_to_c(type);
  std::shared_ptr<const Plan> plans[2];
  const bool bias = epilogue.bias != nullptr;
  WEIR_ASSIGN_OR_RETURN(
      plans[0], GetPlan(pass, d, base + (extra > 0 ? 1 : 0), groups, c_type, bias, epilogue.relu));
  if (extra > 0 && base > 0) {
    WEIR_ASSIGN_OR_RETURN(plans[1], GetPlan(pass, d, base, groups, c_type, bias, epilogue.relu));
  }

  // Scratch: for the forward and input-gradient passes, each plan's
  // filter in the primitive's layout (with its reorder's scratch), shared by
  // its slices; then per slice its plan's scratch (with a filter gradient
  // in oneDNN's layout for the filter pass), plus a float HWIO filter
  // gradient for every slice but a float kernel's first, which writes into
  // `out`.
  const bool shared_filter = pass != Pass::kBackwardFilter;
  auto filter_bytes = [](const Plan& plan) {
    return plan.reorder_filter ? RoundUp(plan.reorder_scratchpad.get_size()) +
                                     RoundUp(plan.filter_dnnl().get_size())
                               : 0;
  };
  // The filter tensor's elements ([rows, cols, in, out / groups]).
  const int64_t filter_size = d.rows.window * d.cols.window * d.in_depth * (d.out_depth / groups);
  const size_t gradient_bytes = RoundUp(filter_size * sizeof(float));
  auto has_gradient = [&](int64_t s) {
    return pass == Pass::kBackwardFilter && (s > 0 || !std::is_same_v<T, float>);
  };
  auto plan_of = [&](int64_t s) { return s < extra || !plans[1] ? plans[0] : plans[1]; };
  auto slice_bytes = [&](int64_t s) {
    const Plan& plan = *plan_of(s);
    return RoundUp(plan.scratchpad.get_size()) + (shared_filter ? 0 : filter_bytes(plan)) +
           (has_gradient(s) ? gradient_bytes : 0);
  };
  size_t filter_offsets[2] = {0, 0};
  size_t shared_bytes = 0;
  if (shared_filter) {
    for (int i = 0; i < 2 && plans[i]; ++i) {
      filter_offsets[i] = shared_bytes;
      shared_bytes += filter_bytes(*plans[i]);
    }
  }
  std::vector<size_t> offsets(slices + 1, shared_bytes);
  for (int64_t s = 0; s < slices; ++s) offsets[s + 1] = offsets[s] + slice_bytes(s);
  Tensor scratch_holder;
  WEIR_ASSIGN_OR_RETURN(char* scratch, AllocateBytes(context, offsets[slices], &scratch_holder));
  auto gradient_of = [&](int64_t s) {
    return has_gradient(s) ? reinterpret_cast<float*>(scratch + offsets[s + 1] - gradient_bytes)
                           : reinterpret_cast<float*>(out);  // float kernels only
  };
  // Where plan i's filter in the primitive's layout goes, after the
  // reorder's scratch at `*reorder_scratch`.
  auto shared_filter_of = [&](int i, char** reorder_scratch) {
    *reorder_scratch = scratch + filter_offsets[i];
    return *reorder_scratch + RoundUp(plans[i]->reorder_scratchpad.get_size());
  };
  // The filter as each plan reads it (forward and input-gradient passes).
  const void* filters[2] = {b, b};
  if (shared_filter) {
    for (int i = 0; i < 2 && plans[i]; ++i) {
      if (!plans[i]->reorder_filter) continue;
      char* reorder_scratch;
      char* converted = shared_filter_of(i, &reorder_scratch);
      try {
        plans[i]->Reorder(plans[i]->filter_hwio, b, plans[i]->filter_dnnl(), converted,
                          reorder_scratch);
      } catch (const std::exception& e) {
        return DnnlErrorStatus(e, StrCat(TypeName(type), " convolution filter reorder"));
      }
      filters[i] = converted;
    }
  }

  const int64_t image_a = pass == Pass::kBackwardInput ? d.rows.output * d.cols.output * d.out_depth
                                                       : d.rows.input * d.cols.input * d.in_depth;
  const int64_t image_b = d.rows.output * d.cols.output * d.out_depth;
  const int64_t image_out = pass == Pass::kForward ? d.rows.output * d.cols.output * d.out_depth
                                                   : d.rows.input * d.cols.input * d.in_depth;
  std::mutex mu;
  Status status;
  auto run_slice = [&](int64_t s) {
    const ScopedOpenMpSingleThread single_thread;
    const Plan& plan = *plan_of(s);
    const int64_t first = s * base + std::min(s, extra);
    char* p = scratch + offsets[s];
    char* conv_scratch = p;
    p += RoundUp(plan.scratchpad.get_size());
    char* reorder_scratch = p;
    char* filter_dnnl = nullptr;
    if (plan.reorder_filter && !shared_filter) {
      p += RoundUp(plan.reorder_scratchpad.get_size());
      filter_dnnl = p;
    }
    try {
      switch (pass) {
        case Pass::kForward:
        case Pass::kBackwardInput: {
          const void* filter = filters[&plan == plans[0].get() ? 0 : 1];
          plan.Execute(a + first * image_a, filter, out + first * image_out, conv_scratch,
                       epilogue.bias);
          break;
        }
        case Pass::kBackwardFilter: {
          float* gradient = gradient_of(s);
          plan.Execute(a + first * image_a, b + first * image_b,
                       plan.reorder_filter ? static_cast<void*>(filter_dnnl) : gradient,
                       conv_scratch);
          if (plan.reorder_filter) {
            plan.Reorder(plan.filter_dnnl(), filter_dnnl, plan.filter_hwio, gradient,
                         reorder_scratch);
          }
          break;
        }
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu);
      status.Update(DnnlErrorStatus(e, StrCat(TypeName(type), " convolution")));
    }
  };
  if (slices == 1) {
    run_slice(0);
  } else {
    // A cost far above Eigen's task size makes every slice its own task.
    pool->ParallelFor(slices, int64_t{1} << 40, [&](int64_t first, int64_t last) {
      for (int64_t s = first; s < last; ++s) run_slice(s);
    });
  }
  WEIR_RETURN_IF_ERROR(status);
  if (pass == Pass::kBackwardFilter) {
    // Sum the slices' gradients in slice order, then round once.
    float* sum = gradient_of(0);
    for (int64_t s = 1; s < slices; ++s) {
      const float* partial = gradient_of(s);
      for (int64_t i = 0; i < filter_size; ++i) sum[i] += partial[i];
    }
    if constexpr (!std::is_same_v<T, float>) {
      for (int64_t i = 0; i < filter_size; ++i) out[i] = T(sum[i]);
    }
  }
  return Status::OK();
}

template Status DnnlConv2D::Run(OpKernelContext*, Pass, const Window2DDims&, const float*,
                                const float*, float*, const Epilogue&);
template Status DnnlConv2D::Run(OpKernelContext*, Pass, const Window2DDims&, const Eigen::bfloat16*,
                                const Eigen::bfloat16*, Eigen::bfloat16*, const Epilogue&);
template Status DnnlConv2D::RunDepthwise(OpKernelContext*, Pass, const Window2DDims&, const float*,
                                         const float*, float*);

}  // namespace weir
