// The cost model's numbers against hand-computed ones.
#include "weir/graph/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "weir/graph/graph_constructor.h"
#include "weir/kernels/all_kernels.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

NodeDef Placeholder(const std::string& name, PartialShape shape, DType dtype = DT_FLOAT) {
  NodeDef def;
  def.name = name;
  def.op = "Placeholder";
  def.attrs["dtype"] = dtype;
  def.attrs["shape"] = std::move(shape);
  return def;
}

NodeDef Op(const std::string& name, const std::string& op, std::vector<std::string> inputs,
           AttrMap attrs = {}) {
  NodeDef def;
  def.name = name;
  def.op = op;
  def.inputs = std::move(inputs);
  def.attrs = std::move(attrs);
  def.attrs.try_emplace("T", DT_FLOAT);
  return def;
}

class CostModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllOps();
    RegisterAllKernels();
  }
  const Node& Build(std::vector<NodeDef> nodes) {
    GraphDef def;
    def.nodes = std::move(nodes);
    Status s = ImportGraphDef(def, &graph_);
    EXPECT_TRUE(s.ok()) << s;
    return *graph_.FindNode(def.nodes.back().name);
  }
  Graph graph_;
};

TEST_F(CostModelTest, MatMulIsTwoMNK) {
  const Node& mm =
      Build({Placeholder("a", {3, 5}), Placeholder("b", {5, 7}), Op("mm", "MatMul", {"a", "b"})});
  OpCost cost = CostModel::EstimateOp(mm);
  EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 3 * 5 * 7);
  EXPECT_DOUBLE_EQ(cost.bytes, 4.0 * (3 * 5 + 5 * 7 + 3 * 7));
}

TEST_F(CostModelTest, TransposedMatMulTakesKFromTheRightDim) {
  const Node& mm =
      Build({Placeholder("a", {5, 3}), Placeholder("b", {7, 5}),
             Op("mm", "MatMul", {"a", "b"}, {{"transpose_a", true}, {"transpose_b", true}})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(mm).flops, 2.0 * 3 * 5 * 7);
}

TEST_F(CostModelTest, BatchMatMulCountsTheBatch) {
  const Node& mm = Build({Placeholder("a", {4, 3, 5}), Placeholder("b", {4, 5, 7}),
                          Op("mm", "BatchMatMulV2", {"a", "b"})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(mm).flops, 2.0 * 4 * 3 * 5 * 7);
}

TEST_F(CostModelTest, Conv2DAndItsBackprops) {
  // NHWC [2, 8, 8, 3] * HWIO [3, 3, 3, 16], SAME, stride 1: out [2, 8, 8, 16].
  AttrMap conv = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}};
  const Node& c = Build({Placeholder("x", {2, 8, 8, 3}), Placeholder("f", {3, 3, 3, 16}),
                         Op("conv", "Conv2D", {"x", "f"}, conv)});
  const double forward = 2.0 * (2 * 8 * 8 * 16) * (3 * 3 * 3);
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(c).flops, forward);

  NodeDef sizes;
  sizes.name = "sizes";
  sizes.op = "Const";
  sizes.attrs["dtype"] = DT_INT32;
  sizes.attrs["value"] = Tensor::FromVector<int32_t>({2, 8, 8, 3}, {4});
  NodeDef fsizes = sizes;
  fsizes.name = "fsizes";
  fsizes.attrs["value"] = Tensor::FromVector<int32_t>({3, 3, 3, 16}, {4});
  graph_.CopyFrom(Graph());
  const Node& bi = Build({sizes, fsizes, Placeholder("x", {2, 8, 8, 3}),
                          Placeholder("f", {3, 3, 3, 16}), Placeholder("dy", {2, 8, 8, 16}),
                          Op("dx", "Conv2DBackpropInput", {"sizes", "f", "dy"}, conv),
                          Op("df", "Conv2DBackpropFilter", {"x", "fsizes", "dy"}, conv)});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(bi).flops, forward);  // df, the last node
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(*graph_.FindNode("dx")).flops, forward);
}

TEST_F(CostModelTest, ElementwiseReductionsAndSoftmax) {
  const Node& add =
      Build({Placeholder("x", {10, 20}), Placeholder("y", {10, 20}), Op("add", "Add", {"x", "y"})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(add).flops, 200);
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(add).bytes, 4.0 * 600);
  graph_.CopyFrom(Graph());
  NodeDef axis;
  axis.name = "axis";
  axis.op = "Const";
  axis.attrs["dtype"] = DT_INT32;
  axis.attrs["value"] = Tensor::Scalar<int32_t>(1);
  const Node& sum = Build(
      {Placeholder("x", {10, 20}), axis, Op("sum", "Sum", {"x", "axis"}, {{"Tidx", DT_INT32}})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(sum).flops, 200);
  graph_.CopyFrom(Graph());
  const Node& softmax = Build({Placeholder("x", {10, 20}), Op("sm", "Softmax", {"x"})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(softmax).flops, 5 * 200);
}

TEST_F(CostModelTest, DataMovementIsFreeAndUnknownOpsCostTheirBytes) {
  const Node& id = Build({Placeholder("x", {10, 20}), Op("id", "Identity", {"x"})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(id).flops, 0);
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(id).bytes, 0);
  graph_.CopyFrom(Graph());
  NodeDef perm;
  perm.name = "perm";
  perm.op = "Const";
  perm.attrs["dtype"] = DT_INT32;
  perm.attrs["value"] = Tensor::FromVector<int32_t>({1, 0}, {2});
  const Node& t = Build({Placeholder("x", {10, 20}), perm,
                         Op("t", "Transpose", {"x", "perm"}, {{"Tperm", DT_INT32}})});
  OpCost cost = CostModel::EstimateOp(t);
  EXPECT_DOUBLE_EQ(cost.flops, 0);
  EXPECT_DOUBLE_EQ(cost.bytes, 4.0 * 200 + 4.0 * 2 + 4.0 * 200);
}

TEST_F(CostModelTest, UnknownDimsCountAsTheDefault) {
  const Node& mm =
      Build({Placeholder("a", {-1, 5}), Placeholder("b", {5, 7}), Op("mm", "MatMul", {"a", "b"})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(mm).flops, 2.0 * CostModel::kUnknownDim * 5 * 7);
  graph_.CopyFrom(Graph());
  const Node& neg = Build({Placeholder("a", PartialShape()), Op("neg", "Neg", {"a"})});
  EXPECT_DOUBLE_EQ(CostModel::EstimateOp(neg).flops,
                   1.0 * CostModel::kUnknownDim * CostModel::kUnknownDim);
}

TEST_F(CostModelTest, HugeShapesSaturate) {
  // Shapes no validated graph has (set directly) still give finite costs.
  const Node& mm =
      Build({Placeholder("a", {3, 5}), Placeholder("b", {5, 7}), Op("mm", "MatMul", {"a", "b"})});
  const int64_t big = int64_t{1} << 62;
  graph_.FindNode("a")->set_output_shapes({PartialShape({big, big, big})});
  graph_.FindNode("mm")->set_output_shapes({PartialShape({big, big})});
  OpCost cost = CostModel::EstimateOp(mm);
  EXPECT_EQ(cost.flops, CostModel::kMaxCost);
  EXPECT_EQ(cost.bytes, CostModel::kMaxCost);
  CostModel model;
  double micros = model.NodeMicros(mm, {"/device:CPU:0", "CPU"});
  EXPECT_TRUE(std::isfinite(micros));
  EXPECT_LE(micros, CostModel::kMaxCost);
  EXPECT_TRUE(std::isfinite(model.TransferMicros("a", "b", CostModel::OutputBytes(mm, 0))));
}

TEST_F(CostModelTest, DeviceModelIsARoofline) {
  CostModel model;
  DeviceModel two = model.ModelFor({"/device:CPU:0", "CPU", 2});
  EXPECT_DOUBLE_EQ(two.peak_flops, 2 * CostModel::kCpuFlopsPerThread);
  EXPECT_DOUBLE_EQ(two.memory_bytes_per_second, 2 * CostModel::kCpuBytesPerSecondPerThread);
  DeviceModel custom = model.ModelFor({"/device:CPU:0", "CPU", 1, 1e12, 1e11});
  EXPECT_DOUBLE_EQ(custom.peak_flops, 1e12);
  // Compute-bound: 2e9 flops at 1e12 FLOP/s = 2000 us; 1e6 bytes at 1e11 = 10 us.
  EXPECT_DOUBLE_EQ(CostModel::ComputeMicros({2e9, 1e6}, custom), custom.overhead_micros + 2000);
  // Memory-bound: 1e3 flops, 1e8 bytes = 1000 us.
  EXPECT_DOUBLE_EQ(CostModel::ComputeMicros({1e3, 1e8}, custom), custom.overhead_micros + 1000);
}

TEST_F(CostModelTest, TransfersAreLatencyPlusBandwidth) {
  CostModel model;
  EXPECT_DOUBLE_EQ(model.TransferMicros("a", "a", 1e9), 0);
  EXPECT_DOUBLE_EQ(model.TransferMicros("a", "b", 1e6),
                   CostModel::kDefaultLink.latency_micros +
                       1e6 / CostModel::kDefaultLink.bytes_per_second * 1e6);
  model.SetLink("a", "b", {100, 1e9});
  EXPECT_DOUBLE_EQ(model.TransferMicros("a", "b", 1e6), 100 + 1000);
  EXPECT_DOUBLE_EQ(model.TransferMicros("b", "a", 0), CostModel::kDefaultLink.latency_micros);
}

TEST_F(CostModelTest, MeasurementsReplaceEstimates) {
  const Node& mm = Build({Placeholder("a", {64, 64}), Op("mm", "MatMul", {"a", "a"})});
  CostModel model;
  const DeviceInfo cpu0 = {"/job:localhost/replica:0/task:0/device:CPU:0", "CPU"};
  const DeviceInfo cpu1 = {"/job:localhost/replica:0/task:0/device:CPU:1", "CPU"};
  const DeviceInfo accel = {"/job:localhost/replica:0/task:0/device:ACCEL:0", "ACCEL"};
  double estimate = model.NodeMicros(mm, cpu0);
  EXPECT_DOUBLE_EQ(estimate,
                   CostModel::ComputeMicros(CostModel::EstimateOp(mm), model.ModelFor(cpu0)));
  EXPECT_FALSE(model.has_measurements());
  model.RecordMeasurement("mm", cpu0.name, 100);
  model.RecordMeasurement("mm", cpu0.name, 300);
  EXPECT_DOUBLE_EQ(model.NodeMicros(mm, cpu0), 200);
  EXPECT_DOUBLE_EQ(model.NodeMicros(mm, cpu1), 200) << "same device type";
  EXPECT_DOUBLE_EQ(model.NodeMicros(mm, accel), model.NodeMicros(mm, accel));
  EXPECT_LT(model.MeasuredMicros("mm", accel), 0) << "another type: the estimate";
  model.RecordMeasurement("mm", cpu1.name, 50);
  EXPECT_DOUBLE_EQ(model.NodeMicros(mm, cpu1), 50);
  EXPECT_LT(model.MeasuredMicros("other", cpu0), 0);
}

TEST_F(CostModelTest, RecordMeasurementIsThreadSafe) {
  CostModel model;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&model, t] {
      for (int i = 0; i < 1000; ++i) {
        model.RecordMeasurement(StrCat("n", i % 10), "/device:CPU:0", t % 2 == 0 ? 10 : 30);
        model.MeasuredMicros("n0", {"/device:CPU:0", "CPU"});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_DOUBLE_EQ(model.MeasuredMicros("n3", {"/device:CPU:0", "CPU"}), 20);
}

}  // namespace
}  // namespace weir
