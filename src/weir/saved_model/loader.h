// Loading a TensorFlow SavedModel directory and running its signatures.
//
//   WEIR_ASSIGN_OR_RETURN(SavedModelBundle bundle,
//                         LoadSavedModel(dir, {"serve"}, SessionOptions()));
//   WEIR_ASSIGN_OR_RETURN(auto outputs,
//                         RunSignature(bundle, "serving_default", {{"x", x}}));
//
// A SavedModel directory holds saved_model.pb (a SavedModel message: one
// MetaGraphDef per tag set, proto/saved_model.proto), variables/ (a
// checkpoint with prefix variables/variables) and assets/ (files the graph
// reads, e.g. vocabularies).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "weir/base/status.h"
#include "weir/framework/node_def.h"
#include "weir/framework/op_def.h"
#include "weir/framework/tensor.h"
#include "weir/framework/tensor_shape.h"
#include "weir/framework/types.h"
#include "weir/runtime/session.h"

namespace weir {

// One named tensor of a signature (TensorFlow's TensorInfo, dense encoding).
struct SignatureTensor {
  std::string name;  // "node:port" in the graph
  DType dtype = DT_INVALID;  // DT_INVALID: not given by the exporter, any accepted
  PartialShape shape;  // unknown rank when the exporter gave none
};

struct Signature {
  std::map<std::string, SignatureTensor> inputs;
  std::map<std::string, SignatureTensor> outputs;
  std::string method_name;  // "tensorflow/serving/predict", ...
  std::map<std::string, Tensor> defaults;  // values of inputs a caller may omit
};

struct SavedModelBundle {
  std::string export_dir;
  std::set<std::string> tags;  // the tag set of the chosen MetaGraphDef
  // The chosen MetaGraphDef, serialized (proto/meta_graph.proto), for
  // callers that want the protobuf message itself (Python).
  std::string meta_graph_def;
  // The graph the session runs: the MetaGraphDef's graph with default attrs
  // added back, pruned to the nodes the signatures, the restore op, the init
  // op and the assets need (so a serving load does not need the save path's
  // ops).
  GraphDef graph;
  // The producer's declarations of the ops (MetaInfoDef.stripped_op_list).
  std::vector<OpDef> producer_ops;
  // By key; the "__saved_model_init_op" entry, which names the init op
  // rather than a callable signature, is left out.
  std::map<std::string, Signature> signatures;
  std::unique_ptr<Session> session;
};

// Reads `export_dir`, picks the MetaGraphDef whose tag set equals `tags`,
// starts a session on its graph, restores the variables (runs the SaverDef's
// restore op with its filename tensor fed "<dir>/variables/variables") and
// runs the init op (the "__saved_model_init_op" signature, else the
// "saved_model_main_op" or "legacy_init_op" collection), feeding each
// asset's tensor its path under assets/. Errors, naming the directory:
// NotFound for a missing saved_model.pb, for tags no MetaGraphDef has
// (listing the tag sets there are) and for a restore op without
// variables/variables.index; DataLoss for bytes that do not parse;
// InvalidArgument for signatures that name tensors the graph lacks or have
// unsupported encodings; and whatever importing, restoring or initializing
// the graph returns (an unknown op names the op and the node).
StatusOr<SavedModelBundle> LoadSavedModel(const std::string& export_dir,
                                          const std::set<std::string>& tags,
                                          const SessionOptions& options);

// Runs signature `key` of `bundle` on `inputs` (signature input key ->
// value) and returns every output by its key. Inputs left out take the
// signature's default if it has one. Errors name the signature: NotFound
// for an unknown key (listing the keys there are); InvalidArgument for a
// missing or unexpected input, or one whose dtype or shape does not match
// the signature. Thread-safe like Session::Run.
StatusOr<std::map<std::string, Tensor>> RunSignature(const SavedModelBundle& bundle,
                                                     const std::string& key,
                                                     const std::map<std::string, Tensor>& inputs,
                                                     const RunOptions& options = {});

}  // namespace weir
