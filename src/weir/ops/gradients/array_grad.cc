// Gradients of the array family. Most array ops move elements without
// arithmetic, so their gradients move the gradient back: the inverse
// permutation, a split of a concatenation, padding of a slice. Ops that
// select elements in ways with no cheap inverse (StridedSlice, MirrorPad,
// Tile, GatherV2 on any axis) share one rule, SelectionGrad: apply the op to
// the element positions of x and scatter-add g to the positions selected.
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

using Grads = std::vector<Output>;

// g, or zeros shaped like `output` when no gradient reached it: list ops
// (Split, Unpack, DynamicPartition) need a gradient for every piece.
Output GradOrZeros(const Scope& scope, const Output& g, const Output& output) {
  return g.valid() ? g : ops::ZerosLike(scope, output);
}

InputList AllGradsOrZeros(const Scope& scope, const Operation& op, const Grads& g) {
  InputList result;
  for (int i = 0; i < op.num_outputs(); ++i) result.push_back(GradOrZeros(scope, g[i], op.output(i)));
  return result;
}

Output AsInt32(const Scope& scope, const Output& t) {
  return t.dtype() == DT_INT32 ? t : ops::Cast(scope, t, DT_INT32);
}

// `axis` (possibly negative) wrapped into [0, rank of x).
Output WrapAxis(const Scope& scope, const Output& axis, const Output& x) {
  Output rank = ops::Rank(scope, x);
  return ops::FloorMod(scope, ops::AddV2(scope, AsInt32(scope, axis), rank), rank);
}

Status IdentityGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {g[0]};
  return Status::OK();
}

Status IdentityNGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = g;  // an output with no gradient leaves its input without one
  return Status::OK();
}

Status PreventGradientGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  std::string message;
  (void)GetAttr(op.node()->def().attrs, "message", &message);
  return errors::InvalidArgument("gradient requested through PreventGradient node '", op.name(),
                                 "'", message.empty() ? "" : ": ", message);
}

// Reshape, ExpandDims, Squeeze: the same elements in another shape.
Status ReshapeLikeGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  grads->assign(op.node()->num_inputs(), Output());
  (*grads)[0] = ops::Reshape(scope, g[0], ShapeOf(scope, ForwardInput(op, 0)));
  return scope.status();
}

Status TransposeGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output perm = AsInt32(scope, ForwardInput(op, 1));
  // inverse[perm[i]] = i.
  Output inverse = ops::DynamicStitch(scope, {perm}, {ops::Range(scope, 0, ops::Size(scope, perm), 1)});
  *grads = {ops::Transpose(scope, g[0], inverse), Output()};
  return scope.status();
}

Status ReverseV2Grad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {ops::ReverseV2(scope, g[0], ForwardInput(op, 1)), Output()};
  return scope.status();
}

Status ReverseGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {AddOp(scope, "Reverse", {g[0], ForwardInput(op, 1)}).output(0), Output()};
  return scope.status();
}

// The reversal is its own inverse: reverse the gradient the same way.
Status ReverseSequenceGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {AddOp(scope, "ReverseSequence", {g[0], ForwardInput(op, 1)},
                  ForwardAttrs(op, {"seq_dim", "batch_dim"}))
                .output(0),
            Output()};
  return scope.status();
}

// The band of the gradient: entries outside the band did not reach y.
Status MatrixBandPartGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {
      AddOp(scope, "MatrixBandPart", {g[0], ForwardInput(op, 1), ForwardInput(op, 2)}).output(0),
      Output(), Output()};
  return scope.status();
}

// SpaceToBatchND and BatchToSpaceND are each other's inverse (paddings are
// the crops that remove them).
Status SpaceToBatchNDGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {
      AddOp(scope, "BatchToSpaceND", {g[0], ForwardInput(op, 1), ForwardInput(op, 2)}).output(0),
      Output(), Output()};
  return scope.status();
}

Status BatchToSpaceNDGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {
      AddOp(scope, "SpaceToBatchND", {g[0], ForwardInput(op, 1), ForwardInput(op, 2)}).output(0),
      Output(), Output()};
  return scope.status();
}

Status ConcatV2Grad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  const int n = op.node()->num_inputs() - 1;
  Output axis = WrapAxis(scope, ForwardInput(op, n), ForwardInput(op, 0));
  // Each input's extent along the axis, then one SplitV of g by them.
  InputList sizes;
  for (int i = 0; i < n; ++i) {
    sizes.push_back(ops::Slice(scope, ops::Shape(scope, ForwardInput(op, i)),
                               ops::Reshape(scope, axis, {1}), {1}));
  }
  Operation split = ops::SplitV(scope, g[0], ops::ConcatV2(scope, sizes, 0), axis, n);
  grads->clear();
  for (int i = 0; i < n; ++i) grads->push_back(split.output(i));
  grads->push_back(Output());
  return scope.status();
}

Status SplitGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output axis = ForwardInput(op, 0);
  *grads = {Output(), ops::ConcatV2(scope, AllGradsOrZeros(scope, op, g), axis)};
  return scope.status();
}

Status SplitVGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  if (op.num_outputs() == 1) {
    *grads = {g[0], Output(), Output()};
    return Status::OK();
  }
  *grads = {ops::ConcatV2(scope, AllGradsOrZeros(scope, op, g), ForwardInput(op, 2)), Output(),
            Output()};
  return scope.status();
}

Status PackGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  const int n = op.node()->num_inputs();
  Operation pieces = ops::Unpack(scope, g[0], n, ForwardAttrs(op, {"axis"}));
  grads->clear();
  for (int i = 0; i < n; ++i) grads->push_back(pieces.output(i));
  return scope.status();
}

Status UnpackGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {ops::Pack(scope, AllGradsOrZeros(scope, op, g), ForwardAttrs(op, {"axis"}))};
  return scope.status();
}

Status SliceGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  // Pad g back to the input's shape: begin before, the rest after.
  Output x = ForwardInput(op, 0);
  Output before = AsInt32(scope, ForwardInput(op, 1));
  Output after = ops::Sub(scope, ops::Sub(scope, ShapeOf(scope, x), before),
                          ops::Shape(scope, op.output(0)));
  Output paddings = ops::Pack(scope, {before, after}, {{"axis", 1}});
  *grads = {ops::Pad(scope, g[0], paddings), Output(), Output()};
  return scope.status();
}

Status PadGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  // The input sits at paddings[:, 0] inside the output.
  Output x = ForwardInput(op, 0);
  Output paddings = AsInt32(scope, ForwardInput(op, 1));
  Output begin = ops::Reshape(scope, ops::Slice(scope, paddings, {0, 0}, {-1, 1}), {-1});
  Output gx = ops::Slice(scope, g[0], begin, ShapeOf(scope, x));
  grads->assign(op.node()->num_inputs(), Output());
  (*grads)[0] = gx;
  if (op.node()->num_inputs() == 3) {
    // PadV2's constant fills the padding: its gradient is g's sum there.
    Output all = ops::Range(scope, 0, ops::Rank(scope, g[0]), 1);
    (*grads)[2] = ops::Sub(scope, ops::Sum(scope, g[0], all), ops::Sum(scope, gx, all));
  }
  return scope.status();
}

Status BroadcastToGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {SumToShapeOf(scope, g[0], ForwardInput(op, 0)), Output()};
  return scope.status();
}

Status FillGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {Output(), ops::Sum(scope, g[0], ops::Range(scope, 0, ops::Rank(scope, g[0]), 1))};
  return scope.status();
}

// For an op that outputs elements of its input 0 (each output element a
// copy of one input element, any input element used any number of times):
// run the op on x's flat positions instead of x, and add each element of g
// into the position it came from.
Status SelectionGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output x = ForwardInput(op, 0);
  Output shape = ShapeOf(scope, x);
  Output size = ops::Size(scope, x);
  Output positions = ops::Reshape(scope, ops::Range(scope, 0, size, 1), shape);
  std::vector<OpArg> inputs = {positions};
  for (int i = 1; i < op.node()->num_inputs(); ++i) inputs.push_back(ForwardInput(op, i));
  AttrMap attrs = op.node()->def().attrs;
  attrs.erase("T");  // the positions are int32; AddOp infers the type
  attrs.erase("Tparams");
  Output selected = AddOp(scope, op.node()->type_string(), inputs, attrs).output(0);
  Output flat = ops::ScatterNd(scope, ops::Reshape(scope, selected, {-1, 1}),
                               ops::Reshape(scope, g[0], {-1}), ops::Reshape(scope, size, {1}));
  grads->assign(op.node()->num_inputs(), Output());
  (*grads)[0] = ops::Reshape(scope, flat, shape);
  return scope.status();
}

Status GatherNdGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  Output params = ForwardInput(op, 0), indices = ForwardInput(op, 1);
  Output shape = ShapeOf(scope, params);
  if (indices.dtype() != DT_INT32) shape = ops::Cast(scope, shape, indices.dtype());
  *grads = {ops::ScatterNd(scope, indices, g[0], shape), Output()};
  return scope.status();
}

Status ScatterNdGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  *grads = {Output(), ops::GatherNd(scope, g[0], ForwardInput(op, 0)), Output()};
  return scope.status();
}

Status DynamicPartitionGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  // Partition the element (row) numbers as data was, then stitch the
  // pieces' gradients back by them.
  Output data = ForwardInput(op, 0), partitions = ForwardInput(op, 1);
  Output numbers = ops::Reshape(scope, ops::Range(scope, 0, ops::Size(scope, partitions), 1),
                                ops::Shape(scope, partitions));
  int64_t n = op.num_outputs();
  Operation parts = ops::DynamicPartition(scope, numbers, partitions, n);
  InputList indices, pieces;
  for (int i = 0; i < n; ++i) {
    indices.push_back(parts.output(i));
    pieces.push_back(GradOrZeros(scope, g[i], op.output(i)));
  }
  Output stitched = ops::DynamicStitch(scope, indices, pieces);
  *grads = {ops::Reshape(scope, stitched, ShapeOf(scope, data)), Output()};
  return scope.status();
}

Status DynamicStitchGrad(const Scope& scope, const Operation& op, const Grads& g, Grads* grads) {
  // merged[indices[m][i]] = data[m][i], later values winning: a data
  // element gets the gradient of its row only where it won. Stitch global
  // element numbers the same way to learn who won each row.
  const int n = op.node()->num_inputs() / 2;
  InputList indices, numbers;
  Output offset = ops::Const(scope, 0);
  std::vector<Output> own;
  for (int m = 0; m < n; ++m) {
    Output idx = ForwardInput(op, m);
    Output count = ops::Size(scope, idx);
    Output mine = ops::Reshape(scope, ops::Range(scope, offset, ops::AddV2(scope, offset, count), 1),
                               ops::Shape(scope, idx));
    offset = ops::AddV2(scope, offset, count);
    indices.push_back(idx);
    numbers.push_back(mine);
    own.push_back(mine);
  }
  Output winner = ops::DynamicStitch(scope, indices, numbers);
  grads->assign(2 * n, Output());
  Output rest_rank = ops::Sub(scope, ops::Rank(scope, g[0]), 1);
  for (int m = 0; m < n; ++m) {
    Output idx = ForwardInput(op, m);
    Output won = ops::Equal(scope, ops::GatherV2(scope, winner, idx, 0), own[m]);
    Output gathered = ops::GatherV2(scope, g[0], idx, 0);
    // The mask [indices shape] with ones appended for the row dims.
    Output mask_shape = ops::ConcatV2(
        scope, {ops::Shape(scope, idx), ops::Fill(scope, ops::Reshape(scope, rest_rank, {1}), 1)}, 0);
    Output mask = ops::Reshape(scope, ops::Cast(scope, won, gathered.dtype()), mask_shape);
    (*grads)[n + m] = ops::Mul(scope, gathered, mask);
  }
  return scope.status();
}

// GatherV2 on axis 0 (no batch dims) picks rows of params: its gradient
// is those rows of g, kept sparse (an embedding's gradient touches only the
// looked-up rows). Other axes take the dense SelectionGrad.
Status GatherV2SparseGrad(const Scope& scope, const Operation& op, const Grads& g,
                          std::vector<IndexedSlices>* grads) {
  int64_t batch_dims = 0;
  (void)GetAttr(op.node()->def().attrs, "batch_dims", &batch_dims);
  std::optional<std::vector<int64_t>> axis = ConstantInts(ForwardInput(op, 2));
  if (batch_dims != 0 || !axis || axis->size() != 1 || (*axis)[0] != 0) return Status::OK();
  Output params = ForwardInput(op, 0);
  *grads = {GatheredRows(scope, g[0], ForwardInput(op, 1), ShapeOf(scope, params)), {}, {}};
  return scope.status();
}

}  // namespace

void RegisterArrayGradients(GradientRegistry* registry) {
  registry->Register("Identity", IdentityGrad);
  registry->Register("PlaceholderWithDefault", IdentityGrad);
  registry->Register("EnsureShape", IdentityGrad);
  registry->Register("IdentityN", IdentityNGrad);
  registry->Register("PreventGradient", PreventGradientGrad);
  for (const char* op : {"Reshape", "ExpandDims", "Squeeze"}) registry->Register(op, ReshapeLikeGrad);
  registry->Register("Transpose", TransposeGrad);
  registry->Register("ReverseV2", ReverseV2Grad);
  registry->Register("Reverse", ReverseGrad);
  registry->Register("ReverseSequence", ReverseSequenceGrad);
  registry->Register("SpaceToBatchND", SpaceToBatchNDGrad);
  registry->Register("MatrixBandPart", MatrixBandPartGrad);
  registry->Register("BatchToSpaceND", BatchToSpaceNDGrad);
  registry->Register("ConcatV2", ConcatV2Grad);
  registry->RegisterNoGradient("ConcatOffset");
  registry->RegisterNoGradient("InvertPermutation");
  registry->Register("Split", SplitGrad);
  registry->Register("SplitV", SplitVGrad);
  registry->Register("Pack", PackGrad);
  registry->Register("Unpack", UnpackGrad);
  registry->Register("Slice", SliceGrad);
  registry->Register("Pad", PadGrad);
  registry->Register("PadV2", PadGrad);
  registry->Register("BroadcastTo", BroadcastToGrad);
  registry->Register("Fill", FillGrad);
  for (const char* op : {"StridedSlice", "MirrorPad", "Tile", "GatherV2"}) {
    registry->Register(op, SelectionGrad);
  }
  registry->RegisterSparse("GatherV2", GatherV2SparseGrad);
  registry->Register("GatherNd", GatherNdGrad);
  registry->Register("ScatterNd", ScatterNdGrad);
  registry->Register("DynamicPartition", DynamicPartitionGrad);
  registry->Register("DynamicStitch", DynamicStitchGrad);
  // Shapes, indices, constants, sources, and values not differentiable in
  // their inputs (ZerosLike, OnesLike) or by design (StopGradient).
  for (const char* op :
       {"Const", "Placeholder", "Shape", "ShapeN", "Size", "Rank", "_Arg", "VarHandleOp",
        "VarIsInitializedOp", "StopGradient", "ZerosLike", "OnesLike", "Range", "LinSpace",
        "BroadcastArgs", "OneHot", "Where", "Unique"}) {
    registry->RegisterNoGradient(op);
  }
}

}  // namespace weir
