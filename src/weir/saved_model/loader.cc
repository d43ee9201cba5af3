#include "weir/saved_model/loader.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "proto/meta_graph.pb.h"
#include "proto/saved_model.pb.h"
#include "weir/base/file_system.h"
#include "weir/base/str_util.h"
#include "weir/framework/node_def_util.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_constructor.h"
#include "weir/graph/graph_def_io.h"
#include "weir/graph/proto_parse.h"
#include "weir/runtime/standard_registration.h"
#include "weir/saved_model/constants.h"
#include "weir/train/function_gradient_builder.h"

namespace weir {
namespace {

std::string TagSetString(const std::set<std::string>& tags) {
  return StrCat("{", StrJoin(tags, ", "), "}");
}

StatusOr<wire::SavedModel> ReadSavedModelProto(const std::string& dir) {
  wire::SavedModel proto;
  std::string pb_path = dir + "/" + saved_model::kSavedModelFilenamePb;
  std::string txt_path = dir + "/" + saved_model::kSavedModelFilenamePbTxt;
  if (FileExists(pb_path)) {
    WEIR_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(pb_path));
    if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
      return errors::InvalidArgument("'", pb_path, "' is ", bytes.size(),
                                     " bytes, over protobuf's 2 GiB limit");
    }
    if (!ParseBinaryProto(bytes, &proto)) {
      return errors::DataLoss("could not parse '", pb_path, "' (", bytes.size(),
                              " bytes) as a SavedModel: the file is damaged or not a SavedModel");
    }
  } else if (FileExists(txt_path)) {
    WEIR_ASSIGN_OR_RETURN(std::string text, ReadFileToString(txt_path));
    if (text.size() > static_cast<size_t>(INT32_MAX)) {
      return errors::InvalidArgument("'", txt_path, "' is over protobuf's 2 GiB limit");
    }
    std::string error;
    if (!ParseTextProto(text, &proto, &error)) {
      return errors::DataLoss("could not parse '", txt_path, "' as a text SavedModel: ", error);
    }
  } else {
    return errors::NotFound("no SavedModel in '", dir, "': neither ",
                            saved_model::kSavedModelFilenamePb, " nor ",
                            saved_model::kSavedModelFilenamePbTxt, " is there");
  }
  return proto;
}

StatusOr<const wire::MetaGraphDef*> FindMetaGraph(const wire::SavedModel& model,
                                                  const std::set<std::string>& tags,
                                                  const std::string& dir) {
  std::vector<std::string> available;
  for (const wire::MetaGraphDef& meta : model.meta_graphs()) {
    std::set<std::string> meta_tags(meta.meta_info_def().tags().begin(),
                                    meta.meta_info_def().tags().end());
    if (meta_tags == tags) return &meta;
    available.push_back(TagSetString(meta_tags));
  }
  return errors::NotFound("the SavedModel in '", dir, "' has no MetaGraphDef with tags ",
                          TagSetString(tags), "; its tag sets are: ",
                          available.empty() ? "(none)" : StrJoin(available, ", "));
}

Status SignatureTensorFromProto(const wire::TensorInfo& proto, const std::string& where,
                                SignatureTensor* out) {
  if (proto.encoding_case() != wire::TensorInfo::kName) {
    return errors::Unimplemented(where, " is not a dense tensor (sparse and composite "
                                 "signature tensors are not supported yet)");
  }
  out->name = proto.name();
  // DT_INVALID (0): the exporter gave no dtype; any is accepted.
  if (proto.dtype() != 0 && !IsValidDType(proto.dtype())) {
    return errors::InvalidArgument(where, " ('", proto.name(), "') has dtype ",
                                   WireDTypeName(proto.dtype()), ", which Weir does not support");
  }
  out->dtype = static_cast<DType>(proto.dtype());
  out->shape = PartialShape();
  if (proto.has_tensor_shape()) {
    Status shape = ShapeFromProto(proto.tensor_shape(), &out->shape);
    if (!shape.ok()) return shape.WithContext(StrCat(where, " ('", proto.name(), "')"));
  }
  return Status::OK();
}

// Checks that `tensor` ("node:port") names a node of the graph.
Status CheckTensorInGraph(const std::string& tensor, const std::string& where,
                          const std::unordered_set<std::string>& nodes) {
  StatusOr<TensorId> id = ParseTensorName(tensor);
  if (!id.ok()) return id.status().WithContext(where);
  if (id->port < 0) {
    return errors::InvalidArgument(where, " names '", tensor, "', a control input, not a tensor");
  }
  if (!nodes.count(id->node)) {
    return errors::InvalidArgument(where, " names tensor '", tensor, "', but the graph has no node '",
                                   id->node, "'");
  }
  return Status::OK();
}

Status SignaturesFromProto(const wire::MetaGraphDef& meta,
                           const std::unordered_set<std::string>& nodes,
                           std::map<std::string, Signature>* out) {
  for (const auto& [key, proto] : meta.signature_def()) {
    // Not a function to call: it names the op the loader runs (FindInitOp).
    if (key == saved_model::kInitOpSignatureKey) continue;
    Signature signature;
    signature.method_name = proto.method_name();
    for (const auto& [name, info] : proto.inputs()) {
      std::string where = StrCat("input '", name, "' of signature '", key, "'");
      SignatureTensor tensor;
      WEIR_RETURN_IF_ERROR(SignatureTensorFromProto(info, where, &tensor));
      WEIR_RETURN_IF_ERROR(CheckTensorInGraph(tensor.name, where, nodes));
      signature.inputs.emplace(name, std::move(tensor));
    }
    for (const auto& [name, info] : proto.outputs()) {
      std::string where = StrCat("output '", name, "' of signature '", key, "'");
      SignatureTensor tensor;
      WEIR_RETURN_IF_ERROR(SignatureTensorFromProto(info, where, &tensor));
      WEIR_RETURN_IF_ERROR(CheckTensorInGraph(tensor.name, where, nodes));
      signature.outputs.emplace(name, std::move(tensor));
    }
    for (const auto& [name, value] : proto.defaults()) {
      if (!signature.inputs.count(name)) {
        return errors::InvalidArgument("signature '", key, "' has a default for '", name,
                                       "', which is not one of its inputs");
      }
      Tensor tensor;
      Status decoded = TensorFromProto(value, &tensor);
      if (!decoded.ok()) {
        return decoded.WithContext(StrCat("default of input '", name, "' of signature '", key, "'"));
      }
      signature.defaults.emplace(name, std::move(tensor));
    }
    out->emplace(key, std::move(signature));
  }
  return Status::OK();
}

// The op to run after restoring, as TensorFlow's loader finds it: the
// __saved_model_init_op signature (TF2), else the main op, else the legacy
// init op collection (TF1). Empty when there is none.
StatusOr<std::string> FindInitOp(const wire::MetaGraphDef& meta) {
  auto signature = meta.signature_def().find(saved_model::kInitOpSignatureKey);
  if (signature != meta.signature_def().end()) {
    auto output = signature->second.outputs().find(saved_model::kInitOpSignatureKey);
    if (output != signature->second.outputs().end()) return output->second.name();
  }
  for (const char* key :
       {saved_model::kMainOpCollectionKey, saved_model::kLegacyInitOpCollectionKey}) {
    auto collection = meta.collection_def().find(key);
    if (collection == meta.collection_def().end()) continue;
    const wire::CollectionDef& def = collection->second;
    if (def.kind_case() != wire::CollectionDef::kNodeList || def.node_list().value_size() != 1) {
      return errors::InvalidArgument("collection '", key,
                                     "' must hold exactly one node name, the op to run after "
                                     "restoring");
    }
    return def.node_list().value(0);
  }
  return std::string();
}

// A node name from "node", "node:port" or "^node".
std::string NodeNameOf(const std::string& tensor) {
  std::string name = tensor;
  if (!name.empty() && name[0] == '^') name.erase(0, 1);
  size_t colon = name.rfind(':');
  if (colon != std::string::npos) name.erase(colon);
  return name;
}

// Keeps the nodes that `roots` need through data and control inputs, in the
// graph's order. TensorFlow imports the whole graph; pruning spares a
// serving load the save path's ops (StringJoin, ShardedFilename,
// MergeV2Checkpoints...) and whatever else the signatures never run.
void PruneGraph(const std::vector<std::string>& roots, GraphDef* graph) {
  std::unordered_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& node : graph->nodes) by_name.emplace(node.name, &node);
  std::unordered_set<std::string> keep;
  std::vector<std::string> stack;
  for (const std::string& root : roots) stack.push_back(NodeNameOf(root));
  while (!stack.empty()) {
    std::string name = std::move(stack.back());
    stack.pop_back();
    auto it = by_name.find(name);
    if (it == by_name.end() || !keep.insert(name).second) continue;
    for (const std::string& input : it->second->inputs) stack.push_back(NodeNameOf(input));
  }
  std::erase_if(graph->nodes, [&](const NodeDef& node) { return !keep.count(node.name); });
}

// Adds the attrs a producer with stripped_default_attrs left out, for the
// ops Weir knows (unknown ops are reported by the import). Graph import adds
// defaults too; doing it here keeps bundle.graph complete for callers that
// inspect it.
void AddStrippedDefaults(GraphDef* graph) {
  for (NodeDef& node : graph->nodes) {
    if (const OpDef* op = OpRegistry::Global()->Find(node.op)) AddDefaultAttrs(*op, &node);
  }
}

// The producer's op list only refines how attrs are read; an entry Weir
// cannot represent (a dtype it lacks) is left out rather than failing the
// load, since the graph's own nodes are checked on import anyway.
std::vector<OpDef> ProducerOpsFromProto(const wire::MetaGraphDef& meta) {
  std::vector<OpDef> ops;
  for (const wire::OpDef& proto : meta.meta_info_def().stripped_op_list().op()) {
    OpDef op;
    if (OpDefFromProto(proto, &op).ok()) ops.push_back(std::move(op));
  }
  return ops;
}

// True for "a.txt" or "dir/a.txt"; false for "", absolute paths and any
// ".." component, which would reach outside assets/.
bool IsPlainRelativePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0 && end - start == 2) return false;
    start = end + 1;
  }
  return true;
}

// The assets: MetaGraphDef.asset_file_def, or in TF1 exports the
// "saved_model_assets" collection of AssetFileDef messages.
StatusOr<std::vector<wire::AssetFileDef>> AssetsOf(const wire::MetaGraphDef& meta) {
  std::vector<wire::AssetFileDef> assets(meta.asset_file_def().begin(),
                                         meta.asset_file_def().end());
  auto collection = meta.collection_def().find(saved_model::kAssetsCollectionKey);
  if (collection == meta.collection_def().end()) return assets;
  if (collection->second.kind_case() != wire::CollectionDef::kAnyList) {
    return errors::InvalidArgument("collection '", saved_model::kAssetsCollectionKey,
                                   "' must be a list of AssetFileDef messages");
  }
  for (const wire::Any& any : collection->second.any_list().value()) {
    wire::AssetFileDef asset;
    if (!any.type_url().ends_with("/tensorflow.AssetFileDef") ||
        !asset.ParseFromString(any.value())) {
      return errors::InvalidArgument("collection '", saved_model::kAssetsCollectionKey,
                                     "' holds a '", any.type_url(),
                                     "' that is not a valid AssetFileDef");
    }
    assets.push_back(std::move(asset));
  }
  return assets;
}

// The feeds of the restore and the init op: every asset's tensor gets the
// path of its file under assets/.
Status FeedAssets(const wire::MetaGraphDef& meta, const std::string& dir,
                  std::vector<std::pair<std::string, Tensor>>* feeds) {
  WEIR_ASSIGN_OR_RETURN(std::vector<wire::AssetFileDef> assets, AssetsOf(meta));
  for (const wire::AssetFileDef& asset : assets) {
    if (asset.tensor_info().encoding_case() != wire::TensorInfo::kName) {
      return errors::InvalidArgument("asset '", asset.filename(), "' names no tensor");
    }
    if (!IsPlainRelativePath(asset.filename())) {
      return errors::InvalidArgument("asset file name '", asset.filename(),
                                     "' is not a plain name under assets/");
    }
    std::string path = dir + "/" + saved_model::kAssetsDirectory + "/" + asset.filename();
    feeds->emplace_back(asset.tensor_info().name(), Tensor::Scalar<std::string>(path));
  }
  return Status::OK();
}

Status LoadInto(const std::string& dir, const std::set<std::string>& tags,
                const SessionOptions& options, SavedModelBundle* bundle) {
  WEIR_ASSIGN_OR_RETURN(wire::SavedModel model, ReadSavedModelProto(dir));
  WEIR_ASSIGN_OR_RETURN(const wire::MetaGraphDef* meta, FindMetaGraph(model, tags, dir));
  bundle->export_dir = dir;
  bundle->tags = tags;
  if (!meta->SerializeToString(&bundle->meta_graph_def)) {
    return errors::InvalidArgument("the MetaGraphDef is over protobuf's 2 GiB limit");
  }
  WEIR_RETURN_IF_ERROR(GraphDefFromProto(meta->graph_def(), &bundle->graph));
  bundle->producer_ops = ProducerOpsFromProto(*meta);
  // TensorFlow's forward-compatibility rule: attrs a newer producer added,
  // at their defaults, are dropped.
  if (!bundle->producer_ops.empty()) {
    WEIR_RETURN_IF_ERROR(RemoveNewDefaultAttrs(bundle->producer_ops, &bundle->graph));
  }
  if (meta->meta_info_def().stripped_default_attrs()) AddStrippedDefaults(&bundle->graph);

  std::unordered_set<std::string> nodes;
  for (const NodeDef& node : bundle->graph.nodes) nodes.insert(node.name);
  WEIR_RETURN_IF_ERROR(SignaturesFromProto(*meta, nodes, &bundle->signatures));

  const wire::SaverDef& saver = meta->saver_def();
  WEIR_ASSIGN_OR_RETURN(std::string init_op, FindInitOp(*meta));
  std::vector<std::string> roots;
  for (const auto& [key, signature] : bundle->signatures) {
    for (const auto& [name, tensor] : signature.inputs) roots.push_back(tensor.name);
    for (const auto& [name, tensor] : signature.outputs) roots.push_back(tensor.name);
  }
  const bool restores = meta->has_saver_def() && !saver.restore_op_name().empty();
  if (restores) {
    for (const std::string* name : {&saver.restore_op_name(), &saver.filename_tensor_name()}) {
      if (!nodes.count(NodeNameOf(*name))) {
        return errors::InvalidArgument("the SaverDef names '", *name, "', which is not in the graph");
      }
      roots.push_back(*name);
    }
  }
  if (!init_op.empty()) {
    if (!nodes.count(NodeNameOf(init_op))) {
      return errors::InvalidArgument("the init op '", init_op, "' is not in the graph");
    }
    roots.push_back(init_op);
  }
  std::vector<std::pair<std::string, Tensor>> asset_feeds;
  WEIR_RETURN_IF_ERROR(FeedAssets(*meta, dir, &asset_feeds));
  for (const auto& [name, value] : asset_feeds) {
    WEIR_RETURN_IF_ERROR(CheckTensorInGraph(name, "an asset's tensor", nodes));
    roots.push_back(name);
  }
  PruneGraph(roots, &bundle->graph);

  WEIR_ASSIGN_OR_RETURN(bundle->session, Session::New(options));
  WEIR_RETURN_IF_ERROR(bundle->session->Create(bundle->graph));

  if (restores) {
    std::string prefix = StrCat(dir, "/", saved_model::kVariablesDirectory, "/",
                                saved_model::kVariablesFilename);
    if (!FileExists(prefix + ".index")) {
      return errors::NotFound("the SavedModel in '", dir, "' restores variables (op '",
                              saver.restore_op_name(), "') but has no checkpoint '", prefix,
                              ".index'");
    }
    std::vector<std::pair<std::string, Tensor>> feeds = asset_feeds;
    feeds.emplace_back(saver.filename_tensor_name(), Tensor::Scalar<std::string>(prefix));
    std::vector<Tensor> unused;
    Status restored =
        bundle->session->Run(feeds, {}, {NodeNameOf(saver.restore_op_name())}, &unused);
    if (!restored.ok()) return restored.WithContext(StrCat("restoring the variables from '", prefix, "'"));
  }
  if (!init_op.empty()) {
    std::vector<Tensor> unused;
    Status ran = bundle->session->Run(asset_feeds, {}, {NodeNameOf(init_op)}, &unused);
    if (!ran.ok()) return ran.WithContext(StrCat("running the init op '", init_op, "'"));
  }
  return Status::OK();
}

std::string Keys(const std::map<std::string, SignatureTensor>& tensors) {
  std::vector<std::string> keys;
  for (const auto& [key, tensor] : tensors) keys.push_back("'" + key + "'");
  return keys.empty() ? "(none)" : StrJoin(keys, ", ");
}

}  // namespace

StatusOr<SavedModelBundle> LoadSavedModel(const std::string& export_dir,
                                          const std::set<std::string>& tags,
                                          const SessionOptions& options) {
  // The op registry fills in stripped default attrs before the session
  // (which would register it too) exists.
  RegisterStandardOpsAndKernels();
  RegisterFunctionGradients();  // SymbolicGradient nodes in the model's graph
  SavedModelBundle bundle;
  Status loaded = LoadInto(export_dir, tags, options, &bundle);
  if (!loaded.ok()) {
    return loaded.WithContext(StrCat("loading the SavedModel in '", export_dir, "' with tags ",
                                     TagSetString(tags)));
  }
  return bundle;
}

StatusOr<std::map<std::string, Tensor>> RunSignature(const SavedModelBundle& bundle,
                                                     const std::string& key,
                                                     const std::map<std::string, Tensor>& inputs,
                                                     const RunOptions& options) {
  auto found = bundle.signatures.find(key);
  if (found == bundle.signatures.end()) {
    std::vector<std::string> keys;
    for (const auto& [name, signature] : bundle.signatures) keys.push_back("'" + name + "'");
    return errors::NotFound("the SavedModel has no signature '", key, "'; its signatures are: ",
                            keys.empty() ? "(none)" : StrJoin(keys, ", "));
  }
  const Signature& signature = found->second;
  for (const auto& [name, value] : inputs) {
    if (!signature.inputs.count(name)) {
      return errors::InvalidArgument("signature '", key, "' has no input '", name,
                                     "'; its inputs are: ", Keys(signature.inputs));
    }
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [name, tensor] : signature.inputs) {
    auto given = inputs.find(name);
    const Tensor* value = nullptr;
    if (given != inputs.end()) {
      value = &given->second;
    } else if (auto fallback = signature.defaults.find(name); fallback != signature.defaults.end()) {
      value = &fallback->second;
    } else {
      return errors::InvalidArgument("signature '", key, "' needs input '", name, "' (",
                                     DTypeName(tensor.dtype), tensor.shape.DebugString(),
                                     ", tensor '", tensor.name, "'), which was not given");
    }
    if (tensor.dtype != DT_INVALID && value->dtype() != tensor.dtype) {
      return errors::InvalidArgument("input '", name, "' of signature '", key, "' must be ",
                                     DTypeName(tensor.dtype), ", got ", DTypeName(value->dtype()),
                                     value->shape().DebugString());
    }
    if (!tensor.shape.IsCompatibleWith(value->shape())) {
      return errors::InvalidArgument("input '", name, "' of signature '", key, "' must have shape ",
                                     tensor.shape.DebugString(), ", got ",
                                     value->shape().DebugString());
    }
    feeds.emplace_back(tensor.name, *value);
  }
  std::vector<std::string> fetches;
  for (const auto& [name, tensor] : signature.outputs) fetches.push_back(tensor.name);
  std::vector<Tensor> outputs;
  Status ran = bundle.session->Run(feeds, fetches, {}, &outputs, options);
  if (!ran.ok()) return ran.WithContext(StrCat("running signature '", key, "'"));
  std::map<std::string, Tensor> result;
  size_t i = 0;
  for (const auto& [name, tensor] : signature.outputs) result.emplace(name, outputs[i++]);
  return result;
}

}  // namespace weir
