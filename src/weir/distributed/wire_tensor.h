// Tensors on the distributed runtime's wire. Internal to the layer's .cc
// files that speak gRPC (it names generated protobuf and gRPC types).
//
// RecvTensor's answer (proto/worker_service.proto) is written and read here
// without protobuf's message objects for numeric tensors: the sender's
// messages reference the tensor's own buffer (a grpc::Slice that holds a
// reference to it until gRPC has written it), and the receiver copies the
// bytes from gRPC's slices straight into the new tensor's buffer, once. The
// bytes are still a valid RecvTensorResponse for any protobuf parser.
#pragma once

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <string>
#include <vector>

#include "proto/tensor.pb.h"
#include "proto/worker_service.pb.h"
#include "weir/base/status.h"
#include "weir/framework/allocator.h"
#include "weir/framework/tensor.h"

namespace weir {

// TensorFromProto for a tensor that came from another process: refused
// (InvalidArgument naming `what`, the dtype and the declared shape) when the
// message declares more elements than it carries values, so a hostile
// shape never allocates its declared size. TensorToProto writes every
// element, so Weir's own messages always pass.
Status TensorFromWire(const wire::TensorProto& proto, std::string_view what, Tensor* out);

// Bytes of tensor values that Weir's own code copied on RecvTensor's path,
// process-wide since the start (for tests and benchmarks). `sender`: value
// bytes copied into outgoing messages (0 for numeric tensors, whose bytes
// are referenced; string and resource values are serialized, a copy).
// `receiver`: value bytes copied out of incoming messages (numeric: gRPC's
// slices -> the tensor's buffer, once; others: into a protobuf message and
// out of it). Copies inside gRPC and the kernel (socket buffers) are not
// counted. The small header (dtype, shape) is not counted either.
// `bulk_sent` / `bulk_received`: value bytes that went over the bulk-transfer
// channel instead (bulk_transfer.h): written from the value's buffer and read
// into the new tensor's by the kernel, not copied by Weir.
struct WireCopyCounts {
  int64_t sender = 0;
  int64_t receiver = 0;
  int64_t bulk_sent = 0;
  int64_t bulk_received = 0;
};
WireCopyCounts GetWireCopyCounts();

// RecvTensor's answer for `value` (or a dead value: `value` is ignored) as
// the messages of the response stream, none larger than
// `max_message_bytes`. Numeric values: each message references its part of
// `value`'s buffer (which stays alive until gRPC drops the message). String
// values are split between elements. ResourceExhausted when a message
// cannot fit the limit (a single string element larger than it, or a limit
// too small for the dtype and shape); Unimplemented for variant values.
StatusOr<std::vector<grpc::ByteBuffer>> EncodeRecvTensorResponse(const Tensor& value, bool is_dead,
                                                                 int64_t max_message_bytes);

// RecvTensor's answer for a value sent over the bulk-transfer channel: one
// message with the value's dtype and shape (no content) and
// RecvTensorResponse.bulk_transfer (`ticket`, `port`, the byte count).
grpc::ByteBuffer EncodeBulkRecvTensorResponse(const Tensor& value, const std::string& ticket,
                                              int port);

// Reassembles one RecvTensor answer from its messages, in order. Errors are
// InvalidArgument naming `what`, the dtype and the shape: a message that is
// not a RecvTensorResponse, one that changes the dtype or shape, more bytes
// than the shape needs, fewer at the end. The value's buffer is allocated
// once an eighth of its declared bytes came (until then the bytes stay in
// gRPC's slices, uncopied), so a few bytes never allocate a huge declared
// size. Numeric values are allocated from `allocator` (the receiving
// device's, so that its statistics count them; null: DefaultCpuAllocator).
class RecvTensorDecoder {
 public:
  explicit RecvTensorDecoder(std::string what, Allocator* allocator = nullptr)
      : what_(std::move(what)),
        allocator_(allocator != nullptr ? allocator : DefaultCpuAllocator()) {}

  Status Add(const grpc::ByteBuffer& message);
  // After the last message: the value, or is_dead. For a bulk answer
  // (bulk() after an OK Finish) `value` is allocated but not filled: its
  // bytes come over the bulk channel, then FinishBulk.
  Status Finish(Tensor* value, bool* is_dead);

  // A bulk answer (RecvTensorResponse.bulk_transfer), valid after Finish:
  // checked to be the only message, of a numeric dtype and a fully defined
  // shape whose checked byte size equals the byte count, with a ticket of
  // kBulkTicketBytes and a port in 1..65535.
  bool bulk() const { return bulk_; }
  const std::string& bulk_ticket() const { return bulk_ticket_; }
  int bulk_port() const { return bulk_port_; }
  int64_t bulk_bytes() const { return expected_bytes_; }
  // After the bytes came into `value`: as Finish does for the stream's.
  static void FinishBulk(Tensor* value);

 private:
  Status AddNumeric(const std::string& shape_bytes, bool has_dtype, int dtype,
                    std::vector<grpc::Slice> content);
  Status AddProto(const std::vector<grpc::Slice>& slices);
  Status Allocate();
  Status FinishBulkAnswer(Tensor* value);
  std::string Describe() const;

  std::string what_;
  Allocator* allocator_;
  int messages_ = 0;
  bool is_dead_ = false;
  enum class Path { kUnknown, kNumeric, kProto } path_ = Path::kUnknown;
  // Numeric path.
  DType dtype_ = DT_INVALID;
  TensorShape shape_;
  int64_t expected_bytes_ = 0;
  int64_t received_bytes_ = 0;
  std::vector<grpc::Slice> pending_;  // bytes that came before the buffer
  Tensor value_;
  // Proto path (string, resource and anything not numeric).
  wire::RecvTensorResponse merged_;
  // Bulk answer.
  bool bulk_ = false;
  std::string bulk_ticket_;
  int bulk_port_ = 0;
  int64_t bulk_declared_bytes_ = 0;
};

}  // namespace weir
