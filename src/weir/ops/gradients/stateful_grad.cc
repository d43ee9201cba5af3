// Gradients of the state family, where a gradient with respect to a
// variable is one with respect to its handle: reading passes the gradient
// to the handle, and a gather from the variable gives it sparse rows. Then
// the families whose ops have no gradient by nature: state updates, random
// sampling, I/O, communication and control, listed explicitly so that a
// new op must be placed here or given a gradient (the registry test checks
// every op has an entry).
#include "weir/ops/gradients/gradient_registry.h"
#include "weir/ops/gradients/gradient_util.h"
#include "weir/ops/standard_ops.h"

namespace weir {
namespace {

Status ReadVariableGrad(const Scope& scope, const Operation& op, const std::vector<Output>& g,
                        std::vector<Output>* grads) {
  *grads = {g[0]};
  return Status::OK();
}

// The variable's shape: from the handle op's shape attr when it is fully
// known, else by reading the variable (which shares its buffer).
Output VariableShape(const Scope& scope, const Operation& op) {
  Output handle = ForwardInput(op, 0);
  PartialShape shape;
  if (handle.node()->type_string() == "VarHandleOp" &&
      GetAttr(handle.node()->def().attrs, "shape", &shape).ok() && shape.IsFullyDefined()) {
    return IntVector(scope, shape.dim_sizes());
  }
  DType dtype = op.output(0).dtype();
  return ops::Shape(scope, ops::ReadVariableOp(scope, handle, dtype));
}

Status ResourceGatherSparseGrad(const Scope& scope, const Operation& op,
                                const std::vector<Output>& g, std::vector<IndexedSlices>* grads) {
  int64_t batch_dims = 0;
  (void)GetAttr(op.node()->def().attrs, "batch_dims", &batch_dims);
  if (batch_dims != 0) return Status::OK();  // the dense function refuses it
  *grads = {GatheredRows(scope, g[0], ForwardInput(op, 1), VariableShape(scope, op)), {}};
  return scope.status();
}

Status ResourceGatherDenseGrad(const Scope&, const Operation&, const std::vector<Output>&,
                               std::vector<Output>*) {
  return errors::Unimplemented("the gradient of ResourceGather with batch_dims != 0");
}

}  // namespace

void RegisterStatefulGradients(GradientRegistry* registry) {
  registry->Register("ReadVariableOp", ReadVariableGrad);
  registry->RegisterSparse("ResourceGather", ResourceGatherSparseGrad);
  registry->Register("ResourceGather", ResourceGatherDenseGrad);
  for (const char* op : {"AssignVariableOp",
                         "AssignAddVariableOp",
                         "AssignSubVariableOp",
                         "DestroyResourceOp",
                         "ResourceScatterAdd",
                         "ResourceScatterSub",
                         "ResourceScatterMul",
                         "ResourceScatterDiv",
                         "ResourceScatterMin",
                         "ResourceScatterMax",
                         "ResourceScatterUpdate",
                         "ResourceScatterNdUpdate",
                         "ResourceScatterNdAdd",
                         "ResourceScatterNdSub",
                         "ResourceScatterNdMin",
                         "ResourceScatterNdMax",
                         "ResourceCountUpTo",
                         "RandomUniform",
                         "RandomStandardNormal",
                         "TruncatedNormal",
                         "RandomUniformInt",
                         "RandomShuffle",
                         "Multinomial",
                         "SaveV2",
                         "RestoreV2",
                         "NoOp",
                         "_Send",
                         "_Recv",
                         "_Retval"}) {
    registry->RegisterNoGradient(op);
  }
  // Readers and files: records and file names, nothing to differentiate.
  for (const char* op :
       {"TFRecordReaderV2", "FixedLengthRecordReaderV2", "TextLineReaderV2", "WholeFileReaderV2",
        "ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
        "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2", "MatchingFiles", "ReadFile", "WriteFile",
        "MergeV2Checkpoints", "ShardedFilename", "ShardedFilespec", "StringJoin"}) {
    registry->RegisterNoGradient(op);
  }
  // Parsing and the string ops: strings in, values or strings out.
  for (const char* op : {"ParseExampleV2",
                         "ParseExample",
                         "ParseSingleExample",
                         "DecodeRaw",
                         "DecodeCSV",
                         "StringToNumber",
                         "SerializeTensor",
                         "ParseTensor",
                         "StaticRegexFullMatch",
                         "RegexFullMatch",
                         "StaticRegexReplace",
                         "RegexReplace",
                         "AsString",
                         "StringToHashBucketFast",
                         "StringStrip",
                         "StringLower",
                         "StringUpper",
                         "EncodeBase64",
                         "DecodeBase64",
                         "ReduceJoin"}) {
    registry->RegisterNoGradient(op);
  }
  // Lookup tables: integer ids or a table's state, as TensorFlow's.
  for (const char* op :
       {"HashTableV2", "MutableHashTableV2", "LookupTableFindV2", "LookupTableInsertV2",
        "LookupTableRemoveV2", "LookupTableSizeV2", "LookupTableExportV2", "LookupTableImportV2",
        "InitializeTableV2", "InitializeTableFromTextFileV2"}) {
    registry->RegisterNoGradient(op);
  }
  // The optimizers' updates have no outputs to differentiate.
  for (const char* op : {"ResourceApplyGradientDescent",
                         "ResourceApplyMomentum",
                         "ResourceApplyAdagrad",
                         "ResourceApplyRMSProp",
                         "ResourceApplyCenteredRMSProp",
                         "ResourceApplyAdam",
                         "ResourceApplyAdamWithAmsgrad",
                         "ResourceSparseApplyMomentum",
                         "ResourceSparseApplyAdagrad",
                         "ResourceSparseApplyRMSProp",
                         "ResourceSparseApplyCenteredRMSProp",
                         "ResourceApplyAdadelta",
                         "ResourceSparseApplyAdadelta",
                         "ResourceApplyFtrl",
                         "ResourceSparseApplyFtrl",
                         "ResourceApplyFtrlV2",
                         "ResourceSparseApplyFtrlV2",
                         "ResourceApplyProximalGradientDescent",
                         "ResourceSparseApplyProximalGradientDescent",
                         "ResourceApplyProximalAdagrad",
                         "ResourceSparseApplyProximalAdagrad"}) {
    registry->RegisterNoGradient(op);
  }
}

}  // namespace weir
