// Writes the fuzzers' seed corpora, one folder per harness under OUT_DIR:
//   weir_fuzz_seeds OUT_DIR [GRAPH_FILE...]
// Seeds are built with Weir's own APIs (the graph builder, TensorToProto,
// SerializeNpy, BundleWriter), so they follow the formats as the code
// changes; GRAPH_FILE arguments (the tests' .pbtxt/.pb graphs) are added to
// both GraphDef corpora.
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "proto/example.pb.h"
#include "proto/tensor.pb.h"
#include "proto/worker_service.pb.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/worker_wire_format.h"
#include "weir/base/file_system.h"
#include "weir/base/record_writer.h"
#include "weir/distributed/step_stats_wire.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/framework/npy.h"
#include "weir/framework/op_def.h"
#include "weir/framework/sstable.h"
#include "weir/framework/tensor_bundle.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"
#include "weir/graph/scope.h"
#include "weir/kernels/image_codec_libs.h"
#include "weir/ops/control_flow_builder.h"
#include "weir/ops/standard_ops.h"

namespace weir::fuzz {
namespace {

namespace fs = std::filesystem;
using H = Eigen::half;

class Corpus {
 public:
  Corpus(const fs::path& root, const std::string& harness) : dir_(root / harness) {
    fs::create_directories(dir_);
  }
  void Add(const std::string& name, const std::string& bytes) {
    std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", (dir_ / name).c_str());
      std::exit(1);
    }
    ++count_;
  }
  int count() const { return count_; }

 private:
  fs::path dir_;
  int count_ = 0;
};

// One tensor of each dtype, with scalars, empty tensors and awkward values.
std::vector<std::pair<std::string, Tensor>> SampleTensors() {
  return {
      {"float_matrix", Tensor::FromVector<float>({1.5f, -2, 0, 3e30f, -0.0f, 7}, TensorShape({2, 3}))},
      {"float_scalar", Tensor::Scalar<float>(42.25f)},
      {"float_empty", Tensor(DT_FLOAT, TensorShape({3, 0}))},
      {"double", Tensor::FromVector<double>({1e-300, 2.5, -3})},
      {"int32", Tensor::FromVector<int32_t>({-1, 0, 2147483647, -2147483647 - 1})},
      {"int64", Tensor::FromVector<int64_t>({int64_t{1} << 62, -5}, TensorShape({2, 1}))},
      {"bool", Tensor::FromVector<bool>({true, false, true})},
      {"uint8", Tensor::FromVector<uint8_t>({0, 255, 128}, TensorShape({1, 3}))},
      {"int8", Tensor::FromVector<int8_t>({-128, 127})},
      {"int16", Tensor::FromVector<int16_t>({-300, 300})},
      {"uint16", Tensor::FromVector<uint16_t>({65535})},
      {"uint32", Tensor::FromVector<uint32_t>({4000000000u})},
      {"uint64", Tensor::Scalar<uint64_t>(~uint64_t{0})},
      {"half", Tensor::FromVector<H>({H(1.5f), H(-0.25f), H(65504.0f)})},
      {"bfloat16", Tensor::FromVector<Eigen::bfloat16>({Eigen::bfloat16(3.0f)})},
      {"complex64", Tensor::FromVector<complex64>({{1, 2}, {-3, 4}})},
      {"complex128", Tensor::Scalar<complex128>({5, -6})},
      {"string", Tensor::FromVector<std::string>({"", "a", std::string("nul\0byte", 8)})},
      {"string_scalar", Tensor::Scalar<std::string>("global_step")},
  };
}

void GraphSeeds(const fs::path& root, const std::vector<std::string>& graph_files) {
  Corpus binary(root, "graph_def_binary");
  Corpus text(root, "graph_def_text");
  auto add = [&](const std::string& name, const GraphDef& def) {
    binary.Add(name + ".pb", SerializeGraphDef(def));
    text.Add(name + ".pbtxt", SerializeGraphDefText(def));
  };
  auto check = [](const Scope& scope, const char* what) {
    if (!scope.status().ok()) {
      std::fprintf(stderr, "seed graph %s: %s\n", what, scope.status().ToString().c_str());
      std::exit(1);
    }
  };
  {  // a small classifier with its loss
    Scope s = Scope::NewRootScope();
    auto x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, {{"shape", PartialShape({-1, 3})}});
    auto labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32);
    auto w = ops::Const(s.WithOpName("w"), Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})));
    auto logits = ops::BiasAdd(s, ops::MatMul(s, x, w), ops::Const(s, {0.5f, -0.5f}));
    auto probs = ops::Softmax(s.WithOpName("probs"), ops::Relu(s, logits));
    auto loss = ops::SparseSoftmaxCrossEntropyWithLogits(s.WithOpName("loss"), logits, labels);
    ops::Sum(s.WithOpName("total"), loss.output(0), ops::Const(s, Tensor::FromVector<int32_t>({0})));
    (void)probs;
    check(s, "mlp");
    add("mlp", s.ToGraphDef());
  }
  {  // convolution and pooling
    Scope s = Scope::NewRootScope();
    auto image = ops::Placeholder(s.WithOpName("image"), DT_FLOAT,
                                  {{"shape", PartialShape({1, 6, 6, 2})}});
    auto filter = ops::Const(s, Tensor(DT_FLOAT, TensorShape({3, 3, 2, 4})));
    auto conv = ops::Conv2D(s, image, filter, {1, 1, 1, 1}, "SAME");
    auto pool = ops::MaxPool(s, conv, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
    auto avg = ops::AvgPool(s, conv, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME");
    ops::Reshape(s.WithOpName("flat"), pool, ops::Const(s, Tensor::FromVector<int32_t>({-1})));
    ops::Mean(s.WithOpName("mean"), avg, ops::Const(s, {1, 2}));
    check(s, "conv");
    add("conv", s.ToGraphDef());
  }
  {  // shape and array ops with constant inputs
    Scope s = Scope::NewRootScope();
    auto m = ops::Const(s.WithOpName("m"), Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})));
    auto tiled = ops::Tile(s, m, ops::Const(s, {2, 1}));
    auto padded = ops::Pad(s, tiled, ops::Const(s, Tensor::FromVector<int32_t>({1, 1, 0, 2}, TensorShape({2, 2}))));
    auto joined = ops::ConcatV2(s, {padded, padded}, ops::Const(s, 0));
    auto sliced = ops::StridedSlice(s, joined, ops::Const(s, {0, 0}), ops::Const(s, {-1, 4}),
                                    ops::Const(s, {2, 1}));
    auto halves = ops::Split(s, ops::Const(s, 1), sliced, 2);
    auto gathered = ops::GatherV2(s, halves.output(0), ops::Const(s, {0, 1, 0}), ops::Const(s, 0));
    auto t = ops::Transpose(s, gathered, ops::Const(s, {1, 0}));
    auto range = ops::Range(s, ops::Const(s, 0), ops::Const(s, 6), ops::Const(s, 1));
    auto filled = ops::Fill(s, ops::Const(s, {2, 3}), ops::Const(s, 1.f));
    auto shaped = ops::Reshape(s, range, ops::Shape(s, filled));
    ops::Slice(s.WithOpName("slice"), shaped, ops::Const(s, {0, 1}), ops::Const(s, {-1, 2}));
    ops::Unpack(s.WithOpName("rows"), t, 2);
    ops::ExpandDims(s.WithOpName("expanded"), t, ops::Const(s, -1));
    check(s, "arrays");
    add("arrays", s.ToGraphDef());
  }
  {  // a variable on a second device: placement and partitioning
    Scope s = Scope::NewRootScope();
    Scope cpu1 = s.WithDevice("/device:CPU:1");
    auto v = ops::VarHandleOp(cpu1.WithOpName("v"), DT_FLOAT, PartialShape({2}),
                              {{"shared_name", std::string("v")}});
    auto init = ops::AssignVariableOp(cpu1.WithOpName("init"), v, ops::Const(s, {1.f, 2.f}));
    auto read = ops::ReadVariableOp(s.WithControlDependencies({init}).WithOpName("read"), v,
                                    DT_FLOAT);
    ops::AddN(s.WithOpName("sum"), {read, read, ops::Const(s, {3.f, 4.f})});
    ops::NoOp(s.WithOpName("done").WithControlDependencies({init}));
    check(s, "variables");
    add("variables", s.ToGraphDef());
  }
  {  // control flow: a while loop whose body holds a cond, inside an outer loop
    Scope s = Scope::NewRootScope();
    auto n = ops::Placeholder(s.WithOpName("n"), DT_INT32, {{"shape", PartialShape({})}});
    auto x = ops::Const(s.WithOpName("x"), {1.f, 2.f});
    auto inner = [&](const Scope& scope, const Output& start, std::vector<Output>* out) {
      return ops::WhileLoop(
          scope, {ops::Const(scope, 0), start},
          [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
            *pred = ops::Less(c, v[0], n);
            return Status::OK();
          },
          [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
            std::vector<Output> branch;
            WEIR_RETURN_IF_ERROR(ops::Cond(
                b, ops::Less(b, v[0], 2),
                [&](const Scope& t, std::vector<Output>* o) {
                  o->push_back(ops::Mul(t, v[1], x));
                  return Status::OK();
                },
                [&](const Scope& e, std::vector<Output>* o) {
                  o->push_back(ops::AddV2(e, v[1], x));
                  return Status::OK();
                },
                &branch));
            *next = {ops::AddV2(b, v[0], 1), branch[0]};
            return Status::OK();
          },
          out);
    };
    std::vector<Output> outer;
    Status built = ops::WhileLoop(
        s.NewSubScope("outer"), {ops::Const(s, 0), x},
        [&](const Scope& c, const std::vector<Output>& v, Output* pred) {
          *pred = ops::Less(c, v[0], 3);
          return Status::OK();
        },
        [&](const Scope& b, const std::vector<Output>& v, std::vector<Output>* next) {
          std::vector<Output> out;
          WEIR_RETURN_IF_ERROR(inner(b.NewSubScope("inner"), v[1], &out));
          *next = {ops::AddV2(b, v[0], 1), out[1]};
          return Status::OK();
        },
        &outer);
    if (!built.ok()) {
      std::fprintf(stderr, "seed graph loops: %s\n", built.ToString().c_str());
      std::exit(1);
    }
    ops::Identity(s.WithOpName("result"), outer[1]);
    check(s, "loops");
    add("loops", s.ToGraphDef());
  }
  {  // function calls that double at each level: 2^30 nodes if expanded,
     // which the compiler must refuse before expanding (and the import's
     // shape inference must not instantiate 2^depth times)
    constexpr int kDepth = 30;
    GraphDef def;
    auto arg = [](const char* name) {
      ArgDef a;
      a.name = name;
      a.type = DT_FLOAT;
      return a;
    };
    for (int k = 0; k < kDepth; ++k) {
      FunctionDef f;
      f.signature.name = StrCat("double_", k);
      f.signature.inputs = {arg("x")};
      f.signature.outputs = {arg("y")};
      NodeDef first, second;
      first.name = "first";
      second.name = "second";
      if (k + 1 == kDepth) {
        first.op = second.op = "Neg";
        first.attrs["T"] = second.attrs["T"] = AttrValue(DT_FLOAT);
        first.inputs = {"x"};
        second.inputs = {"first:y:0"};
      } else {
        first.op = second.op = StrCat("double_", k + 1);
        first.inputs = {"x"};
        second.inputs = {"first:y:0"};
      }
      f.node_def = {first, second};
      f.ret["y"] = "second:y:0";
      def.library.functions.push_back(std::move(f));
    }
    NodeDef x, call;
    x.name = "x";
    x.op = "Placeholder";
    x.attrs["dtype"] = AttrValue(DT_FLOAT);
    call.name = "call";
    call.op = "double_0";
    call.inputs = {"x"};
    def.nodes = {x, call};
    add("function_doubling", def);
  }
  for (const std::string& file : graph_files) {
    StatusOr<GraphDef> def = ReadGraphDefFile(file);
    if (!def.ok()) {
      std::fprintf(stderr, "seed graph %s: %s\n", file.c_str(), def.status().ToString().c_str());
      std::exit(1);
    }
    add(fs::path(file).stem().string(), *def);
  }
  std::printf("graph_def_binary: %d seeds, graph_def_text: %d seeds\n", binary.count(),
              text.count());
}

void TensorProtoSeeds(const fs::path& root) {
  Corpus corpus(root, "tensor_proto");
  for (const auto& [name, tensor] : SampleTensors()) {
    wire::TensorProto proto;
    if (!TensorToProto(tensor, &proto).ok()) continue;
    corpus.Add(name, proto.SerializeAsString());
  }
  // The typed fields, shorter than the shape (the last value repeats).
  auto typed = [&](const std::string& name, int dtype, std::vector<int64_t> dims,
                   auto&& fill) {
    wire::TensorProto proto;
    proto.set_dtype(static_cast<wire::DataType>(dtype));
    for (int64_t d : dims) proto.mutable_tensor_shape()->add_dim()->set_size(d);
    fill(&proto);
    corpus.Add(name, proto.SerializeAsString());
  };
  typed("float_val", DT_FLOAT, {2, 2}, [](wire::TensorProto* p) { p->add_float_val(1.5f); });
  typed("int_val", DT_INT32, {3}, [](wire::TensorProto* p) { p->add_int_val(7); p->add_int_val(-1); });
  typed("int64_val", DT_INT64, {2}, [](wire::TensorProto* p) { p->add_int64_val(int64_t{1} << 40); });
  typed("half_val", DT_HALF, {2}, [](wire::TensorProto* p) { p->add_half_val(0x3c00); });
  typed("bool_val", DT_BOOL, {4}, [](wire::TensorProto* p) { p->add_bool_val(true); });
  typed("string_val", DT_STRING, {2}, [](wire::TensorProto* p) { p->add_string_val("ab"); });
  typed("scomplex_val", DT_COMPLEX64, {1}, [](wire::TensorProto* p) { p->add_scomplex_val(1); p->add_scomplex_val(2); });
  typed("uint64_val", DT_UINT64, {1}, [](wire::TensorProto* p) { p->add_uint64_val(~uint64_t{0}); });
  typed("zeros", DT_DOUBLE, {2, 0, 3}, [](wire::TensorProto*) {});
  std::printf("tensor_proto: %d seeds\n", corpus.count());
}

void NpySeeds(const fs::path& root) {
  Corpus corpus(root, "npy");
  for (const auto& [name, tensor] : SampleTensors()) {
    StatusOr<std::string> bytes = SerializeNpy(tensor);
    if (!bytes.ok()) continue;  // no NumPy type (bfloat16, string)
    corpus.Add(name + ".npy", *bytes);
    // The same array in format 2.0 (a 4-byte header length).
    std::string v2 = *bytes;
    const uint16_t header_len = static_cast<uint8_t>(v2[8]) | (static_cast<uint8_t>(v2[9]) << 8);
    v2[6] = 2;
    v2.insert(10, 2, '\0');
    v2[8] = static_cast<char>(header_len & 0xff);
    v2[9] = static_cast<char>(header_len >> 8);
    corpus.Add(name + ".v2.npy", v2);
  }
  std::printf("npy: %d seeds\n", corpus.count());
}

// The checkpoint harness's input layouts (see checkpoint_fuzzer.cc).
void CheckpointSeeds(const fs::path& root) {
  Corpus corpus(root, "checkpoint");
  const fs::path dir = fs::temp_directory_path() / ("weir_fuzz_seeds." + std::to_string(getpid()));
  std::vector<std::pair<std::string, Tensor>> tensors = SampleTensors();
  for (size_t begin = 0, part = 0; begin < tensors.size(); begin += 8, ++part) {
    const std::string prefix = (dir / ("ckpt" + std::to_string(part))).string();
    BundleWriter writer(prefix);
    for (size_t i = begin; i < std::min(begin + 8, tensors.size()); ++i) {
      if (!writer.Add(tensors[i].first, tensors[i].second).ok()) std::exit(1);
    }
    if (!writer.Finish().ok()) std::exit(1);
    const std::string index = ReadFileToString(BundleIndexFilename(prefix)).value();
    const std::string data = ReadFileToString(BundleDataFilename(prefix, 0, 1)).value();
    auto put16 = [](std::string* s, size_t v) {
      s->push_back(static_cast<char>(v & 0xff));
      s->push_back(static_cast<char>((v >> 8) & 0xff));
    };
    if (index.size() < 65536) {
      std::string raw(1, '\0');
      put16(&raw, index.size());
      corpus.Add("raw" + std::to_string(part), raw + index + data);
    }
    StatusOr<SSTable> table = SSTable::Parse(index, prefix);
    if (!table.ok()) std::exit(1);
    std::string structured = {'\1', '\1', static_cast<char>(table->entries().size())};
    for (const auto& [key, value] : table->entries()) {
      if (key.size() > 32 || value.size() > 511) std::exit(1);
      structured.push_back(static_cast<char>(key.size()));
      structured += key;
      put16(&structured, 511);
      put16(&structured, value.size());
      structured += value;
    }
    corpus.Add("entries" + std::to_string(part), structured + data);
  }
  fs::remove_all(dir);
  std::printf("checkpoint: %d seeds\n", corpus.count());
}

// Per op: its name, then byte patterns (nothing: defaults and scalars; and
// two fixed pseudo-random tails).
// The example harness's layout (see example_fuzzer.cc): a spec byte, then
// length-prefixed serialized Examples holding the specs' features.
void ExampleSeeds(const fs::path& root) {
  Corpus corpus(root, "example");
  auto example = [](int variant) {
    wire::Example e;
    auto& features = *e.mutable_features()->mutable_feature();
    if (variant != 1) {
      features["f"].mutable_float_list()->add_value(1.5f);
      features["f"].mutable_float_list()->add_value(-2.0f);
    }
    if (variant == 2) features["f"].mutable_float_list()->add_value(3.0f);
    features["i"].mutable_int64_list()->add_value(int64_t{1} << 40);
    features["s"].mutable_bytes_list()->add_value("abc");
    features["b"].mutable_bytes_list()->add_value(std::string("\0x", 2));
    features["f2"].mutable_float_list()->add_value(0.5f);
    return e.SerializeAsString();
  };
  for (int spec = 0; spec < 6; ++spec) {
    std::string input(1, static_cast<char>(spec));
    for (int variant = 0; variant < 3; ++variant) {
      const std::string bytes = example(variant);
      if (bytes.size() > 255) std::exit(1);
      input.push_back(static_cast<char>(bytes.size()));
      input += bytes;
    }
    corpus.Add("spec" + std::to_string(spec), input);
  }
  std::printf("example: %d seeds\n", corpus.count());
}

// The tfrecord harness's layouts (see tfrecord_fuzzer.cc): real files in
// each compression read raw (modes 0-2), and record lists to write (mode 3).
void TfRecordSeeds(const fs::path& root) {
  Corpus corpus(root, "tfrecord");
  const std::vector<std::string> records = {"", "a", std::string(300, 'x'), std::string("\0\1\2", 3),
                                            "the quick brown fox"};
  const fs::path path =
      fs::temp_directory_path() / ("weir_fuzz_seeds." + std::to_string(getpid()) + ".tfrecord");
  const RecordCompression compressions[] = {RecordCompression::kNone, RecordCompression::kZlib,
                                            RecordCompression::kGzip};
  for (int mode = 0; mode < 3; ++mode) {
    RecordWriterOptions options;
    options.compression = compressions[mode];
    options.atomic = false;
    auto writer = RecordWriter::Create(path.string(), options);
    if (!writer.ok()) std::exit(1);
    for (const std::string& r : records) {
      if (!(*writer)->Write(r).ok()) std::exit(1);
    }
    if (!(*writer)->Close().ok()) std::exit(1);
    const std::string file = ReadFileToString(path.string()).value();
    corpus.Add("file" + std::to_string(mode), std::string(1, static_cast<char>(mode)) + file);
    // Mode 3: compression, damage flag, offset (2 bytes), xor, then records.
    for (int damage = 0; damage < 2; ++damage) {
      std::string input = {'\3', static_cast<char>(mode), static_cast<char>(damage), '\x11', '\0',
                           '\x40'};
      for (const std::string& r : records) {
        if (r.size() > 255) continue;
        input.push_back(static_cast<char>(r.size()));
        input += r;
      }
      corpus.Add("written" + std::to_string(mode) + "_" + std::to_string(damage), input);
    }
  }
  fs::remove(path);
  std::printf("tfrecord: %d seeds\n", corpus.count());
}

void RunOpSeeds(const fs::path& root) {
  Corpus corpus(root, "run_op");
  uint32_t state = 12345;
  auto tail = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      state = state * 1103515245u + 12345u;
      s.push_back(static_cast<char>((state >> 16) & 0x3f));  // small: shapes stay small
    }
    return s;
  };
  for (const OpDef* op : OpRegistry::Global()->ListOps()) {
    const std::string head = op->name + std::string(1, '\0');
    corpus.Add(op->name + ".0", head);
    corpus.Add(op->name + ".1", head + tail(48));
    corpus.Add(op->name + ".2", head + tail(160));
  }
  std::printf("run_op: %d seeds\n", corpus.count());
}

// RecvTensor answers of a few dtypes as the sender splits them (whole, and
// in small messages), dead values, and RegisterGraph/RunGraph requests.
void WorkerWireSeeds(const fs::path& root) {
  namespace ww = worker_wire;
  Corpus corpus(root, "worker_wire");
  auto flatten = [](const grpc::ByteBuffer& buffer) {
    std::vector<grpc::Slice> slices;
    std::string bytes;
    if (!buffer.Dump(&slices).ok()) std::exit(1);
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return bytes;
  };
  auto answer = [&](const Tensor& value, bool is_dead, int64_t limit) {
    StatusOr<std::vector<grpc::ByteBuffer>> messages =
        EncodeRecvTensorResponse(value, is_dead, limit);
    if (!messages.ok()) {
      std::fprintf(stderr, "EncodeRecvTensorResponse: %s\n", messages.status().ToString().c_str());
      std::exit(1);
    }
    std::vector<std::string> out;
    for (const grpc::ByteBuffer& message : *messages) out.push_back(flatten(message));
    return out;
  };
  for (const auto& [name, tensor] : SampleTensors()) {
    if (name != "float_matrix" && name != "int64" && name != "string" && name != "half" &&
        name != "complex128" && name != "float_empty" && name != "bool") {
      continue;
    }
    corpus.Add("recv_" + name, ww::DecoderInput(answer(tensor, false, 4 << 20)));
    corpus.Add("recv_" + name + "_cut", ww::DecoderInput(answer(tensor, false, 4 << 20), 5));
  }
  // Bulk-transfer answers (dtype, shape, ticket, port, byte count; no
  // content), and one followed by a content message (refused).
  for (const auto& [name, tensor] : SampleTensors()) {
    if (name != "float_matrix" && name != "bool" && name != "float_empty") continue;
    const std::string bulk =
        flatten(EncodeBulkRecvTensorResponse(tensor, std::string(16, '\x5a'), 4242));
    corpus.Add("recv_bulk_" + name, ww::DecoderInput({bulk}));
    corpus.Add("recv_bulk_" + name + "_cut", ww::DecoderInput({bulk}, 7));
    if (name == "float_matrix") {
      corpus.Add("recv_bulk_then_content",
                 ww::DecoderInput({bulk, answer(tensor, false, 4 << 20).front()}));
    }
  }
  // A value in several messages (the limit leaves a few elements each).
  std::vector<float> many(64);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<float>(i) - 3.5f;
  corpus.Add("recv_float_split",
             ww::DecoderInput(answer(Tensor::FromVector<float>(many, TensorShape({8, 8})), false, 96)));
  corpus.Add("recv_string_split",
             ww::DecoderInput(answer(Tensor::FromVector<std::string>({"abc", "defg", "", "hi"}),
                                     false, 40)));
  corpus.Add("recv_dead", ww::DecoderInput(answer(Tensor(), true, 4 << 20)));

  GraphDef doubling = ww::DoublingPartition();
  wire::RegisterGraphRequest reg;
  reg.set_session_handle("s");
  GraphDefToProto(doubling, reg.mutable_graph_def());
  reg.add_feed_names("x");
  reg.add_fetch_names("y");
  auto run_request = [](const Tensor& x, bool trace) {
    wire::RunGraphRequest run;
    wire::NamedTensorProto* send = run.add_send();
    send->set_name("x");
    if (!TensorToProto(x, send->mutable_tensor()).ok()) std::exit(1);
    run.add_recv_key("y");
    run.mutable_exec_opts()->set_record_timeline(trace);
    return run.SerializeAsString();
  };
  const Tensor x = Tensor::FromVector<float>({1.5f, -2, 0, 3e30f}, TensorShape({2, 2}));
  corpus.Add("register_doubling", ww::RegisterInput(reg.SerializeAsString(), run_request(x, false)));
  corpus.Add("run_fixed", ww::RunFixedInput(run_request(x, false)));
  corpus.Add("run_fixed_trace", ww::RunFixedInput(run_request(Tensor::Scalar<float>(7), true)));
  corpus.Add("run_fixed_int", ww::RunFixedInput(run_request(Tensor::Scalar<int32_t>(7), false)));
  // A partition that sends a value to itself: _Send -> _Recv on one device.
  GraphDef loop;
  const std::string key_attrs = ww::kDevice;
  AttrMap send_recv = {{"tensor_name", std::string("edge_1")},
                       {"send_device", key_attrs},
                       {"send_device_incarnation", int64_t{1}},
                       {"recv_device", key_attrs},
                       {"client_terminated", false}};
  loop.nodes.push_back(ww::MakeNode("x", "_Arg", {}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
  AttrMap send_attrs = send_recv;
  send_attrs["T"] = DT_FLOAT;
  loop.nodes.push_back(ww::MakeNode("send", "_Send", {"x"}, send_attrs));
  AttrMap recv_attrs = send_recv;
  recv_attrs["tensor_type"] = DT_FLOAT;
  loop.nodes.push_back(ww::MakeNode("recv", "_Recv", {}, recv_attrs));
  loop.nodes.push_back(ww::MakeNode("y", "_Retval", {"recv"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
  reg.clear_graph_def();
  GraphDefToProto(loop, reg.mutable_graph_def());
  corpus.Add("register_send_recv", ww::RegisterInput(reg.SerializeAsString(), run_request(x, true)));
  std::printf("worker_wire: %d seeds\n", corpus.count());
}

// Traced steps' statistics as a worker sends them: nodes on two devices,
// a _Send/_Recv pair (the trace's flow arrow), a loop frame, extremes.
void StepStatsWireSeeds(const fs::path& root) {
  Corpus corpus(root, "step_stats_wire");
  auto node = [](std::string device, std::string name, std::string op, int64_t start, int64_t end) {
    NodeExecStats n;
    n.device = std::move(device);
    n.node_name = std::move(name);
    n.op = std::move(op);
    n.start_micros = start;
    n.end_micros = end;
    n.thread_id = 3;
    n.bytes_allocated = 64;
    return n;
  };
  const std::string ps = "/job:ps/replica:0/task:0/device:CPU:0";
  const std::string worker = "/job:worker/replica:0/task:0/device:CPU:0";
  StepStats step;
  step.nodes.push_back(node(ps, "w/read", "ReadVariableOp", 1700000000000000, 1700000000000010));
  step.nodes.push_back(node(ps, "edge_3_w/read/_0", "_Send", 1700000000000011, 1700000000000012));
  step.nodes.push_back(
      node(worker, "edge_3_w/read/_1", "_Recv", 1700000000000005, 1700000000000030));
  step.nodes.push_back(node(worker, "y", "MatMul", 1700000000000031, 1700000000000050));
  NodeExecStats in_loop = node(worker, "while/add", "AddV2", 1700000000000051, 1700000000000052);
  in_loop.frame_name = "while/while_context";
  in_loop.iteration = 4;
  step.nodes.push_back(in_loop);
  wire::StepStats proto;
  StepStatsToProto(step, &proto);
  corpus.Add("traced_step", proto.SerializeAsString());
  StepStats extremes;
  extremes.nodes.push_back(node(worker, "late", "NoOp", INT64_MAX - 1, INT64_MAX));
  extremes.nodes.push_back(node(worker, "early", "NoOp", INT64_MIN, INT64_MIN + 1));
  proto.Clear();
  StepStatsToProto(extremes, &proto);
  corpus.Add("extremes", proto.SerializeAsString());
  corpus.Add("empty", "");
  std::printf("step_stats_wire: %d seeds\n", corpus.count());
}

// The image_decode harness: an options byte, then small JPEGs and PNGs of
// every layout the encoders write, and truncated ones.
void ImageDecodeSeeds(const fs::path& root) {
  Corpus corpus(root, "image_decode");
  std::vector<uint8_t> pixels(9 * 7 * 4);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 % 251);
  std::vector<uint16_t> wide(9 * 7 * 4);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<uint16_t>(i * 2711);
  std::string out, error;
  for (int channels : {1, 3}) {
    for (bool progressive : {false, true}) {
      JpegEncodeOptions options;
      options.progressive = progressive;
      options.quality = 80;
      if (!EncodeJpegBytes(pixels.data(), 9, 7, channels, options, &out, &error)) continue;
      const std::string name = "jpeg_c" + std::to_string(channels) + (progressive ? "_p" : "");
      corpus.Add(name, std::string(1, '\x10') + out);
      corpus.Add(name + "_half", std::string(1, '\x30') + out.substr(0, out.size() / 2));
    }
  }
  for (int channels = 1; channels <= 4; ++channels) {
    if (EncodePngBytes(pixels.data(), 9, 7, channels, 8, 6, &out, &error)) {
      corpus.Add("png8_c" + std::to_string(channels), std::string(1, '\0') + out);
      corpus.Add("png8_c" + std::to_string(channels) + "_cut",
                 std::string(1, '\x20') + out.substr(0, out.size() - 9));
    }
    if (EncodePngBytes(wide.data(), 9, 7, channels, 16, 6, &out, &error)) {
      corpus.Add("png16_c" + std::to_string(channels), std::string(1, '\x80') + out);
    }
  }
  std::printf("image_decode: %d seeds\n", corpus.count());
}

}  // namespace
}  // namespace weir::fuzz

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [GRAPH_FILE...]\n", argv[0]);
    return 2;
  }
  weir::fuzz::InitOnce();
  const std::filesystem::path root(argv[1]);
  weir::fuzz::GraphSeeds(root, std::vector<std::string>(argv + 2, argv + argc));
  weir::fuzz::TensorProtoSeeds(root);
  weir::fuzz::NpySeeds(root);
  weir::fuzz::CheckpointSeeds(root);
  weir::fuzz::RunOpSeeds(root);
  weir::fuzz::TfRecordSeeds(root);
  weir::fuzz::ExampleSeeds(root);
  weir::fuzz::WorkerWireSeeds(root);
  weir::fuzz::StepStatsWireSeeds(root);
  weir::fuzz::ImageDecodeSeeds(root);
  return 0;
}
