// The input format of worker_wire_fuzzer, shared with seed_writer.cc so the
// seeds are written by the same rules the harness reads them with.
//
// Byte 0 picks the target (its value mod 3):
//   kDecoder:  a stream of RecvTensor answer messages, each
//              [u16 little-endian length][u8 cut][length bytes]; the message
//              reaches RecvTensorDecoder as two slices split at cut % length
//              (one slice when cut is 0), as gRPC may hand them over.
//   kRegister: [u16 n][n bytes: a RegisterGraphRequest][the rest: a
//              RunGraphRequest], registered on a Worker and, when it
//              registers and holds only the ops of RunnableOps(), run.
//   kRunFixed: [the rest: a RunGraphRequest] run on the fixed partition
//              DoublingPartition() (feed "x", fetch "y" = x * 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weir/framework/node_def.h"
#include "weir/framework/tensor.h"

namespace weir::fuzz::worker_wire {

enum Target : uint8_t { kDecoder = 0, kRegister = 1, kRunFixed = 2 };

inline constexpr char kTask[] = "/job:worker/replica:0/task:0";
inline constexpr char kDevice[] = "/job:worker/replica:0/task:0/device:CPU:0";

inline void AppendU16(std::string* out, size_t n) {
  out->push_back(static_cast<char>(n & 0xff));
  out->push_back(static_cast<char>((n >> 8) & 0xff));
}

// Messages (each under 64 KiB) as kDecoder's input.
inline std::string DecoderInput(const std::vector<std::string>& messages, uint8_t cut = 0) {
  std::string out(1, static_cast<char>(kDecoder));
  for (const std::string& message : messages) {
    AppendU16(&out, message.size());
    out.push_back(static_cast<char>(cut));
    out += message;
  }
  return out;
}

inline std::string RegisterInput(const std::string& register_request,
                                 const std::string& run_request) {
  std::string out(1, static_cast<char>(kRegister));
  AppendU16(&out, register_request.size());
  return out + register_request + run_request;
}

inline std::string RunFixedInput(const std::string& run_request) {
  return std::string(1, static_cast<char>(kRunFixed)) + run_request;
}

inline NodeDef MakeNode(std::string name, std::string op, std::vector<std::string> inputs,
                        AttrMap attrs) {
  NodeDef node;
  node.name = std::move(name);
  node.op = std::move(op);
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.device = kDevice;
  return node;
}

// y = x * 2 as a partition of this task: _Arg -> Mul -> _Retval.
inline GraphDef DoublingPartition() {
  GraphDef def;
  def.nodes.push_back(MakeNode("x", "_Arg", {}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
  def.nodes.push_back(
      MakeNode("two", "Const", {}, {{"dtype", DT_FLOAT}, {"value", Tensor::Scalar<float>(2.f)}}));
  def.nodes.push_back(MakeNode("mul", "Mul", {"x", "two"}, {{"T", DT_FLOAT}}));
  def.nodes.push_back(MakeNode("y", "_Retval", {"mul"}, {{"T", DT_FLOAT}, {"index", int64_t{0}}}));
  return def;
}

}  // namespace weir::fuzz::worker_wire
