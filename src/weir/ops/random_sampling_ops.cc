// Samplers of parameterized distributions: RandomGamma (with
// RandomGammaGrad, the derivative of a sample with respect to alpha, for
// reparameterized gradients) and RandomPoisson[V2]. Outputs have dims
// shape + the parameter's dims. TensorFlow's declarations; the kernels are
// kernels/random_sampling_kernels.cc.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// shape's values followed by input 1's dims.
Status SampleShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, ShapeVectorInput(c, 0));
  const PartialShape& parameter = c->input(1);
  if (!shape || !parameter.known_rank()) return Status::OK();
  std::vector<int64_t> dims = std::move(*shape);
  for (int64_t dim : dims) {
    if (dim < 0) {
      return errors::InvalidArgument("the shape input [", StrJoin(dims, ","),
                                     "] has a negative dimension");
    }
  }
  dims.insert(dims.end(), parameter.dim_sizes().begin(), parameter.dim_sizes().end());
  WEIR_ASSIGN_OR_RETURN(PartialShape out, PartialShape::FromDims(std::move(dims)));
  c->set_output(0, std::move(out));
  return Status::OK();
}

}  // namespace

void RegisterRandomSamplingOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("RandomGamma")
                         .Input("shape: S")
                         .Input("alpha: T")
                         .Output("output: T")
                         .Attr("seed: int = 0")
                         .Attr("seed2: int = 0")
                         .Attr("S: {int32, int64}")
                         .Attr("T: {half, float, double}")
                         .SetIsStateful()
                         .SetShapeFn(SampleShape)
                         .Doc("Gamma(alpha, 1) samples, `shape` of them per alpha; NaN for "
                              "alpha <= 0."));
  registry->Register(OpDefBuilder("RandomGammaGrad")
                         .Input("alpha: T")
                         .Input("sample: T")
                         .Output("output: T")
                         .Attr("T: {float, double}")
                         .SetShapeFn(BroadcastBinaryOpShape)
                         .Doc("d sample / d alpha of Gamma(alpha, 1) samples (implicit "
                              "reparameterization)."));
  registry->Register(OpDefBuilder("RandomPoisson")
                         .Input("shape: S")
                         .Input("rate: dtype")
                         .Output("output: dtype")
                         .Attr("seed: int = 0")
                         .Attr("seed2: int = 0")
                         .Attr("S: {int32, int64}")
                         .Attr("dtype: {half, float, double}")
                         .SetIsStateful()
                         .SetShapeFn(SampleShape)
                         .Doc("Poisson(rate) samples, `shape` of them per rate (deprecated "
                              "form of RandomPoissonV2)."));
  registry->Register(OpDefBuilder("RandomPoissonV2")
                         .Input("shape: S")
                         .Input("rate: R")
                         .Output("output: dtype")
                         .Attr("seed: int = 0")
                         .Attr("seed2: int = 0")
                         .Attr("S: {int32, int64}")
                         .Attr("R: {half, float, double, int32, int64} = double")
                         .Attr("dtype: {half, float, double, int32, int64} = int64")
                         .SetIsStateful()
                         .SetShapeFn(SampleShape)
                         .Doc("Poisson(rate) samples, `shape` of them per rate; a negative or "
                              "NaN rate gives NaN (an error for integer outputs)."));
}

}  // namespace weir
