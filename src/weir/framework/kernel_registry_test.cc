#include "weir/framework/kernel_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "weir/framework/op_def.h"

namespace weir {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Only device_type() matters to the registry.
class FakeDevice : public Device {
 public:
  explicit FakeDevice(std::string type) : Device("/device:" + type + ":0", std::move(type)) {}
  Allocator* allocator() override { return DefaultCpuAllocator(); }
  ThreadPool* intra_op_pool() override { return nullptr; }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const override { return nullptr; }
  ResourceMgr* resource_manager() override { return nullptr; }
};

// A kernel that says which registration made it.
class TaggedKernel : public OpKernel {
 public:
  TaggedKernel(OpKernelConstruction* context, std::string tag)
      : OpKernel(context), tag_(std::move(tag)) {}
  void Compute(OpKernelContext*) override {}
  const std::string& tag() const { return tag_; }

 private:
  std::string tag_;
};

KernelFactory Tagged(std::string tag) {
  return [tag](OpKernelConstruction* context) -> std::unique_ptr<OpKernel> {
    return std::make_unique<TaggedKernel>(context, tag);
  };
}

std::string TagOf(const StatusOr<std::unique_ptr<OpKernel>>& kernel) {
  if (!kernel.ok()) return kernel.status().ToString();
  auto* tagged = dynamic_cast<const TaggedKernel*>(kernel->get());
  return tagged ? tagged->tag() : "<untagged>";
}

class KernelRegistryTest : public ::testing::Test {
 protected:
  KernelRegistryTest() {
    StatusOr<OpDef> op = OpDefBuilder("UnitTestKernelOp")
                             .Input("x: T")
                             .Input("rest: Tlist")
                             .Output("y: T")
                             .Attr("T: type")
                             .Attr("Tlist: list(type) = []")
                             .Build();
    EXPECT_TRUE(op.ok()) << op.status();
    op_ = std::move(op).value();
    registry_.Register(KernelBuilder("UnitTestKernelOp").TypeConstraint<float>("T"),
                       Tagged("cpu_float"));
    registry_.Register(KernelBuilder("UnitTestKernelOp").TypeConstraint<int32_t>("T"),
                       Tagged("cpu_int32"));
    registry_.Register(
        KernelBuilder("UnitTestKernelOp").Device("GPU").TypeConstraint("T", DT_FLOAT),
        Tagged("gpu_float"));
  }

  NodeDef Node(DType t, std::vector<DType> list = {}) const {
    NodeDef node;
    node.name = "k";
    node.op = "UnitTestKernelOp";
    node.attrs["T"] = AttrValue(t);
    node.attrs["Tlist"] = AttrValue(std::move(list));
    return node;
  }

  KernelRegistry registry_;
  OpDef op_;
  FakeDevice cpu_{kDeviceCpu};
  FakeDevice gpu_{"GPU"};
};

TEST_F(KernelRegistryTest, CreateKernelPicksByDTypeAndDevice) {
  NodeDef f = Node(DT_FLOAT, {DT_BOOL, DT_STRING});
  auto kernel = registry_.CreateKernel(&cpu_, f, op_);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(TagOf(kernel), "cpu_float");
  EXPECT_EQ((*kernel)->name(), "k");
  EXPECT_EQ((*kernel)->type_string(), "UnitTestKernelOp");
  ASSERT_EQ((*kernel)->num_inputs(), 3);
  EXPECT_EQ((*kernel)->input_type(0), DT_FLOAT);
  EXPECT_EQ((*kernel)->input_type(1), DT_BOOL);
  EXPECT_EQ((*kernel)->input_type(2), DT_STRING);
  ASSERT_EQ((*kernel)->num_outputs(), 1);
  EXPECT_EQ((*kernel)->output_type(0), DT_FLOAT);

  EXPECT_EQ(TagOf(registry_.CreateKernel(&cpu_, Node(DT_INT32), op_)), "cpu_int32");
  EXPECT_EQ(TagOf(registry_.CreateKernel(&gpu_, Node(DT_FLOAT), op_)), "gpu_float");
}

TEST_F(KernelRegistryTest, NotFoundListsAvailableKernels) {
  auto kernel = registry_.CreateKernel(&cpu_, Node(DT_DOUBLE), op_);
  ASSERT_FALSE(kernel.ok());
  const Status& s = kernel.status();
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_TRUE(Contains(s.message(), "no CPU kernel for node 'k' (UnitTestKernelOp)")) << s;
  EXPECT_TRUE(Contains(s.message(), "with T=double")) << s;
  EXPECT_TRUE(Contains(s.message(), "CPU (T in {float})")) << s;
  EXPECT_TRUE(Contains(s.message(), "CPU (T in {int32})")) << s;
  EXPECT_TRUE(Contains(s.message(), "GPU (T in {float})")) << s;

  EXPECT_EQ(registry_.CreateKernel(&gpu_, Node(DT_INT32), op_).status().code(),
            Code::kNotFound);
}

TEST_F(KernelRegistryTest, NotFoundForAnOpWithoutKernels) {
  StatusOr<OpDef> op = OpDefBuilder("UnitTestNoKernels").Build();
  ASSERT_TRUE(op.ok());
  NodeDef node;
  node.name = "lonely";
  node.op = "UnitTestNoKernels";
  auto kernel = registry_.CreateKernel(&cpu_, node, *op);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), Code::kNotFound);
  EXPECT_TRUE(Contains(kernel.status().message(), "the op has no kernels at all"))
      << kernel.status();
}

TEST_F(KernelRegistryTest, HasKernel) {
  EXPECT_TRUE(registry_.HasKernel(kDeviceCpu, Node(DT_FLOAT)));
  EXPECT_TRUE(registry_.HasKernel(kDeviceCpu, Node(DT_INT32)));
  EXPECT_FALSE(registry_.HasKernel(kDeviceCpu, Node(DT_DOUBLE)));
  EXPECT_TRUE(registry_.HasKernel("GPU", Node(DT_FLOAT)));
  EXPECT_FALSE(registry_.HasKernel("GPU", Node(DT_INT32)));
  EXPECT_FALSE(registry_.HasKernel("TPU", Node(DT_FLOAT)));
  NodeDef untyped = Node(DT_FLOAT);
  untyped.attrs.erase("T");  // a constrained attr that is missing never matches
  EXPECT_FALSE(registry_.HasKernel(kDeviceCpu, untyped));
  NodeDef wrong_kind = Node(DT_FLOAT);
  wrong_kind.attrs["T"] = AttrValue(1);
  EXPECT_FALSE(registry_.HasKernel(kDeviceCpu, wrong_kind));
}

TEST_F(KernelRegistryTest, ListConstraintsCheckEveryElement) {
  registry_.Register(KernelBuilder("UnitTestListOp").TypeConstraint("Tlist", DT_FLOAT)
                         .TypeConstraint("Tlist", DT_HALF),
                     Tagged("list"));
  NodeDef node;
  node.op = "UnitTestListOp";
  node.attrs["Tlist"] = AttrValue(std::vector<DType>{DT_FLOAT, DT_HALF, DT_FLOAT});
  EXPECT_TRUE(registry_.HasKernel(kDeviceCpu, node));
  node.attrs["Tlist"] = AttrValue(std::vector<DType>{DT_FLOAT, DT_INT32});
  EXPECT_FALSE(registry_.HasKernel(kDeviceCpu, node));
}

TEST_F(KernelRegistryTest, ConstructionFailureIsReturned) {
  registry_.Register(KernelBuilder("UnitTestKernelOp").TypeConstraint<double>("T"),
                     [](OpKernelConstruction* context) -> std::unique_ptr<OpKernel> {
                       int64_t missing;
                       Status s = context->GetAttr("no_such_attr", &missing);
                       context->SetStatus(s);
                       context->SetStatus(errors::Internal("second error is dropped"));
                       return std::make_unique<TaggedKernel>(context, "broken");
                     });
  auto kernel = registry_.CreateKernel(&cpu_, Node(DT_DOUBLE), op_);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), Code::kNotFound);
  EXPECT_TRUE(Contains(kernel.status().message(), "'k' (UnitTestKernelOp)")) << kernel.status();
  EXPECT_TRUE(Contains(kernel.status().message(), "no_such_attr")) << kernel.status();
}

TEST_F(KernelRegistryTest, DescribeAndListOps) {
  std::vector<std::string> described = registry_.DescribeKernels("UnitTestKernelOp");
  EXPECT_EQ(described.size(), 3u);
  EXPECT_NE(std::find(described.begin(), described.end(), "CPU (T in {float})"),
            described.end());
  EXPECT_NE(std::find(described.begin(), described.end(), "GPU (T in {float})"),
            described.end());
  EXPECT_TRUE(registry_.DescribeKernels("Nothing").empty());

  registry_.Register(KernelBuilder("UnitTestAnyType"), Tagged("any"));
  EXPECT_EQ(registry_.DescribeKernels("UnitTestAnyType"), (std::vector<std::string>{"CPU"}));
  EXPECT_EQ(registry_.ListOps(),
            (std::vector<std::string>{"UnitTestAnyType", "UnitTestKernelOp"}));
}

TEST(KernelRegistryGlobalTest, IsOneRegistry) {
  EXPECT_NE(KernelRegistry::Global(), nullptr);
  EXPECT_EQ(KernelRegistry::Global(), KernelRegistry::Global());
}

TEST(KernelRegistryDeathTest, DuplicateRegistrationIsABug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  KernelRegistry registry;
  registry.Register(KernelBuilder("UnitTestDup").TypeConstraint<float>("T"), Tagged("a"));
  // The same op on another device, or with other constraints, is fine.
  registry.Register(KernelBuilder("UnitTestDup").Device("GPU").TypeConstraint<float>("T"),
                    Tagged("b"));
  registry.Register(KernelBuilder("UnitTestDup").TypeConstraint<double>("T"), Tagged("c"));
  EXPECT_DEATH(
      registry.Register(KernelBuilder("UnitTestDup").TypeConstraint<float>("T"), Tagged("d")),
      "kernel for UnitTestDup on CPU registered twice");
}

}  // namespace
}  // namespace weir
