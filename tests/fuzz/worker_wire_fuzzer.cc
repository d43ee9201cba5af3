// The worker service's wire, as a hostile peer writes it (issue 16): (a) a
// stream of RecvTensor answer messages into the receiver's decoder
// (RecvTensorDecoder), and (b) RegisterGraph and RunGraph requests into a
// Worker driven directly, without gRPC. The input format is in
// worker_wire_format.h.
//
// Invariants beyond "no crash, no sanitizer report, no hang":
// - a bulk-transfer answer is accepted only as the single message of a
//   numeric value without content, with a 16-byte ticket, a valid port and
//   a byte count equal to its shape's;
// - a decoded numeric value holds exactly the bytes the messages carried in
//   tensor_content (as protobuf's own parser reads them), and its byte size
//   is its shape's; a decoded value of any dtype passes TensorFromWire's
//   rules when sent again;
// - a RunGraph that succeeds answers every fetch it was asked for, each a
//   tensor that decodes; on the fixed partition, y == x * 2 bitwise for a
//   float feed;
// - the worker keeps no step state once the step is cleaned up;
// - no answer marks the held session lost (lost_session_handle).
// Allocations are capped at 256 MiB (MaxAllocationMb): a few bytes that
// declare a huge value must fail before allocating it.
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "proto/graph.pb.h"
#include "proto/node_def.pb.h"
#include "proto/worker_service.pb.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/worker_wire_format.h"
#include "weir/distributed/bulk_transfer.h"
#include "weir/distributed/cluster_spec.h"
#include "weir/distributed/wire_tensor.h"
#include "weir/distributed/worker.h"
#include "weir/framework/tensor_proto.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/device_mgr.h"

namespace weir::fuzz {

int MaxAllocationMb() { return 256; }

namespace {

using namespace worker_wire;

constexpr int64_t kMaxStepMs = 1000;  // a fuzzed graph may wait on a _Recv

// ---- (a) RecvTensorDecoder -------------------------------------------------

void FuzzDecoder(FuzzInput& in) {
  RecvTensorDecoder decoder("fuzzed RecvTensor");
  std::string content;  // tensor_content of every message, per protobuf
  bool all_parse = true;
  Status status;
  while (!in.empty() && status.ok()) {
    const size_t length = in.U16();
    const uint8_t cut = in.Byte();
    std::string_view rest = in.Rest();
    const std::string bytes(rest.substr(0, std::min(length, rest.size())));
    // Rest() consumed everything; hand back what follows this message.
    FuzzInput tail(reinterpret_cast<const uint8_t*>(rest.data()) + bytes.size(),
                   rest.size() - bytes.size());
    std::vector<grpc::Slice> slices;
    const size_t at = bytes.empty() || cut == 0 ? 0 : cut % bytes.size();
    if (at == 0) {
      slices.emplace_back(bytes);
    } else {
      slices.emplace_back(bytes.substr(0, at));
      slices.emplace_back(bytes.substr(at));
    }
    grpc::ByteBuffer message(slices.data(), slices.size());
    status = decoder.Add(message);
    wire::RecvTensorResponse parsed;
    if (parsed.ParseFromString(bytes)) {
      content += parsed.tensor().tensor_content();
    } else {
      all_parse = false;
    }
    in = tail;
  }
  if (!status.ok()) return;
  Tensor value;
  bool is_dead = false;
  if (!decoder.Finish(&value, &is_dead).ok() || is_dead) return;
  Require(value.IsInitialized(), "RecvTensorDecoder succeeded without a value");
  const DType dtype = value.dtype();
  if (decoder.bulk()) {
    // A bulk-transfer answer: the value is allocated for the side channel
    // to fill, and only from what the checks allow.
    Require(dtype != DT_STRING && dtype != DT_RESOURCE && dtype != DT_VARIANT,
            "a bulk-transfer answer of a non-numeric dtype was accepted");
    Require(content.empty(), "a bulk-transfer answer with tensor_content was accepted");
    Require(decoder.bulk_ticket().size() == kBulkTicketBytes, "a bulk ticket of the wrong size");
    Require(decoder.bulk_port() >= 1 && decoder.bulk_port() <= 65535, "a bulk port out of range");
    Require(static_cast<size_t>(decoder.bulk_bytes()) == value.TotalBytes() &&
                value.TotalBytes() ==
                    static_cast<size_t>(value.shape().num_elements()) * DTypeSize(dtype),
            "a bulk value's byte size is not its shape's or the answer's");
    return;  // its bytes are not in the messages
  }
  if (dtype != DT_STRING && dtype != DT_RESOURCE && dtype != DT_VARIANT) {
    Require(
        value.TotalBytes() == static_cast<size_t>(value.shape().num_elements()) * DTypeSize(dtype),
        "decoded value's byte size is not its shape's");
    if (all_parse && !content.empty()) {
      Require(content.size() == value.TotalBytes(),
              "decoded value's size differs from the tensor_content the messages carried");
      if (dtype == DT_BOOL) {
        // Any nonzero byte is true, as TensorFromProto reads it.
        const auto* bytes = static_cast<const unsigned char*>(value.raw_data());
        for (size_t i = 0; i < content.size(); ++i) {
          Require(bytes[i] == (content[i] != 0 ? 1 : 0),
                  "decoded bool is not the tensor_content byte read as a bool");
        }
      } else {
        Require(std::memcmp(content.data(), value.raw_data(), content.size()) == 0,
                "decoded value's bytes differ from the tensor_content the messages carried");
      }
    }
  }
  // What came in must go out again and come back the same.
  if (value.NumElements() > (1 << 16)) return;
  wire::TensorProto proto;
  Require(TensorToProto(value, &proto).ok(), "TensorToProto failed on a decoded value");
  Tensor again;
  Require(TensorFromWire(proto, "round trip", &again).ok(),
          "a decoded value does not pass TensorFromWire");
  Require(again.dtype() == value.dtype() && again.shape() == value.shape(),
          "round trip changed dtype or shape");
  if (dtype != DT_RESOURCE) Require(again.ContentEquals(value), "round trip changed values");
}

// ---- (b) a Worker ------------------------------------------------------------

// Ops a fuzzed partition may run: no files, no unbounded work, no waiting
// but on _Recv (bounded by kMaxStepMs). Graphs with others only register.
const std::set<std::string>& RunnableOps() {
  static const auto* ops = new std::set<std::string>{
      "_Arg", "_Retval", "_Send", "_Recv", "Const", "Identity", "IdentityN", "NoOp",
      "Add",  "AddV2",   "Sub",   "Mul",   "Neg",   "Cast",     "Square",    "ZerosLike"};
  return *ops;
}

struct WorkerUnderTest {
  std::unique_ptr<DeviceMgr> devices;
  std::unique_ptr<Worker> worker;
  std::string fixed_graph;
  int64_t next_step = 1;
};

WorkerUnderTest& TheWorker() {
  static WorkerUnderTest* w = [] {
    InitOnce();
    auto* t = new WorkerUnderTest;
    // An address, not a name: a fuzzed _Recv from another device of this
    // task calls it (refused at once), and a name would go through c-ares,
    // which leaks in ares_getaddrinfo (tests/sanitizers/lsan.supp).
    StatusOr<ClusterSpec> cluster = ClusterSpec::ParseFlags("worker=127.0.0.1:1");
    Require(cluster.ok(), "cluster spec");
    ClusterConfig config{*std::move(cluster), std::string("worker"), 0};
    Require(config.Validate().ok(), "cluster config");
    t->devices = DeviceMgr::NewCpuDevices(1, 1, "worker", 0);
    t->worker = std::make_unique<Worker>(config, t->devices.get(), 2);
    wire::CreateWorkerSessionRequest create;
    create.set_session_handle("s");
    Require(t->worker->CreateWorkerSession(create).ok(), "CreateWorkerSession");
    wire::RegisterGraphRequest reg;
    reg.set_session_handle("s");
    GraphDefToProto(DoublingPartition(), reg.mutable_graph_def());
    // std::string: GCC 12's -Wrestrict misfires on one-character literals.
    reg.add_feed_names(std::string("x"));
    reg.add_fetch_names(std::string("y"));
    wire::RegisterGraphResponse registered;
    Require(t->worker->RegisterGraph(reg, &registered).ok(), "RegisterGraph of the fixed graph");
    t->fixed_graph = registered.graph_handle();
    return t;
  }();
  return *w;
}

// Runs `run` on `graph_handle` with a fresh step id and a bounded time,
// then cleans the step up. Returns the response when the step succeeded.
bool RunAndClean(wire::RunGraphRequest run, const std::string& graph_handle,
                 wire::RunGraphResponse* response) {
  WorkerUnderTest& w = TheWorker();
  run.set_session_handle("s");
  run.set_graph_handle(graph_handle);
  const int64_t step_id = w.next_step++;
  run.set_step_id(step_id);
  if (run.timeout_ms() == 0 || run.timeout_ms() > kMaxStepMs) run.set_timeout_ms(kMaxStepMs);
  // Values fed that declare millions of string elements are legitimately
  // slow (each is an object); other dtypes stay under the allocation cap.
  for (const wire::NamedTensorProto& send : run.send()) {
    double elements = 1;
    for (const auto& dim : send.tensor().tensor_shape().dim()) {
      elements *= std::max<double>(dim.size(), 0);
    }
    if (elements > (1 << 20)) return false;
  }
  const Status status = w.worker->RunGraph(run, response);
  wire::CleanupGraphRequest cleanup;
  cleanup.set_step_id(step_id);
  (void)w.worker->CleanupGraph(cleanup);
  Require(w.worker->num_steps() == 0, "step state left after CleanupGraph");
  // "s" is held for good: no answer, failed or not, may mark it lost.
  Require(response->lost_session_handle().empty(), "RunGraph marked a held session lost");
  if (!status.ok()) return false;
  Require(response->recv_size() == run.recv_key_size(),
          "RunGraph succeeded without every fetch asked for");
  for (const wire::NamedTensorProto& recv : response->recv()) {
    Tensor value;
    Require(TensorFromWire(recv.tensor(), "fetch", &value).ok(),
            "RunGraph answered a fetch that does not decode");
  }
  return true;
}

void FuzzRegister(FuzzInput& in) {
  WorkerUnderTest& w = TheWorker();
  const size_t n = in.U16();
  std::string_view rest = in.Rest();
  const std::string_view reg_bytes = rest.substr(0, std::min(n, rest.size()));
  const std::string_view run_bytes = rest.substr(reg_bytes.size());
  wire::RegisterGraphRequest reg;
  if (!reg.ParseFromArray(reg_bytes.data(), static_cast<int>(reg_bytes.size()))) return;
  // The fuzzed session handle is kept when it is empty (an error path).
  if (!reg.session_handle().empty()) reg.set_session_handle("s");
  wire::RegisterGraphResponse registered;
  if (!w.worker->RegisterGraph(reg, &registered).ok()) return;
  Require(!registered.graph_handle().empty(), "RegisterGraph succeeded without a handle");
  bool runnable = true;
  for (const wire::NodeDef& node : reg.graph_def().node()) {
    if (!RunnableOps().count(node.op())) runnable = false;
  }
  if (reg.graph_def().has_library() && reg.graph_def().library().function_size() > 0) {
    runnable = false;
  }
  wire::RunGraphRequest run;
  if (runnable && run.ParseFromArray(run_bytes.data(), static_cast<int>(run_bytes.size()))) {
    wire::RunGraphResponse response;
    (void)RunAndClean(run, registered.graph_handle(), &response);
  }
  wire::DeregisterGraphRequest dereg;
  dereg.set_session_handle("s");
  dereg.set_graph_handle(registered.graph_handle());
  Require(w.worker->DeregisterGraph(dereg).ok(), "DeregisterGraph of a registered graph failed");
}

void FuzzRunFixed(FuzzInput& in) {
  WorkerUnderTest& w = TheWorker();
  std::string_view bytes = in.Rest();
  wire::RunGraphRequest run;
  if (!run.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  wire::RunGraphResponse response;
  if (!RunAndClean(run, w.fixed_graph, &response)) return;
  // y = x * 2 for a float x fed once and y fetched.
  if (run.send_size() != 1 || response.recv_size() < 1) return;
  Tensor x, y;
  if (!TensorFromWire(run.send(0).tensor(), "x", &x).ok() || x.dtype() != DT_FLOAT) return;
  Require(TensorFromWire(response.recv(0).tensor(), "y", &y).ok(), "y does not decode");
  Require(y.dtype() == DT_FLOAT && y.shape() == x.shape(), "y's dtype or shape is not x's");
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const float in = x.data<float>()[i];
    const float want = in * 2.f;
    const float got = y.data<float>()[i];
    if (std::isnan(want)) {
      Require(std::isnan(got), "y != x * 2 (NaN)");
    } else if (std::fpclassify(in) == FP_SUBNORMAL || std::fpclassify(want) == FP_SUBNORMAL) {
      // Weir's pool threads flush denormals to zero (base/denormal.h).
      Require(got == want || got == 0.f, "y != x * 2 (denormal)");
    } else {
      Require(std::memcmp(&want, &got, sizeof(float)) == 0, "y != x * 2");
    }
  }
}

}  // namespace
}  // namespace weir::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir::fuzz;
  InitOnce();
  FuzzInput in(data, size);
  switch (in.Byte() % 3) {
    case worker_wire::kDecoder: FuzzDecoder(in); break;
    case worker_wire::kRegister: FuzzRegister(in); break;
    default: FuzzRunFixed(in); break;
  }
  return 0;
}
