// The random family. Every op is stateful: a node draws fresh numbers on
// each run, so it is never merged by CSE or folded into a constant.
//
// Seeds follow TensorFlow: with `seed` and `seed2` both 0 each kernel
// instance seeds itself nondeterministically; otherwise the pair fixes the
// sequence, which is the same on every run and continues across steps (the
// second run of a node gives the numbers after the first run's).
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor.h"
#include "weir/ops/all_ops.h"
#include "weir/ops/shape_fns.h"

namespace weir {
namespace {

// The output's dims are the values of input 0, an int32 or int64 vector.
Status ShapeFromShapeInput(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, ShapeVectorInput(c, 0));
  if (!shape) return Status::OK();
  std::vector<int64_t> dims = std::move(*shape);
  for (int64_t dim : dims) {
    if (dim < 0) {
      return errors::InvalidArgument("the shape input [", StrJoin(dims, ","),
                                     "] has a negative dimension");
    }
  }
  c->set_output(0, PartialShape(std::move(dims)));
  return Status::OK();
}

// Like ShapeFromShapeInput; inputs 1 and 2 (minval, maxval) are scalars.
Status RandomUniformIntShape(InferenceContext* c) {
  for (int i : {1, 2}) {
    const PartialShape& bound = c->input(i);
    if (bound.known_rank() && bound.rank() != 0) {
      return errors::InvalidArgument(i == 1 ? "minval" : "maxval",
                                     " must be a scalar but has shape ", bound);
    }
  }
  return ShapeFromShapeInput(c);
}

// logits [batch, classes] and scalar num_samples give [batch, num_samples].
Status MultinomialShape(InferenceContext* c) {
  PartialShape logits;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 2, &logits));
  const PartialShape& samples_shape = c->input(1);
  if (samples_shape.known_rank() && samples_shape.rank() != 0) {
    return errors::InvalidArgument("num_samples must be a scalar but has shape ",
                                   samples_shape);
  }
  int64_t num_samples = PartialShape::kUnknown;
  if (const Tensor* samples = c->input_tensor(1); samples != nullptr) {
    num_samples = samples->scalar<int32_t>();
    if (num_samples < 0) {
      return errors::InvalidArgument("num_samples must be non-negative but is ", num_samples);
    }
  }
  c->set_output(0, PartialShape({logits.known_rank() ? logits.dim(0) : PartialShape::kUnknown,
                                 num_samples}));
  return Status::OK();
}

void RegisterShapedRandomOp(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Input("shape: T")
                         .Output("output: dtype")
                         .Attr("seed: int = 0")
                         .Attr("seed2: int = 0")
                         .Attr("dtype: {half, bfloat16, float, double}")
                         .Attr("T: {int32, int64}")
                         .SetIsStateful()
                         .SetShapeFn(ShapeFromShapeInput)
                         .Doc(doc));
}

}  // namespace

void RegisterRandomOps(OpRegistry* registry) {
  RegisterShapedRandomOp(registry, "RandomUniform",
                         "Values drawn uniformly from [0, 1), in a tensor of dims `shape`.");
  RegisterShapedRandomOp(registry, "RandomStandardNormal",
                         "Values drawn from the normal distribution of mean 0 and standard "
                         "deviation 1, in a tensor of dims `shape`.");
  RegisterShapedRandomOp(registry, "TruncatedNormal",
                         "Values drawn from the standard normal distribution, redrawing any "
                         "more than 2 standard deviations from 0, in a tensor of dims `shape`.");
  registry->Register(OpDefBuilder("RandomUniformInt")
                         .Input("shape: T")
                         .Input("minval: Tout")
                         .Input("maxval: Tout")
                         .Output("output: Tout")
                         .Attr("seed: int = 0")
                         .Attr("seed2: int = 0")
                         .Attr("Tout: {int32, int64}")
                         .Attr("T: {int32, int64}")
                         .SetIsStateful()
                         .SetShapeFn(RandomUniformIntShape)
                         .Doc("Integers drawn uniformly from [minval, maxval), in a tensor of "
                              "dims `shape`; minval < maxval unless the shape is empty."));
  registry->Register(OpDefBuilder("RandomShuffle")
                         .Input("value: T")
                         .Output("output: T")
                         .Attr("seed: int = 0")
                         .Attr("seed2: int = 0")
                         .Attr("T: type")
                         .SetIsStateful()
                         .SetShapeFn(UnchangedShape)
                         .Doc("`value` with its slices along dimension 0 in a uniformly random "
                              "order."));
  registry->Register(OpDefBuilder("Multinomial")
                         .Input("logits: T")
                         .Input("num_samples: int32")
                         .Output("output: output_dtype")
                         .Attr("seed: int = 0")
                         .Attr("seed2: int = 0")
                         .Attr("T: realnumbertype")
                         .Attr("output_dtype: {int32, int64} = int64")
                         .SetIsStateful()
                         .SetShapeFn(MultinomialShape)
                         .Doc("For each row of `logits` [batch, classes] (unnormalized log "
                              "probabilities), `num_samples` classes drawn independently: "
                              "[batch, num_samples]. Classes with non-finite logits are never "
                              "drawn; a row with no finite logit is an error."));
}

}  // namespace weir
