#include "weir/framework/op_kernel.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "weir/framework/op_def.h"

namespace weir {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class FakeDevice : public Device {
 public:
  FakeDevice() : Device("/job:localhost/replica:0/task:0/device:CPU:0", kDeviceCpu) {}
  Allocator* allocator() override { return &allocator_; }
  ThreadPool* intra_op_pool() override { return nullptr; }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const override { return nullptr; }
  ResourceMgr* resource_manager() override { return nullptr; }
  CpuAllocator& cpu_allocator() { return allocator_; }

 private:
  CpuAllocator allocator_{"fake_cpu"};
};

class NoopKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

class NeverSyncKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext*, DoneCallback done) override { done(); }
};

// A kernel with inputs (float, float, string) and outputs (float, int32,
// string), and an OpKernelContext over hand-built Params.
class OpKernelContextTest : public ::testing::Test {
 protected:
  OpKernelContextTest() {
    node_.name = "n";
    node_.op = "UnitTestContextOp";
    OpKernelConstruction construction(&device_, &node_, &op_, {DT_FLOAT, DT_FLOAT, DT_STRING},
                                      {DT_FLOAT, DT_INT32, DT_STRING});
    kernel_ = std::make_unique<NoopKernel>(&construction);
    inputs_ = {Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}), Tensor::Scalar<float>(9),
               Tensor::Scalar<std::string>("s")};
    outputs_.resize(3);
    step_.step_id = 77;
    params_.device = &device_;
    params_.kernel = kernel_.get();
    params_.step = &step_;
    params_.frame_iter = {3, 4};
    params_.inputs = inputs_;
    params_.outputs = outputs_;
  }

  FakeDevice device_;
  NodeDef node_;
  OpDef op_;
  std::unique_ptr<OpKernel> kernel_;
  StepContext step_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  OpKernelContext::Params params_;
};

TEST_F(OpKernelContextTest, Accessors) {
  OpKernelContext ctx(&params_);
  EXPECT_EQ(ctx.device(), &device_);
  EXPECT_EQ(ctx.allocator(), &device_.cpu_allocator());
  EXPECT_EQ(&ctx.op_kernel(), kernel_.get());
  EXPECT_EQ(ctx.step_id(), 77);
  EXPECT_EQ(ctx.frame_iter().frame_id, 3u);
  EXPECT_EQ(ctx.frame_iter().iter_id, 4);
  EXPECT_FALSE(ctx.is_input_dead());
  EXPECT_EQ(ctx.num_inputs(), 3);
  EXPECT_EQ(ctx.num_outputs(), 3);
  EXPECT_EQ(ctx.input(1).scalar<float>(), 9);
  EXPECT_EQ(ctx.input_dtype(2), DT_STRING);
  EXPECT_EQ(ctx.expected_output_dtype(1), DT_INT32);
  EXPECT_TRUE(ctx.status().ok());
  EXPECT_FALSE(ctx.outputs_dead());
  ctx.set_outputs_dead();
  EXPECT_TRUE(ctx.outputs_dead());
  EXPECT_EQ(kernel_->name(), "n");
  EXPECT_FALSE(kernel_->IsExpensive());
  EXPECT_EQ(kernel_->AsAsync(), nullptr);
}

TEST_F(OpKernelContextTest, AllocateOutput) {
  OpKernelContext ctx(&params_);
  Tensor* out = nullptr;
  ASSERT_TRUE(ctx.allocate_output(1, TensorShape({2, 5}), &out).ok());
  EXPECT_EQ(out, &outputs_[1]);  // written into the executor's slot
  EXPECT_EQ(out->dtype(), DT_INT32);  // the kernel's declared output dtype
  EXPECT_EQ(out->shape(), TensorShape({2, 5}));
  EXPECT_TRUE(out->RefCountIsOne());
  EXPECT_EQ(device_.cpu_allocator().GetStats().bytes_in_use, 40);  // from the device
  EXPECT_EQ(ctx.bytes_allocated(), 0);  // not tracked unless asked
  EXPECT_TRUE(ctx.status().ok());
}

TEST_F(OpKernelContextTest, TrackedAllocations) {
  params_.track_allocations = true;
  OpKernelContext ctx(&params_);
  Tensor* out;
  ASSERT_TRUE(ctx.allocate_output(0, TensorShape({3}), &out).ok());
  Tensor temp;
  ASSERT_TRUE(ctx.allocate_temp(DT_DOUBLE, TensorShape({4}), &temp).ok());
  EXPECT_EQ(temp.dtype(), DT_DOUBLE);
  EXPECT_EQ(temp.NumElements(), 4);
  EXPECT_EQ(ctx.bytes_allocated(), 12 + 32);
}

TEST_F(OpKernelContextTest, AllocationFailureIsAStatusNamingTheNode) {
  OpKernelContext ctx(&params_);
  std::vector<int64_t> dims = {int64_t{1} << 61};
  StatusOr<TensorShape> huge = TensorShape::FromDims(dims);
  ASSERT_TRUE(huge.ok());
  Tensor* out = nullptr;
  Status s = ctx.allocate_output(0, *huge, &out);
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_TRUE(Contains(s.message(), "output 0 of node 'n' (UnitTestContextOp)")) << s;
  EXPECT_EQ(ctx.status(), s);  // also the kernel's status
  EXPECT_EQ(out, nullptr);
  EXPECT_FALSE(outputs_[0].IsInitialized());

  Tensor temp;
  s = ctx.allocate_temp(DT_FLOAT, *huge, &temp);
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_TRUE(Contains(s.message(), "temporary of node 'n'")) << s;
  EXPECT_TRUE(Contains(ctx.status().message(), "output 0")) << ctx.status();  // first kept
}

TEST_F(OpKernelContextTest, ForwardInputWhenRefCountIsOne) {
  OpKernelContext ctx(&params_);
  const void* input_data = inputs_[0].raw_data();
  ASSERT_TRUE(inputs_[0].RefCountIsOne());
  Tensor* out = ctx.forward_input_to_output(0, 0, TensorShape({2, 3}));
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out, &outputs_[0]);
  EXPECT_EQ(out->raw_data(), input_data);  // the same memory, reused in place
  EXPECT_EQ(out->shape(), TensorShape({2, 3}));
  EXPECT_EQ(out->flat<float>()[5], 6);
  EXPECT_TRUE(out->RefCountIsOne());      // the input gave up its reference
  EXPECT_FALSE(inputs_[0].IsInitialized());
}

TEST_F(OpKernelContextTest, NoForwardingWhenTheBufferIsShared) {
  OpKernelContext ctx(&params_);
  Tensor other_holder = inputs_[0];  // e.g. another consumer, or a fetch
  EXPECT_EQ(ctx.forward_input_to_output(0, 0, TensorShape({6})), nullptr);
  EXPECT_TRUE(inputs_[0].IsInitialized());  // untouched
  EXPECT_FALSE(outputs_[0].IsInitialized());
  other_holder = Tensor();
  EXPECT_NE(ctx.forward_input_to_output(0, 0, TensorShape({6})), nullptr);
}

TEST_F(OpKernelContextTest, NoForwardingWhenDTypeOrSizeDiffers) {
  OpKernelContext ctx(&params_);
  EXPECT_EQ(ctx.forward_input_to_output(0, 1, TensorShape({6})), nullptr);  // float -> int32
  EXPECT_EQ(ctx.forward_input_to_output(0, 0, TensorShape({5})), nullptr);  // 6 -> 5 elements
  EXPECT_EQ(ctx.forward_input_to_output(2, 2, TensorShape({})), nullptr);   // strings never
  EXPECT_TRUE(inputs_[0].IsInitialized());
  EXPECT_TRUE(inputs_[2].IsInitialized());
  EXPECT_FALSE(outputs_[0].IsInitialized());
  EXPECT_FALSE(outputs_[2].IsInitialized());
  EXPECT_TRUE(ctx.status().ok());  // declining to forward is not an error
}

TEST_F(OpKernelContextTest, SetOutputSharesTheValue) {
  OpKernelContext ctx(&params_);
  ctx.set_output(2, inputs_[2]);
  EXPECT_TRUE(outputs_[2].SharesBufferWith(inputs_[2]));
  EXPECT_EQ(ctx.mutable_output(2), &outputs_[2]);
  EXPECT_EQ(ctx.mutable_output(2)->scalar<std::string>(), "s");
}

TEST_F(OpKernelContextTest, SetStatusKeepsTheFirstError) {
  OpKernelContext ctx(&params_);
  ctx.SetStatus(Status::OK());
  EXPECT_TRUE(ctx.status().ok());
  ctx.SetStatus(errors::InvalidArgument("first"));
  ctx.SetStatus(errors::Internal("second"));
  ctx.SetStatus(Status::OK());
  EXPECT_EQ(ctx.status(), errors::InvalidArgument("first"));
}

void RequireEven(OpKernelContext* ctx, int value, bool* reached_end) {
  OP_REQUIRES(ctx, value % 2 == 0, errors::InvalidArgument(value, " is odd"));
  OP_REQUIRES_OK(ctx, value > 100 ? errors::OutOfRange(value, " too big") : Status::OK());
  *reached_end = true;
}

TEST_F(OpKernelContextTest, OpRequiresMacros) {
  {
    OpKernelContext ctx(&params_);
    bool reached_end = false;
    RequireEven(&ctx, 4, &reached_end);
    EXPECT_TRUE(reached_end);
    EXPECT_TRUE(ctx.status().ok());
  }
  {
    OpKernelContext ctx(&params_);
    bool reached_end = false;
    RequireEven(&ctx, 3, &reached_end);
    EXPECT_FALSE(reached_end);
    EXPECT_EQ(ctx.status(), errors::InvalidArgument("3 is odd"));
  }
  {
    OpKernelContext ctx(&params_);
    bool reached_end = false;
    RequireEven(&ctx, 102, &reached_end);
    EXPECT_FALSE(reached_end);
    EXPECT_EQ(ctx.status(), errors::OutOfRange("102 too big"));
  }
}

TEST_F(OpKernelContextTest, AsyncKernelCalledSynchronouslyIsInternal) {
  OpKernelConstruction construction(&device_, &node_, &op_, {}, {});
  NeverSyncKernel kernel(&construction);
  EXPECT_EQ(kernel.AsAsync(), &kernel);
  OpKernelContext ctx(&params_);
  kernel.Compute(&ctx);
  EXPECT_EQ(ctx.status().code(), Code::kInternal);
  EXPECT_EQ(ctx.status().message(), "asynchronous kernel n was called synchronously");
}

TEST(OpKernelConstructionTest, GetAttrAndStatus) {
  FakeDevice device;
  NodeDef node;
  node.name = "m";
  node.op = "SomeOp";
  node.attrs["k"] = AttrValue(5);
  OpDef op;
  OpKernelConstruction construction(&device, &node, &op, {DT_FLOAT}, {DT_BOOL});
  int32_t k = 0;
  ASSERT_TRUE(construction.GetAttr("k", &k).ok());
  EXPECT_EQ(k, 5);
  std::string s;
  Status status = construction.GetAttr("k", &s);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(status.message(), "'m' (SomeOp): attr 'k'")) << status;
  construction.SetStatus(status);
  construction.SetStatus(errors::Internal("later"));
  EXPECT_EQ(construction.status(), status);
  EXPECT_EQ(construction.input_types(), (std::vector<DType>{DT_FLOAT}));
  EXPECT_EQ(construction.output_types(), (std::vector<DType>{DT_BOOL}));
  EXPECT_EQ(construction.device(), &device);
}

}  // namespace
}  // namespace weir
