// The recurrent family: TensorFlow's fused LSTM cell, LSTMBlockCell, and its
// gradient kernel LSTMBlockCellGrad, with TensorFlow's exact declarations
// (names, attrs, defaults and type sets), so graphs that use them import.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

constexpr int64_t kUnknown = PartialShape::kUnknown;

// The batch and cell sizes of an LSTM cell's inputs x [batch, input],
// cs_prev and h_prev [batch, cell], w [input + cell, 4 * cell], wci, wcf,
// wco [cell] (any vector without use_peephole) and b [4 * cell], each
// merged over every input that has it.
struct CellSizes {
  int64_t batch = kUnknown;
  int64_t cell = kUnknown;
};

Status MergeInto(InferenceContext* c, int64_t dim, int64_t* merged, const char* what) {
  if (!InferenceContext::MergeDim(*merged, dim, merged).ok()) {
    return errors::InvalidArgument("LSTM cell: ", what, " disagree; input shapes ",
                                   c->InputShapesString());
  }
  return Status::OK();
}

StatusOr<CellSizes> InferCellSizes(InferenceContext* c) {
  PartialShape x, cs_prev, h_prev, w, b;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 2, &x));
  WEIR_RETURN_IF_ERROR(c->WithRank(1, 2, &cs_prev));
  WEIR_RETURN_IF_ERROR(c->WithRank(2, 2, &h_prev));
  WEIR_RETURN_IF_ERROR(c->WithRank(3, 2, &w));
  WEIR_RETURN_IF_ERROR(c->WithRank(7, 1, &b));
  CellSizes sizes;
  for (const PartialShape* s : {&x, &cs_prev, &h_prev}) {
    WEIR_RETURN_IF_ERROR(MergeInto(c, s->dim(0), &sizes.batch, "batch sizes (dim 0)"));
  }
  WEIR_RETURN_IF_ERROR(MergeInto(c, cs_prev.dim(1), &sizes.cell, "cell sizes"));
  WEIR_RETURN_IF_ERROR(MergeInto(c, h_prev.dim(1), &sizes.cell, "cell sizes"));
  // Without use_peephole the peephole weights are unread (TensorFlow
  // accepts empty ones).
  bool use_peephole = false;
  WEIR_RETURN_IF_ERROR(c->GetAttr("use_peephole", &use_peephole));
  for (int peephole = 4; peephole <= 6; ++peephole) {
    PartialShape p;
    WEIR_RETURN_IF_ERROR(c->WithRank(peephole, 1, &p));
    if (use_peephole) WEIR_RETURN_IF_ERROR(MergeInto(c, p.dim(0), &sizes.cell, "cell sizes"));
  }
  for (int64_t gates : {w.dim(1), b.dim(0)}) {
    if (gates != kUnknown && gates % 4 != 0) {
      return errors::InvalidArgument("LSTM cell: w's columns and b must be 4 * cell (gates i, ci, ",
                                     "f, o); input shapes ", c->InputShapesString());
    }
    WEIR_RETURN_IF_ERROR(
        MergeInto(c, gates == kUnknown ? kUnknown : gates / 4, &sizes.cell, "cell sizes"));
  }
  if (x.dim(1) != kUnknown && sizes.cell != kUnknown) {
    int64_t rows;
    WEIR_RETURN_IF_ERROR(InferenceContext::AddDims(x.dim(1), sizes.cell, "input + cell", &rows));
    WEIR_RETURN_IF_ERROR(MergeInto(c, w.dim(0), &rows, "w's rows and input + cell"));
  }
  return sizes;
}

Status LSTMBlockCellShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(CellSizes sizes, InferCellSizes(c));
  for (int i = 0; i < 7; ++i) c->set_output(i, PartialShape({sizes.batch, sizes.cell}));
  return Status::OK();
}

Status LSTMBlockCellGradShape(InferenceContext* c) {
  WEIR_ASSIGN_OR_RETURN(CellSizes sizes, InferCellSizes(c));
  // i, cs, f, o, ci, co, cs_grad, h_grad: [batch, cell] each.
  for (int input = 8; input < 16; ++input) {
    PartialShape s;
    WEIR_RETURN_IF_ERROR(c->WithRank(input, 2, &s));
    WEIR_RETURN_IF_ERROR(MergeInto(c, s.dim(0), &sizes.batch, "batch sizes (dim 0)"));
    WEIR_RETURN_IF_ERROR(MergeInto(c, s.dim(1), &sizes.cell, "cell sizes"));
  }
  int64_t gates = kUnknown;
  if (sizes.cell != kUnknown) {
    WEIR_RETURN_IF_ERROR(InferenceContext::MultiplyDims(sizes.cell, 4, "4 * cell", &gates));
  }
  c->set_output(0, PartialShape({sizes.batch, sizes.cell}));
  c->set_output(1, PartialShape({sizes.batch, gates}));
  for (int i = 2; i < 5; ++i) c->set_output(i, PartialShape({sizes.cell}));
  return Status::OK();
}

OpDefBuilder CellInputs(OpDefBuilder builder) {
  builder.Input("x: T")
      .Input("cs_prev: T")
      .Input("h_prev: T")
      .Input("w: T")
      .Input("wci: T")
      .Input("wcf: T")
      .Input("wco: T")
      .Input("b: T");
  return builder;
}

}  // namespace

void RegisterRnnOps(OpRegistry* registry) {
  registry->Register(
      CellInputs(OpDefBuilder("LSTMBlockCell"))
          .Output("i: T")
          .Output("cs: T")
          .Output("f: T")
          .Output("o: T")
          .Output("ci: T")
          .Output("co: T")
          .Output("h: T")
          .Attr("forget_bias: float = 1.0")
          .Attr("cell_clip: float = 3.0")
          .Attr("use_peephole: bool = false")
          .Attr("T: {half, float}")
          .SetShapeFn(LSTMBlockCellShape)
          .Doc("One step of an LSTM: [i, ci, f, o] = [x, h_prev] * w + b (TensorFlow's gate "
               "order), i = sigmoid(i + wci * cs_prev), ci = tanh(ci), f = sigmoid(f + "
               "forget_bias + wcf * cs_prev), cs = clip(ci * i + cs_prev * f, cell_clip), "
               "o = sigmoid(o + wco * cs), co = tanh(cs), h = co * o; the peephole terms only "
               "with use_peephole, clipping only when cell_clip > 0."));
  registry->Register(CellInputs(OpDefBuilder("LSTMBlockCellGrad"))
                         .Input("i: T")
                         .Input("cs: T")
                         .Input("f: T")
                         .Input("o: T")
                         .Input("ci: T")
                         .Input("co: T")
                         .Input("cs_grad: T")
                         .Input("h_grad: T")
                         .Output("cs_prev_grad: T")
                         .Output("dicfo: T")
                         .Output("wci_grad: T")
                         .Output("wcf_grad: T")
                         .Output("wco_grad: T")
                         .Attr("use_peephole: bool")
                         .Attr("T: {half, float}")
                         .SetShapeFn(LSTMBlockCellGradShape)
                         .Doc("The gradient of LSTMBlockCell from the gradients of its cs and h "
                              "outputs: cs_prev's, the gate pre-activations' dicfo [batch, 4 * "
                              "cell] (from which x, h_prev, w and b get theirs by products), and "
                              "the peephole weights' (zeros without use_peephole). Clipping of "
                              "cs is not differentiated, as in TensorFlow."));
}

}  // namespace weir
