// The io family: saving and restoring tensors in checkpoints (TensorFlow's
// V2 layout, framework/tensor_bundle.h), the file names and the merge of a
// sharded save, and StringJoin (how a save graph builds its temporary
// prefix), with TensorFlow's op signatures so imported save/restore graphs
// run unchanged.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/framework/tensor_slice.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

// prefix is a scalar; tensor_names and shape_and_slices are vectors of one
// entry per saved or restored tensor.
Status CheckNamesAndSlices(InferenceContext* c, int64_t num_tensors) {
  PartialShape unused;
  WEIR_RETURN_IF_ERROR(c->WithRank(0, 0, &unused));
  for (int input : {1, 2}) {
    PartialShape names;
    WEIR_RETURN_IF_ERROR(c->WithRank(input, 1, &names));
    int64_t merged;
    Status status = InferenceContext::MergeDim(names.dim(0), num_tensors, &merged);
    if (!status.ok()) {
      return errors::InvalidArgument("input ", input, " has shape ", names, " but there are ",
                                     num_tensors, " tensors");
    }
  }
  return Status::OK();
}

Status SaveV2Shape(InferenceContext* c) { return CheckNamesAndSlices(c, c->num_inputs() - 3); }

// Outputs have the shape their slice spec gives when shape_and_slices is a
// known constant; whole tensors (empty specs) have shapes known only to the
// checkpoint.
Status RestoreV2Shape(InferenceContext* c) {
  WEIR_RETURN_IF_ERROR(CheckNamesAndSlices(c, c->num_outputs()));
  const Tensor* specs = c->input_tensor(2);
  for (int i = 0; i < c->num_outputs(); ++i) {
    c->set_output(i, PartialShape::UnknownRank());
    if (specs == nullptr || specs->dtype() != DT_STRING || specs->NumElements() <= i) continue;
    const std::string& spec = specs->data<std::string>()[i];
    if (spec.empty()) continue;
    WEIR_ASSIGN_OR_RETURN(ShapeAndSlice slice, ParseShapeAndSlice(spec));
    c->set_output(i, PartialShape(slice.slice_shape()));
  }
  return Status::OK();
}

Status ScalarInputsScalarOutput(InferenceContext* c) {
  PartialShape unused;
  for (int i = 0; i < c->num_inputs(); ++i) WEIR_RETURN_IF_ERROR(c->WithRank(i, 0, &unused));
  c->set_output(0, PartialShape(TensorShape({})));
  return Status::OK();
}

// Scalars broadcast; the other inputs share one shape, the output's.
Status StringJoinShape(InferenceContext* c) {
  PartialShape out(TensorShape({}));
  bool unknown = false;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& in = c->input(i);
    if (in.rank() < 0) {
      unknown = true;
      continue;
    }
    if (in.rank() == 0) continue;
    if (out.rank() == 0) {
      out = in;
      continue;
    }
    StatusOr<PartialShape> merged = out.Merge(in);
    if (!merged.ok()) {
      return errors::InvalidArgument("the non-scalar inputs must have one shape, but ", out,
                                     " and input ", i, "'s ", in, " differ");
    }
    out = *merged;
  }
  c->set_output(0, unknown && out.rank() == 0 ? PartialShape::UnknownRank() : out);
  return Status::OK();
}

}  // namespace

void RegisterIoOps(OpRegistry* registry) {
  registry->Register(
      OpDefBuilder("SaveV2")
          .Input("prefix: string")
          .Input("tensor_names: string")
          .Input("shape_and_slices: string")
          .Input("tensors: dtypes")
          .Attr("dtypes: list(type) >= 1")
          .SetIsStateful()
          .SetShapeFn(SaveV2Shape)
          .Doc("Saves `tensors` under `tensor_names` in the checkpoint `prefix` (files "
               "<prefix>.index and <prefix>.data-00000-of-00001), replacing it atomically. "
               "An empty `shape_and_slices` entry saves its tensor whole; a spec saves it as "
               "that slice of a larger tensor (several entries may name one tensor)."));
  registry->Register(
      OpDefBuilder("RestoreV2")
          .Input("prefix: string")
          .Input("tensor_names: string")
          .Input("shape_and_slices: string")
          .Output("tensors: dtypes")
          .Attr("dtypes: list(type) >= 1")
          .SetIsStateful()
          .SetShapeFn(RestoreV2Shape)
          .Doc("Reads `tensor_names` from the checkpoint `prefix`, checking their `dtypes`. "
               "An empty `shape_and_slices` entry restores the whole tensor; a spec such as "
               "\"4 5 0,2:-\" (full shape, then start,length or - per dim) restores that "
               "part of it."));
  registry->Register(
      OpDefBuilder("ShardedFilename")
          .Input("basename: string")
          .Input("shard: int32")
          .Input("num_shards: int32")
          .Output("filename: string")
          .SetShapeFn(ScalarInputsScalarOutput)
          .Doc("\"<basename>-<shard>-of-<num_shards>\", the numbers as five digits or more "
               "(\"ckpt-00001-of-00003\"): the name of one shard of a sharded save. "
               "0 <= shard < num_shards."));
  registry->Register(OpDefBuilder("ShardedFilespec")
                         .Input("basename: string")
                         .Input("num_shards: int32")
                         .Output("filename: string")
                         .SetShapeFn(ScalarInputsScalarOutput)
                         .Doc("\"<basename>-?????"
                              "-of-<num_shards>\": a glob of every ShardedFilename of "
                              "`basename` and `num_shards`."));
  registry->Register(
      OpDefBuilder("MergeV2Checkpoints")
          .Input("checkpoint_prefixes: string")
          .Input("destination_prefix: string")
          .Attr("delete_old_dirs: bool = true")
          .Attr("allow_missing_files: bool = false")
          .SetIsStateful()
          .SetShapeFn([](InferenceContext* c) {
            PartialShape unused;
            WEIR_RETURN_IF_ERROR(c->WithRank(0, 1, &unused));
            return c->WithRank(1, 0, &unused);
          })
          .Doc("Joins the checkpoints `checkpoint_prefixes` (the shards of a sharded save) "
               "into one checkpoint at `destination_prefix`: their data files are renamed "
               "<destination_prefix>.data-<i>-of-<n> and one index, written last, points at "
               "them; the inputs' index files are deleted, and with `delete_old_dirs` their "
               "directories too when empty. With `allow_missing_files` an input without an "
               "index is skipped (one must exist). Every input is checked before any file "
               "moves; a failure leaves the files as they were."));
  registry->Register(
      OpDefBuilder("StringJoin")
          .Input("inputs: N * string")
          .Output("output: string")
          .Attr("N: int >= 0")
          .Attr("separator: string = ''")
          .SetShapeFn(StringJoinShape)
          .Doc("The `inputs` joined elementwise with `separator` between them; scalars apply "
               "to every element, the other inputs must have one shape (the output's)."));
}

}  // namespace weir
