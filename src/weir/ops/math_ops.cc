// The math family: elementwise arithmetic with NumPy broadcasting,
// elementwise functions, activations and their gradient ops, comparisons
// and logic, selection, matrix multiplication, reductions and dtype
// conversion. Names, inputs, attrs and type sets follow TensorFlow's
// declarations so imported graphs validate; which of those types have CPU
// kernels is up to kernels/.
#include <initializer_list>
#include <string>

#include "weir/framework/broadcast_shape.h"
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

constexpr char kBinaryTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, "
    "int64, complex64, complex128}";
constexpr char kFloatTypes[] = "T: {bfloat16, half, float, double}";
constexpr char kFloatComplexTypes[] = "T: {bfloat16, half, float, double, complex64, complex128}";
constexpr char kSignedTypes[] =
    "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}";
constexpr char kMinMaxTypes[] =
    "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
    "uint64}";

struct OpSpec {
  const char* name;
  const char* type_spec;
  const char* doc;
};

// x: T -> z: T, broadcasting.
void RegisterBinaryOp(OpRegistry* registry, const OpSpec& op) {
  registry->Register(OpDefBuilder(op.name)
                         .Input("x: T")
                         .Input("y: T")
                         .Output("z: T")
                         .Attr(op.type_spec)
                         .SetShapeFn(BroadcastBinaryOpShape)
                         .Doc(op.doc));
}

// x: T -> y: T.
void RegisterUnaryOp(OpRegistry* registry, const OpSpec& op) {
  registry->Register(OpDefBuilder(op.name)
                         .Input("x: T")
                         .Output("y: T")
                         .Attr(op.type_spec)
                         .SetShapeFn(UnchangedShape)
                         .Doc(op.doc));
}

// features: T -> activations: T.
void RegisterActivation(OpRegistry* registry, const OpSpec& op) {
  registry->Register(OpDefBuilder(op.name)
                         .Input("features: T")
                         .Output("activations: T")
                         .Attr(op.type_spec)
                         .SetShapeFn(UnchangedShape)
                         .Doc(op.doc));
}

// (gradients, `forward`) -> backprops, where `forward` names the forward
// op's input ("features") or output ("outputs") the gradient is taken at.
void RegisterActivationGrad(OpRegistry* registry, const OpSpec& op, const char* forward) {
  registry->Register(OpDefBuilder(op.name)
                         .Input("gradients: T")
                         .Input(std::string(forward) + ": T")
                         .Output("backprops: T")
                         .Attr(op.type_spec)
                         .SetShapeFn(MergeAllInputsShape)
                         .Doc(op.doc));
}

// (y, dy) -> z, where y is the forward op's output.
void RegisterUnaryGradOp(OpRegistry* registry, const OpSpec& op) {
  registry->Register(OpDefBuilder(op.name)
                         .Input("y: T")
                         .Input("dy: T")
                         .Output("z: T")
                         .Attr(op.type_spec)
                         .SetShapeFn(MergeAllInputsShape)
                         .Doc(op.doc));
}

// (x: T, y: T) -> z: bool, broadcasting.
void RegisterComparison(OpRegistry* registry, const OpSpec& op, bool equality) {
  OpDefBuilder builder(op.name);
  builder.Input("x: T").Input("y: T").Output("z: bool").Attr(op.type_spec);
  if (equality) builder.Attr("incompatible_shape_error: bool = true");
  registry->Register(builder.SetShapeFn(BroadcastBinaryOpShape).Doc(op.doc));
}

void RegisterElementwiseOps(OpRegistry* registry) {
  const char* const kAddTypes =
      "T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
      "complex128, string}";
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"Add", kAddTypes, "x + y, with NumPy broadcasting."},
           {"AddV2", kBinaryTypes, "x + y, with NumPy broadcasting."},
           {"Sub", kBinaryTypes, "x - y, with NumPy broadcasting."},
           {"Mul", kBinaryTypes, "x * y, with NumPy broadcasting."},
           {"DivNoNan", "T: {half, float, bfloat16, double, complex64, complex128}",
            "x / y with NumPy broadcasting, or 0 where y is 0 (x = 0 / 0 too)."},
           {"RealDiv", kBinaryTypes,
            "x / y, with NumPy broadcasting; integers divide toward zero and dividing by "
            "zero is an error."},
           {"Div", kBinaryTypes,
            "x / y, with NumPy broadcasting; integers divide toward zero (as in C) and "
            "dividing by zero is an error."},
           {"FloorDiv", kBinaryTypes,
            "floor(x / y), with NumPy broadcasting; integer division by zero is an error."},
           {"FloorMod",
            "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, half, "
            "float, double}",
            "x - floor(x / y) * y, with NumPy broadcasting: 0 or of y's sign, as in Python; "
            "integer division by zero is an error."},
           {"Maximum", kMinMaxTypes, "max(x, y), with NumPy broadcasting; NaN if either is."},
           {"Minimum", kMinMaxTypes, "min(x, y), with NumPy broadcasting; NaN if either is."},
           {"Pow",
            "T: {bfloat16, float, half, double, int8, int16, int32, int64, complex64, "
            "complex128}",
            "x ** y, with NumPy broadcasting; integers to negative powers are an error."},
           {"SquaredDifference",
            "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}",
            "(x - y)^2, with NumPy broadcasting."},
       }) {
    RegisterBinaryOp(registry, op);
  }
  registry->Register(OpDefBuilder("Atan2")
                         .Input("y: T")
                         .Input("x: T")
                         .Output("z: T")
                         .Attr(kFloatTypes)
                         .SetShapeFn(BroadcastBinaryOpShape)
                         .Doc("The angle of the point (x, y) in [-pi, pi], elementwise with "
                              "NumPy broadcasting."));
  registry->Register(OpDefBuilder("Polygamma")
                         .Input("a: T")
                         .Input("x: T")
                         .Output("z: T")
                         .Attr("T: {float, double}")
                         .SetShapeFn(BroadcastBinaryOpShape)
                         .Doc("The a-th derivative of digamma at x, with NumPy broadcasting; "
                              "NaN unless a is a whole number >= 0."));

  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"Neg", kSignedTypes, "-x, elementwise (integers wrap)."},
           {"Abs", "T: {bfloat16, half, float, double, int8, int16, int32, int64}",
            "|x|, elementwise (the most negative integer stays itself)."},
           {"Sign", kSignedTypes, "-1, 0 or 1 by the sign of x; NaN stays NaN."},
           {"Square",
            "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, "
            "uint32, uint64, complex64, complex128}",
            "x * x, elementwise (integers wrap)."},
           {"Reciprocal", kSignedTypes, "1 / x, elementwise."},
           {"Exp", kFloatComplexTypes, "e^x, elementwise."},
           {"Expm1", kFloatComplexTypes, "e^x - 1, elementwise, accurate near 0."},
           {"Log", kFloatComplexTypes, "Natural logarithm; log(0) = -inf, log(x < 0) = NaN."},
           {"Log1p", kFloatComplexTypes, "log(1 + x), elementwise, accurate near 0."},
           {"Sqrt", kFloatComplexTypes, "Square root; NaN below 0."},
           {"Rsqrt", kFloatComplexTypes, "1 / sqrt(x), elementwise."},
           {"Floor", kFloatTypes, "The largest integer not above x."},
           {"Ceil", kFloatTypes, "The smallest integer not below x."},
           {"Round", kSignedTypes, "x rounded to the nearest integer, halves to even."},
           {"Sin", kFloatComplexTypes, "Sine, elementwise."},
           {"Cos", kFloatComplexTypes, "Cosine, elementwise."},
           {"Tanh", kFloatComplexTypes, "Hyperbolic tangent, elementwise."},
           {"Sigmoid", kFloatComplexTypes, "1 / (1 + e^-x), elementwise."},
           {"Erf", kFloatTypes, "The error function, elementwise."},
           {"Erfc", kFloatTypes, "1 - erf(x), accurate where erf(x) is near 1."},
           {"Tan", kFloatComplexTypes, "Tangent, elementwise."},
           {"Asin", kFloatComplexTypes, "Arcsine in [-pi/2, pi/2]; NaN outside [-1, 1]."},
           {"Acos", kFloatComplexTypes, "Arccosine in [0, pi]; NaN outside [-1, 1]."},
           {"Atan", kFloatComplexTypes, "Arctangent in (-pi/2, pi/2)."},
           {"Sinh", kFloatComplexTypes, "Hyperbolic sine, elementwise."},
           {"Cosh", kFloatComplexTypes, "Hyperbolic cosine, elementwise."},
           {"Asinh", kFloatComplexTypes, "Inverse hyperbolic sine, elementwise."},
           {"Acosh", kFloatComplexTypes, "Inverse hyperbolic cosine; NaN below 1."},
           {"Atanh", kFloatComplexTypes, "Inverse hyperbolic tangent; +-inf at +-1, NaN beyond."},
           {"Lgamma", kFloatTypes, "log |Gamma(x)|, elementwise; +inf at 0, -1, -2, ..."},
           {"Digamma", kFloatTypes, "psi(x), the derivative of lgamma, elementwise."},
       }) {
    RegisterUnaryOp(registry, op);
  }
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"IsNan", kFloatTypes, "Whether each element of x is NaN."},
           {"IsInf", kFloatTypes, "Whether each element of x is inf or -inf."},
           {"IsFinite", kFloatTypes, "Whether each element of x is neither NaN nor infinite."},
       }) {
    registry->Register(OpDefBuilder(op.name)
                           .Input("x: T")
                           .Output("y: bool")
                           .Attr(op.type_spec)
                           .SetShapeFn(UnchangedShape)
                           .Doc(op.doc));
  }
}

void RegisterActivationOps(OpRegistry* registry) {
  const char* const kActivationTypes = "T: {half, bfloat16, float, double}";
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"Relu", "T: realnumbertype", "max(features, 0), elementwise; NaN stays NaN."},
           {"Relu6", "T: realnumbertype", "min(max(features, 0), 6); NaN stays NaN."},
           {"Elu", kActivationTypes, "features where >= 0, else exp(features) - 1."},
           {"Selu", kActivationTypes,
            "scale * features where >= 0, else scale * alpha * (exp(features) - 1), with "
            "scale ~1.0507 and alpha ~1.6733."},
           {"Softplus", kActivationTypes, "log(exp(features) + 1), without overflow."},
           {"Softsign", kActivationTypes, "features / (1 + |features|)."},
       }) {
    RegisterActivation(registry, op);
  }
  registry->Register(OpDefBuilder("LeakyRelu")
                         .Input("features: T")
                         .Output("activations: T")
                         .Attr("alpha: float = 0.2")
                         .Attr("T: {half, bfloat16, float, double} = float")
                         .SetShapeFn(UnchangedShape)
                         .Doc("features where > 0, else alpha * features."));
  registry->Register(OpDefBuilder("LeakyReluGrad")
                         .Input("gradients: T")
                         .Input("features: T")
                         .Output("backprops: T")
                         .Attr("alpha: float = 0.2")
                         .Attr("T: {half, bfloat16, float, double} = float")
                         .SetShapeFn(MergeAllInputsShape)
                         .Doc("LeakyRelu's gradient: gradients where features > 0, else alpha * "
                              "gradients."));
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"ReluGrad", "T: realnumbertype", "gradients where features > 0, else 0."},
           {"Relu6Grad", "T: realnumbertype", "gradients where 0 < features < 6, else 0."},
           {"SoftplusGrad", kActivationTypes, "gradients * sigmoid(features)."},
           {"SoftsignGrad", kActivationTypes, "gradients / (1 + |features|)^2."},
       }) {
    RegisterActivationGrad(registry, op, "features");
  }
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"EluGrad", kActivationTypes,
            "Elu's gradient from its outputs: gradients where outputs >= 0, else gradients * "
            "(outputs + 1)."},
           {"SeluGrad", kActivationTypes,
            "Selu's gradient from its outputs: gradients * scale where outputs >= 0, else "
            "gradients * (outputs + scale * alpha)."},
       }) {
    RegisterActivationGrad(registry, op, "outputs");
  }
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"SigmoidGrad", kFloatComplexTypes, "dy * y * (1 - y), where y = sigmoid(x)."},
           {"TanhGrad", kFloatComplexTypes, "dy * (1 - y^2), where y = tanh(x)."},
           {"RsqrtGrad", kFloatComplexTypes, "-dy * y^3 / 2, where y = rsqrt(x)."},
           {"SqrtGrad", kFloatComplexTypes, "dy / (2 y), where y = sqrt(x)."},
           {"ReciprocalGrad", kFloatComplexTypes, "-dy * y^2, where y = 1 / x."},
       }) {
    RegisterUnaryGradOp(registry, op);
  }
}

void RegisterLogicOps(OpRegistry* registry) {
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"Less", "T: realnumbertype", "x < y, with NumPy broadcasting."},
           {"LessEqual", "T: realnumbertype", "x <= y, with NumPy broadcasting."},
           {"Greater", "T: realnumbertype", "x > y, with NumPy broadcasting."},
           {"GreaterEqual", "T: realnumbertype", "x >= y, with NumPy broadcasting."},
       }) {
    RegisterComparison(registry, op, /*equality=*/false);
  }
  for (const OpSpec& op : std::initializer_list<OpSpec>{
           {"Equal", "T: type",
            "x == y, with NumPy broadcasting. With incompatible_shape_error=false, shapes "
            "that do not broadcast give the scalar false."},
           {"NotEqual", "T: type",
            "x != y, with NumPy broadcasting. With incompatible_shape_error=false, shapes "
            "that do not broadcast give the scalar true."},
       }) {
    RegisterComparison(registry, op, /*equality=*/true);
  }
  for (const char* name : {"LogicalAnd", "LogicalOr"}) {
    registry->Register(OpDefBuilder(name)
                           .Input("x: bool")
                           .Input("y: bool")
                           .Output("z: bool")
                           .SetShapeFn(BroadcastBinaryOpShape)
                           .Doc("x AND / OR y, with NumPy broadcasting."));
  }
  registry->Register(OpDefBuilder("LogicalNot")
                         .Input("x: bool")
                         .Output("y: bool")
                         .SetShapeFn(UnchangedShape)
                         .Doc("NOT x, elementwise."));
  registry->Register(OpDefBuilder("Select")
                         .Input("condition: bool")
                         .Input("t: T")
                         .Input("e: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(SelectShape)
                         .Doc("condition ? t : e. t and e have one shape; condition is a "
                              "scalar (picks all of t or e), that shape, or a vector over "
                              "the first dim (picks rows)."));
  registry->Register(OpDefBuilder("SelectV2")
                         .Input("condition: bool")
                         .Input("t: T")
                         .Input("e: T")
                         .Output("output: T")
                         .Attr("T: type")
                         .SetShapeFn(BroadcastAllInputsShape)
                         .Doc("condition ? t : e, all three broadcast together as in NumPy."));
}

}  // namespace

// _MatMulAccumulate: pieces a_i [k, m_i], b [k, n]; the sum is acc
// broadcast with the product [m_1 + ... + m_N, n], as AddV2 would.
Status MatMulAccumulateShape(InferenceContext* c) {
  const int pieces = c->num_inputs() - 2;
  PartialShape b;
  WEIR_RETURN_IF_ERROR(c->WithRank(pieces + 1, 2, &b));
  int64_t k = b.dim(0), rows = 0;
  for (int i = 1; i <= pieces; ++i) {
    PartialShape a;
    WEIR_RETURN_IF_ERROR(c->WithRank(i, 2, &a));
    if (!InferenceContext::MergeDim(k, a.dim(0), &k).ok()) {
      return errors::InvalidArgument("_MatMulAccumulate: a[", i - 1, "] ", c->input(i), " and b ",
                                     c->input(pieces + 1),
                                     " must have the same first dim (the contracted one)");
    }
    if (rows >= 0 && a.dim(1) >= 0 && !__builtin_add_overflow(rows, a.dim(1), &rows)) continue;
    rows = PartialShape::kUnknown;
  }
  WEIR_ASSIGN_OR_RETURN(PartialShape sum,
                        BroadcastShapes(c->input(0), PartialShape({rows, b.dim(1)})));
  c->set_output(0, std::move(sum));
  return Status::OK();
}

void RegisterMathOps(OpRegistry* registry) {
  RegisterElementwiseOps(registry);
  RegisterActivationOps(registry);
  RegisterLogicOps(registry);
  registry->Register(OpDefBuilder("AddN")
                         .Input("inputs: N * T")
                         .Output("sum: T")
                         .Attr("N: int >= 1")
                         .Attr("T: {numbertype, variant}")
                         .SetShapeFn(MergeAllInputsShape)
                         .Doc("The sum of N tensors of one shape, added in input order. "
                              "Variants add by value: TensorLists element by element (an "
                              "unset element takes the other's), Optionals by component."));
  registry->Register(OpDefBuilder("MatMul")
                         .Input("a: T")
                         .Input("b: T")
                         .Output("product: T")
                         .Attr("transpose_a: bool = false")
                         .Attr("transpose_b: bool = false")
                         // TensorFlow 2.x writes these gradient-fusion hints on
                         // every MatMul; declared so its graphs import. No effect.
                         .Attr("grad_a: bool = false")
                         .Attr("grad_b: bool = false")
                         .Attr("T: {bfloat16, half, float, double, int32, int64, uint8, "
                               "uint16, uint32, uint64, complex64, complex128}")
                         .SetShapeFn(MatMulShape)
                         .Doc("The matrix product op(a) * op(b), op transposing when asked."));
  // Internal: the kernel fusion pass (graph/fuse_ops.h) makes it of
  // AddV2(acc, MatMul(x, dy, transpose_a)), the per-iteration sum of a while
  // loop's weight gradient.
  registry->Register(
      OpDefBuilder("_MatMulAccumulate")
          .Input("acc: T")
          .Input("a: N * T")
          .Input("b: T")
          .Output("sum: T")
          .Attr("N: int >= 1")
          .Attr("T: {float}")
          .SetShapeFn(MatMulAccumulateShape)
          .Doc("acc + concat(a, axis 1)^T * b, acc broadcasting as in AddV2: a[i] is [k, m_i], "
               "b [k, n]. The pieces of a are x^T's row blocks (say [x, h]^T without the "
               "concatenated copy). When acc is [m_1 + ... + m_N, n] the product goes into it "
               "(its buffer when nothing else holds it)."));
  registry->Register(OpDefBuilder("Sum")
                         .Input("input: T")
                         .Input("reduction_indices: Tidx")
                         .Output("output: T")
                         .Attr("keep_dims: bool = false")
                         .Attr("T: numbertype")
                         .Attr("Tidx: {int32, int64} = int32")
                         .SetShapeFn(ReductionShape)
                         .Doc("Sum of `input` over the axes in `reduction_indices`; reduced "
                              "dims are dropped, or kept as 1 with keep_dims."));
  registry->Register(OpDefBuilder("Cast")
                         .Input("x: SrcT")
                         .Output("y: DstT")
                         .Attr("SrcT: type")
                         .Attr("DstT: type")
                         .Attr("Truncate: bool = false")
                         .SetShapeFn(UnchangedShape)
                         .Doc("x converted to DstT. Floats to integers round toward zero and "
                              "saturate (NaN becomes 0); anything to bool is x != 0; Truncate "
                              "rounds narrowing float conversions toward zero."));
}

}  // namespace weir
