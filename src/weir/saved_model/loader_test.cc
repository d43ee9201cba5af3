#include "weir/saved_model/loader.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>

#include "proto/graph.pb.h"
#include "proto/meta_graph.pb.h"
#include "proto/saved_model.pb.h"
#include "weir/base/file_system.h"
#include "weir/framework/tensor_bundle.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/standard_registration.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

// y = x * v + u: v comes from the checkpoint (restore_all), u from the init
// op; "unused" is a node of an op Weir lacks that nothing needs.
constexpr char kGraph[] = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: -1 } } } } }
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape {} } } attr { key: "shared_name" value { s: "v" } } }
node { name: "u" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape {} } } attr { key: "shared_name" value { s: "u" } } }
node { name: "read_v" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "read_u" op: "ReadVariableOp" input: "u" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "mul" op: "Mul" input: "x" input: "read_v" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "AddV2" input: "mul" input: "read_u" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "save/Const" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } }
       attr { key: "shape" value { shape {} } } }
node { name: "save/names" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
       attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } }
                                            string_val: "v" } } } }
node { name: "save/slices" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
       attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } }
                                            string_val: "" } } } }
node { name: "save/RestoreV2" op: "RestoreV2" input: "save/Const" input: "save/names"
       input: "save/slices" attr { key: "dtypes" value { list { type: DT_FLOAT } } } }
node { name: "save/assign" op: "AssignVariableOp" input: "v" input: "save/RestoreV2"
       attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "save/restore_all" op: "NoOp" input: "^save/assign" }
node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
node { name: "init_u" op: "AssignVariableOp" input: "u" input: "two"
       attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "unused" op: "NotAnOpWeirHas" input: "x" }
versions { producer: 1 }
)pb";

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterStandardOpsAndKernels();
    dir_ = fs::temp_directory_path() /
           ("weir_saved_model_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    wire::MetaGraphDef* meta = model_.add_meta_graphs();
    meta->mutable_meta_info_def()->add_tags("serve");
    ASSERT_TRUE(meta->mutable_graph_def()->ParseFromString(GraphBytes(kGraph)));
    meta->mutable_saver_def()->set_filename_tensor_name("save/Const:0");
    meta->mutable_saver_def()->set_restore_op_name("save/restore_all");
    (*meta->mutable_collection_def())["legacy_init_op"].mutable_node_list()->add_value("init_u");
    wire::SignatureDef& serving = (*meta->mutable_signature_def())["serving_default"];
    serving.set_method_name("tensorflow/serving/predict");
    SetTensor(&(*serving.mutable_inputs())["x"], "x:0", {-1});
    SetTensor(&(*serving.mutable_outputs())["y"], "y:0", {-1});
    model_.add_meta_graphs()->mutable_meta_info_def()->add_tags("train");
    BundleWriter writer(Path("variables/variables"));
    ASSERT_TRUE(writer.Add("v", Tensor::Scalar<float>(3.f)).ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string GraphBytes(const char* text) {
    StatusOr<GraphDef> graph = ParseGraphDefText(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    return SerializeGraphDef(*graph);
  }
  static void SetTensor(wire::TensorInfo* info, const std::string& name,
                        std::initializer_list<int64_t> dims) {
    info->set_name(name);
    info->set_dtype(wire::DT_FLOAT);
    for (int64_t d : dims) info->mutable_tensor_shape()->add_dim()->set_size(d);
  }
  wire::MetaGraphDef* Serve() { return model_.mutable_meta_graphs(0); }
  wire::SignatureDef* Serving() { return &(*Serve()->mutable_signature_def())["serving_default"]; }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write() {
    ASSERT_TRUE(WriteStringToFileAtomic(Path("saved_model.pb"), model_.SerializeAsString()).ok());
  }
  StatusOr<SavedModelBundle> Load(const std::set<std::string>& tags = {"serve"}) {
    Write();
    return LoadSavedModel(dir_.string(), tags, SessionOptions());
  }

  fs::path dir_;
  wire::SavedModel model_;
};

void ExpectError(const Status& status, Code code, std::initializer_list<std::string> parts) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << status;
  }
}

TEST_F(LoaderTest, RestoresRunsInitOpAndRunsTheSignature) {
  StatusOr<SavedModelBundle> bundle = Load();
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->tags, std::set<std::string>{"serve"});
  ASSERT_EQ(bundle->signatures.count("serving_default"), 1u);
  EXPECT_EQ(bundle->signatures.at("serving_default").inputs.at("x").name, "x:0");
  // The unknown op no signature needs was pruned away.
  for (const NodeDef& node : bundle->graph.nodes) EXPECT_NE(node.name, "unused");
  wire::MetaGraphDef meta;
  ASSERT_TRUE(meta.ParseFromString(bundle->meta_graph_def));
  EXPECT_EQ(meta.saver_def().restore_op_name(), "save/restore_all");

  StatusOr<std::map<std::string, Tensor>> out =
      RunSignature(*bundle, "serving_default", {{"x", Tensor::FromVector<float>({1, -2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const Tensor& y = out->at("y");
  ASSERT_EQ(y.NumElements(), 2);
  EXPECT_EQ(y.data<float>()[0], 1 * 3.f + 2.f);  // v restored, u set by the init op
  EXPECT_EQ(y.data<float>()[1], -2 * 3.f + 2.f);
}

TEST_F(LoaderTest, MainOpSignatureTakesPrecedence) {
  // TF2 exports name the init op in the __saved_model_init_op signature; a
  // wrong legacy_init_op must then not run.
  (*Serve()->mutable_collection_def())["legacy_init_op"].mutable_node_list()->set_value(0, "nope");
  wire::SignatureDef& init = (*Serve()->mutable_signature_def())["__saved_model_init_op"];
  (*init.mutable_outputs())["__saved_model_init_op"].set_name("init_u");
  StatusOr<SavedModelBundle> bundle = Load();
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  StatusOr<std::map<std::string, Tensor>> out =
      RunSignature(*bundle, "serving_default", {{"x", Tensor::FromVector<float>({1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at("y").data<float>()[0], 5.f);
}

TEST_F(LoaderTest, SignatureDefaultsFillOmittedInputs) {
  Tensor value = Tensor::FromVector<float>({10});
  ASSERT_TRUE(TensorToProto(value, &(*Serving()->mutable_defaults())["x"]).ok());
  StatusOr<SavedModelBundle> bundle = Load();
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  StatusOr<std::map<std::string, Tensor>> out = RunSignature(*bundle, "serving_default", {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at("y").data<float>()[0], 32.f);
}

TEST_F(LoaderTest, MissingOrDamagedSavedModelIsAnError) {
  StatusOr<SavedModelBundle> missing = LoadSavedModel(Path("nowhere"), {"serve"}, {});
  ExpectError(missing.status(), Code::kNotFound, {"nowhere", "saved_model.pb"});
  ASSERT_TRUE(WriteStringToFileAtomic(Path("saved_model.pb"), "\xff\xff\xff garbage").ok());
  StatusOr<SavedModelBundle> damaged = LoadSavedModel(dir_.string(), {"serve"}, {});
  ExpectError(damaged.status(), Code::kDataLoss, {"saved_model.pb", "could not parse"});
}

TEST_F(LoaderTest, UnknownTagsListTheTagSets) {
  ExpectError(Load({"serve", "gpu"}).status(), Code::kNotFound,
              {"{gpu, serve}", "its tag sets are: {serve}, {train}"});
}

TEST_F(LoaderTest, MissingVariablesAreNotFound) {
  fs::remove_all(dir_ / "variables");
  ExpectError(Load().status(), Code::kNotFound, {"variables/variables.index", "save/restore_all"});
}

TEST_F(LoaderTest, SignatureNamingAMissingTensorIsAnError) {
  SetTensor(&(*Serving()->mutable_outputs())["z"], "nope:0", {});
  ExpectError(Load().status(), Code::kInvalidArgument,
              {"output 'z' of signature 'serving_default'", "'nope:0'", "no node 'nope'"});
}

TEST_F(LoaderTest, SparseSignatureTensorsAreUnimplemented) {
  (*Serving()->mutable_inputs())["x"].clear_name();
  ExpectError(Load().status(), Code::kUnimplemented, {"input 'x' of signature 'serving_default'"});
}

TEST_F(LoaderTest, UnknownOpTheSignatureNeedsIsNamed) {
  SetTensor(&(*Serving()->mutable_outputs())["u"], "unused:0", {});
  ExpectError(Load().status(), Code::kNotFound, {"NotAnOpWeirHas", "unused"});
}

TEST_F(LoaderTest, AssetOutsideAssetsIsRefused) {
  wire::AssetFileDef* asset = Serve()->add_asset_file_def();
  asset->set_filename("../../etc/passwd");
  asset->mutable_tensor_info()->set_name("save/Const:0");
  ExpectError(Load().status(), Code::kInvalidArgument, {"../../etc/passwd", "assets/"});
}

TEST_F(LoaderTest, RunSignatureChecksKeysAndInputs) {
  StatusOr<SavedModelBundle> bundle = Load();
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  Tensor x = Tensor::FromVector<float>({1});
  ExpectError(RunSignature(*bundle, "predict", {{"x", x}}).status(), Code::kNotFound,
              {"no signature 'predict'", "'serving_default'"});
  ExpectError(RunSignature(*bundle, "serving_default", {}).status(), Code::kInvalidArgument,
              {"signature 'serving_default' needs input 'x'", "float[?]", "x:0"});
  ExpectError(RunSignature(*bundle, "serving_default", {{"x", x}, {"k", x}}).status(),
              Code::kInvalidArgument, {"has no input 'k'", "'x'"});
  ExpectError(RunSignature(*bundle, "serving_default", {{"x", Tensor::FromVector<int32_t>({1})}})
                  .status(),
              Code::kInvalidArgument, {"input 'x' of signature 'serving_default'", "float", "int32"});
  ExpectError(
      RunSignature(*bundle, "serving_default",
                   {{"x", Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}})
          .status(),
      Code::kInvalidArgument, {"must have shape", "[1,2]"});
}


TEST_F(LoaderTest, ReadsTheTextFormat) {
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(model_, &text));
  ASSERT_TRUE(WriteStringToFileAtomic(Path("saved_model.pbtxt"), text).ok());
  StatusOr<SavedModelBundle> bundle = LoadSavedModel(dir_.string(), {"serve"}, {});
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  EXPECT_EQ(bundle->signatures.size(), 1u);
  ASSERT_TRUE(WriteStringToFileAtomic(Path("saved_model.pbtxt"), "meta_graphs {{").ok());
  ExpectError(LoadSavedModel(dir_.string(), {"serve"}, {}).status(), Code::kDataLoss,
              {"saved_model.pbtxt", "line 1 column"});
}

TEST_F(LoaderTest, StrippedDefaultAttrsAreAddedBack) {
  Serve()->mutable_meta_info_def()->set_stripped_default_attrs(true);
  StatusOr<SavedModelBundle> bundle = Load();
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  const NodeDef* v = nullptr;
  for (const NodeDef& node : bundle->graph.nodes) {
    if (node.name == "v") v = &node;
  }
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->attrs.count("container"), 1u);  // VarHandleOp's default ''
  EXPECT_EQ(v->attrs.count("allowed_devices"), 1u);
}

}  // namespace
}  // namespace weir
