// The lookup-table family: hash tables are resources in the device's
// ResourceMgr (kernels/lookup_table.h); HashTableV2 / MutableHashTableV2
// output a DT_RESOURCE handle and the other ops take it. OpDefs are
// TensorFlow's V2 table ops (tf.lookup, tf.compat.v1 tables_initializer),
// so imported graphs with vocabularies run unchanged. Every op is stateful.
#include "weir/framework/op_def.h"
#include "weir/framework/shape_inference.h"
#include "weir/ops/all_ops.h"

namespace weir {
namespace {

Status ScalarOutput(InferenceContext* c) {
  c->set_output(0, PartialShape(std::vector<int64_t>{}));
  return Status::OK();
}

Status NoOutputs(InferenceContext*) { return Status::OK(); }

// A table of scalar values: a value per key, in the keys' shape.
Status FindShape(InferenceContext* c) {
  c->set_output(0, c->input(1));
  return Status::OK();
}

Status ExportShape(InferenceContext* c) {
  c->set_output(0, PartialShape::UnknownDims(1));
  c->set_output(1, PartialShape::UnknownRank());
  return Status::OK();
}

void TableOp(OpRegistry* registry, const char* name, const char* doc) {
  registry->Register(OpDefBuilder(name)
                         .Output("table_handle: resource")
                         .Attr("container: string = ''")
                         .Attr("shared_name: string = ''")
                         .Attr("use_node_name_sharing: bool = false")
                         .Attr("key_dtype: type")
                         .Attr("value_dtype: type")
                         .SetIsStateful()
                         .SetShapeFn(ScalarOutput)
                         .Doc(doc));
}

}  // namespace

void RegisterLookupOps(OpRegistry* registry) {
  TableOp(registry, "HashTableV2",
          "A hash table filled once by an initializer (InitializeTableV2, "
          "InitializeTableFromTextFileV2) and read-only after. Shared by the ops that name the "
          "same `shared_name` in `container`; empty: private to the node, or (with "
          "`use_node_name_sharing`) shared under the node's name.");
  TableOp(registry, "MutableHashTableV2",
          "A hash table updated by LookupTableInsertV2 / RemoveV2 / ImportV2; sharing as "
          "HashTableV2.");
  registry->Register(OpDefBuilder("LookupTableFindV2")
                         .Input("table_handle: resource")
                         .Input("keys: Tin")
                         .Input("default_value: Tout")
                         .Output("values: Tout")
                         .Attr("Tin: type")
                         .Attr("Tout: type")
                         .SetIsStateful()
                         .SetShapeFn(FindShape)
                         .Doc("The value of each key, `default_value` for a missing one (a "
                              "scalar, or one per key in the keys' shape)."));
  registry->Register(OpDefBuilder("LookupTableInsertV2")
                         .Input("table_handle: resource")
                         .Input("keys: Tin")
                         .Input("values: Tout")
                         .Attr("Tin: type")
                         .Attr("Tout: type")
                         .SetIsStateful()
                         .SetShapeFn(NoOutputs)
                         .Doc("Sets the value of each key (a mutable table's)."));
  registry->Register(OpDefBuilder("LookupTableRemoveV2")
                         .Input("table_handle: resource")
                         .Input("keys: Tin")
                         .Attr("Tin: type")
                         .SetIsStateful()
                         .SetShapeFn(NoOutputs)
                         .Doc("Removes the keys (a mutable table's); missing keys are ignored."));
  registry->Register(OpDefBuilder("LookupTableSizeV2")
                         .Input("table_handle: resource")
                         .Output("size: int64")
                         .SetIsStateful()
                         .SetShapeFn(ScalarOutput)
                         .Doc("The number of entries."));
  registry->Register(OpDefBuilder("LookupTableExportV2")
                         .Input("table_handle: resource")
                         .Output("keys: Tkeys")
                         .Output("values: Tvalues")
                         .Attr("Tkeys: type")
                         .Attr("Tvalues: type")
                         .SetIsStateful()
                         .SetShapeFn(ExportShape)
                         .Doc("Every entry, as a key vector and a value vector (in no order)."));
  registry->Register(OpDefBuilder("LookupTableImportV2")
                         .Input("table_handle: resource")
                         .Input("keys: Tin")
                         .Input("values: Tout")
                         .Attr("Tin: type")
                         .Attr("Tout: type")
                         .SetIsStateful()
                         .SetShapeFn(NoOutputs)
                         .Doc("Replaces a mutable table's entries by these."));
  registry->Register(OpDefBuilder("InitializeTableV2")
                         .Input("table_handle: resource")
                         .Input("keys: Tkey")
                         .Input("values: Tval")
                         .Attr("Tkey: type")
                         .Attr("Tval: type")
                         .SetIsStateful()
                         .SetShapeFn(NoOutputs)
                         .Doc("Fills a HashTableV2 with these entries. Running it again with "
                              "the same entries does nothing; with others, FailedPrecondition."));
  registry->Register(
      OpDefBuilder("InitializeTableFromTextFileV2")
          .Input("table_handle: resource")
          .Input("filename: string")
          .Attr("key_index: int >= -2")
          .Attr("value_index: int >= -2")
          .Attr("vocab_size: int >= -1 = -1")
          .Attr("delimiter: string = '\t'")
          .Attr("offset: int = 0")
          .SetIsStateful()
          .SetShapeFn(NoOutputs)
          .Doc("Fills a HashTableV2 from a text file, one entry per line: the key and value are "
               "columns split by `delimiter` (index >= 0), the whole line (-2) or the line "
               "number plus `offset` (-1). `vocab_size` >= 0 reads that many lines, which the "
               "file must have."));
}

}  // namespace weir
