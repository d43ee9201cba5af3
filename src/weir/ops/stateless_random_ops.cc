// TensorFlow 2's stateless random ops (tf.random.stateless_*): a seed
// becomes a Philox key and counter (StatelessRandomGetKeyCounter[Alg]), and
// the V2 samplers draw from (key, counter, alg) alone, so equal inputs give
// equal outputs everywhere. TensorFlow's declarations; the kernels
// (kernels/stateless_random_kernels.cc) give TensorFlow's exact streams.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// The output's dims are the values of input 0; key is [1], counter [2]
// (Philox), alg a scalar.
Status StatelessV2Shape(InferenceContext* c) {
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 1, &unused).WithContext("key"));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 1, &unused).WithContext("counter"));
  WEIR_RETURN_IF_ERROR(c->WithRank(3, 0, &unused).WithContext("alg"));
  for (int i = 4; i < c->num_inputs(); ++i) {
    WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &unused).WithContext("minval and maxval"));
  }
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, ShapeVectorInput(c, 0));
  if (!shape) return Status::OK();
  for (int64_t dim : *shape) {
    if (dim < 0) {
      return errors::InvalidArgument("the shape input [", StrJoin(*shape, ","),
                                     "] has a negative dimension");
    }
  }
  c->set_output(0, PartialShape(std::move(*shape)));
  return Status::OK();
}

Status KeyCounterShape(InferenceContext* c) {
  PartialShape seed;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 1, &seed).WithContext("seed"));
  if (seed.dim(0) != PartialShape::kUnknown && seed.dim(0) != 2) {
    return errors::InvalidArgument("seed must have 2 elements, not ", seed.dim(0));
  }
  c->set_output(0, PartialShape({1}));
  c->set_output(1, PartialShape({2}));
  if (c->num_outputs() > 2) c->set_output(2, PartialShape({}));
  return Status::OK();
}

}  // namespace

void RegisterStatelessRandomOps(OpRegistry* registry) {
  registry->Register(OpDefBuilder("StatelessRandomGetKeyCounter")
                         .Input("seed: Tseed")
                         .Output("key: uint64")
                         .Output("counter: uint64")
                         .Attr("Tseed: {int32, int64} = int64")
                         .SetShapeFn(KeyCounterShape)
                         .Doc("The Philox key and counter a [2] seed stands for."));
  registry->Register(OpDefBuilder("StatelessRandomGetKeyCounterAlg")
                         .Input("seed: Tseed")
                         .Output("key: uint64")
                         .Output("counter: uint64")
                         .Output("alg: int32")
                         .Attr("Tseed: {int32, int64} = int64")
                         .SetShapeFn(KeyCounterShape)
                         .Doc("StatelessRandomGetKeyCounter, and the algorithm (1, Philox)."));
  registry->Register(OpDefBuilder("StatelessRandomGetAlg")
                         .Output("alg: int32")
                         .SetIsStateful()
                         .SetShapeFn([](InferenceContext* c) {
                           c->set_output(0, PartialShape({}));
                           return Status::OK();
                         })
                         .Doc("The device's default stateless algorithm: 1 (Philox)."));
  constexpr char kFloatDtypes[] = "dtype: {half, bfloat16, float, double} = float";
  for (const auto& [name, doc] : std::initializer_list<std::pair<const char*, const char*>>{
           {"StatelessRandomUniformV2", "Uniform values in [0, 1) from (key, counter, alg)."},
           {"StatelessRandomNormalV2", "Standard normal values from (key, counter, alg)."},
       }) {
    registry->Register(OpDefBuilder(name)
                           .Input("shape: Tshape")
                           .Input("key: uint64")
                           .Input("counter: uint64")
                           .Input("alg: int32")
                           .Output("output: dtype")
                           .Attr(kFloatDtypes)
                           .Attr("Tshape: {int32, int64} = int32")
                           .SetShapeFn(StatelessV2Shape)
                           .Doc(doc));
  }
  registry->Register(OpDefBuilder("StatelessRandomUniformIntV2")
                         .Input("shape: Tshape")
                         .Input("key: uint64")
                         .Input("counter: uint64")
                         .Input("alg: int32")
                         .Input("minval: dtype")
                         .Input("maxval: dtype")
                         .Output("output: dtype")
                         .Attr("dtype: {int32, int64, uint32, uint64}")
                         .Attr("Tshape: {int32, int64} = int32")
                         .SetShapeFn(StatelessV2Shape)
                         .Doc("Integers in [minval, maxval) from (key, counter, alg)."));
  registry->Register(OpDefBuilder("StatelessRandomUniformFullIntV2")
                         .Input("shape: Tshape")
                         .Input("key: uint64")
                         .Input("counter: uint64")
                         .Input("alg: int32")
                         .Output("output: dtype")
                         .Attr("dtype: {int32, int64, uint32, uint64} = uint64")
                         .Attr("Tshape: {int32, int64} = int32")
                         .SetShapeFn(StatelessV2Shape)
                         .Doc("Integers over the dtype's whole range from (key, counter, alg)."));
}

}  // namespace weir
