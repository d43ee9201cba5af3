// The primitive is created for fixed shapes and strides rather than with
// oneDNN's run-time dims: on AMX and AVX-512 BF16 CPUs only fixed shapes
// get the brgemm kernels, and a kernel sees few distinct shapes (the
// blocks of one product are at most two).
#include "weir/kernels/matmul_dnnl.h"

#include <algorithm>
#include <unordered_map>

#include "weir/framework/tensor.h"
#include "weir/kernels/dnnl_util.h"
#include "weir/kernels/openmp_threads.h"

namespace weir {
namespace {

using dnnl::memory;

// Plans kept per kernel; shapes rarely vary, so a full cache is cleared.
constexpr size_t kMaxPlans = 32;

// The logical rows x cols matrix stored row-major with leading dimension
// `ld`, or transposed (stored cols x rows).
memory::desc MatrixDesc(int64_t rows, int64_t cols, bool transposed, int64_t ld, bool is_float) {
  return memory::desc({rows, cols}, is_float ? memory::data_type::f32 : memory::data_type::bf16,
                      transposed ? memory::dims{1, ld} : memory::dims{ld, 1});
}

}  // namespace

struct DnnlMatMul::Plan {
  dnnl::matmul matmul;
  memory::desc a, b, c, scratchpad;
};

DnnlMatMul::DnnlMatMul() = default;
DnnlMatMul::~DnnlMatMul() = default;

StatusOr<std::shared_ptr<const DnnlMatMul::Plan>> DnnlMatMul::GetPlan(const GemmShape& s) {
  const Key key = {s.is_float, s.transpose_a, s.transpose_b, s.m, s.n, s.k, s.lda, s.ldb, s.ldc};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  // Created outside the lock: two threads may both create a plan for a new
  // shape, and one of them is kept.
  auto plan = std::make_shared<Plan>();
  try {
    plan->a = MatrixDesc(s.m, s.k, s.transpose_a, s.lda, s.is_float);
    plan->b = MatrixDesc(s.k, s.n, s.transpose_b, s.ldb, s.is_float);
    plan->c = MatrixDesc(s.m, s.n, false, s.ldc, s.is_float);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // thread-safe executions
    const dnnl::matmul::primitive_desc desc(DnnlCpuEngine(), plan->a, plan->b, plan->c, attr);
    plan->matmul = dnnl::matmul(desc);
    plan->scratchpad = desc.scratchpad_desc();
  } catch (const std::exception& e) {
    return DnnlErrorStatus(e, StrCat(s.is_float ? "float" : "bfloat16", " matmul [", s.m, ",", s.k,
                                     "] x [", s.k, ",", s.n, "] setup"));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (plans_.size() >= kMaxPlans) plans_.clear();
  return plans_.emplace(key, std::move(plan)).first->second;
}

Status DnnlMatMul::Run(const GemmShape& shape, const Eigen::bfloat16* a, const Eigen::bfloat16* b,
                       Eigen::bfloat16* c) {
  GemmShape s = shape;
  s.is_float = false;
  return Execute(s, a, b, c);
}

Status DnnlMatMul::Run(const GemmShape& shape, const float* a, const float* b, float* c) {
  GemmShape s = shape;
  s.is_float = true;
  return Execute(s, a, b, c);
}

Status DnnlMatMul::Execute(const GemmShape& shape, const void* a, const void* b, void* c) {
  const ScopedOpenMpSingleThread single_thread;
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan, GetPlan(shape));
  const size_t scratch_bytes = plan->scratchpad.get_size();
  // Tensor storage is aligned as oneDNN wants its scratchpad.
  Tensor scratch(DT_UINT8, TensorShape({static_cast<int64_t>(std::max<size_t>(scratch_bytes, 1))}));
  try {
    const dnnl::engine& engine = DnnlCpuEngine();
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(plan->a, engine, const_cast<void*>(a))},
        {DNNL_ARG_WEIGHTS, memory(plan->b, engine, const_cast<void*>(b))},
        {DNNL_ARG_DST, memory(plan->c, engine, c)}};
    if (scratch_bytes > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(plan->scratchpad, engine, scratch.raw_data()));
    }
    dnnl::stream stream(engine);
    plan->matmul.execute(stream, args);
    stream.wait();
  } catch (const std::exception& e) {
    return DnnlErrorStatus(e, shape.is_float ? "float matmul" : "bfloat16 matmul");
  }
  return Status::OK();
}

}  // namespace weir
