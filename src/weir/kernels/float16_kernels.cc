// The ops that have float16 and bfloat16 kernels computing in float32
// (compute_in_float.h): what TensorFlow's mixed-precision graphs (Keras'
// mixed_float16 and mixed_bfloat16 policies) run in 16 bits. Ops whose
// family already has a native 16-bit kernel (MatMul and Conv2D in bfloat16
// through oneDNN, Cast, Select, the element-moving array ops) keep it.
// Training ops are not here: they update their variable in place, and
// mixed-precision variables are float32.
#include "weir/kernels/all_kernels.h"
#include "weir/kernels/compute_in_float.h"

namespace weir {

void RegisterFloat16Kernels(KernelRegistry* registry) {
  const char* const kElementwiseOps[] = {
      // Elementwise binary (NumPy broadcasting) and comparisons.
      "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum", "Minimum",
      "Pow", "SquaredDifference", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal",
      "NotEqual",
      // Elementwise unary.
      "Neg", "Abs", "Sign", "Square", "Relu", "Relu6", "Exp", "Expm1", "Log", "Log1p", "Sqrt",
      "Rsqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos", "Tanh", "Sigmoid", "Elu",
      "Selu", "Softplus", "Softsign", "Erf", "Erfc", "IsNan", "IsInf", "IsFinite", "Tan", "Asin",
      "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "DivNoNan",
      // Gradients of activations, and AddN.
      "ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad", "SigmoidGrad",
      "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad", "AddN"};
  const char* const kOps[] = {
      // Reductions (accumulated in float).
      "Sum", "Mean", "Prod", "Max", "Min", "ArgMax", "ArgMin",
      // Products.
      "MatMul", "BatchMatMulV2",
      // Neural-network layers and their gradients.
      "BiasAdd", "BiasAddGrad", "SparseSoftmaxCrossEntropyWithLogits", "L2Loss", "Conv2D",
      "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPoolGrad", "AvgPoolGrad",
      // x and y in 16 bits; scale, offset, mean and variance (U) stay float.
      "FusedBatchNormV3", "FusedBatchNormGradV3",
      // Whole-tensor checks: one error naming everything found.
      "CheckNumerics", "CheckNumericsV2", "FusedBatchNormV2", "LinSpace"};
  for (DType dtype : {DT_HALF, DT_BFLOAT16}) {
    for (const char* op : kElementwiseOps) {
      RegisterComputeInFloat(registry, op, dtype, FloatCompute::kElementwise);
    }
    for (const char* op : kOps) RegisterComputeInFloat(registry, op, dtype);
    // Row r of the outputs from row r of the inputs alone (dim 0: the batch).
    for (const char* op :
         {"Softmax", "LogSoftmax", "SoftmaxCrossEntropyWithLogits", "MaxPool", "AvgPool"}) {
      RegisterComputeInFloat(registry, op, dtype, FloatCompute::kRows);
    }
    // Random normals: float normals rounded (uniforms are native:
    // random_ops.cc).
    for (const char* op : {"RandomStandardNormal", "TruncatedNormal"}) {
      RegisterComputeInFloat(registry, op, dtype, FloatCompute::kWhole, {"dtype"});
    }
  }
}

}  // namespace weir
