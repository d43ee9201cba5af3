// The math family: elementwise arithmetic with NumPy broadcasting, matrix
// multiplication, reductions and dtype conversion. Type sets follow
// TensorFlow's declarations so imported graphs validate; which of those types
// have CPU kernels is up to kernels/.
#include "weir/framework/op_def.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

constexpr char kBinaryTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, "
    "int64, complex64, complex128}";

void RegisterBinaryOp(OpRegistry* registry, const char* name, const char* type_spec,
                      const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("x: T")
                         .Input("y: T")
                         .Output("z: T")
                         .Attr(type_spec)
                         .SetShapeFn(BroadcastBinaryOpShape)
                         .Doc(doc));
}

}  // namespace

void RegisterMathOps(OpRegistry* registry) {
  RegisterBinaryOp(registry, "Add",
                   "T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, "
                   "complex64, complex128, string}",
                   "x + y, with NumPy broadcasting.");
  RegisterBinaryOp(registry, "AddV2", kBinaryTypes, "x + y, with NumPy broadcasting.");
  RegisterBinaryOp(registry, "Sub", kBinaryTypes, "x - y, with NumPy broadcasting.");
  RegisterBinaryOp(registry, "Mul", kBinaryTypes, "x * y, with NumPy broadcasting.");
  RegisterBinaryOp(registry, "RealDiv", kBinaryTypes,
                   "x / y, with NumPy broadcasting; integers divide toward zero and "
                   "dividing by zero is an error.");

  registry->Register(OpDefBuilder("Neg")
                         .Input("x: T")
                         .Output("y: T")
                         .Attr("T: {bfloat16, half, float, double, int8, int16, int32, int64, "
                               "complex64, complex128}")
                         .SetShapeFn(UnchangedShape)
                         .Doc("-x, elementwise (integers wrap)."));
  registry->Register(OpDefBuilder("Relu")
                         .Input("features: T")
                         .Output("activations: T")
                         .Attr("T: realnumbertype")
                         .SetShapeFn(UnchangedShape)
                         .Doc("max(features, 0), elementwise; NaN stays NaN."));
  registry->Register(OpDefBuilder("MatMul")
                         .Input("a: T")
                         .Input("b: T")
                         .Output("product: T")
                         .Attr("transpose_a: bool = false")
                         .Attr("transpose_b: bool = false")
                         .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, "
                               "complex128}")
                         .SetShapeFn(MatMulShape)
                         .Doc("The matrix product op(a) * op(b), op transposing when asked."));
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
