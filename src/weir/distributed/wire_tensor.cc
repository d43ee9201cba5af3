#include "weir/distributed/wire_tensor.h"

#include <atomic>
#include <cstring>
#include <memory>

#include "weir/base/checked_math.h"
#include "weir/distributed/bulk_transfer.h"
#include "weir/framework/tensor_proto.h"

namespace weir {

Status TensorFromWire(const wire::TensorProto& proto, std::string_view what, Tensor* out) {
  int64_t elements = 1;
  std::string dims;
  for (const auto& dim : proto.tensor_shape().dim()) {
    dims += StrCat(dims.empty() ? "" : ",", dim.size());
    std::optional<int64_t> product =
        dim.size() < 0 ? std::nullopt : MultiplyWithoutOverflow(elements, dim.size());
    if (!product) {
      return errors::InvalidArgument(what, ": tensor of ", WireDTypeName(proto.dtype()),
                                     " declares shape [", dims, "...], which is not valid");
    }
    elements = *product;
  }
  // Every element is at least one byte of tensor_content or one value of a
  // typed field.
  int64_t values = static_cast<int64_t>(proto.tensor_content().size()) + proto.half_val_size() +
                   proto.float_val_size() + proto.double_val_size() + proto.int_val_size() +
                   proto.string_val_size() + proto.scomplex_val_size() + proto.int64_val_size() +
                   proto.bool_val_size() + proto.dcomplex_val_size() +
                   proto.resource_handle_val_size() + proto.variant_val_size() +
                   proto.uint32_val_size() + proto.uint64_val_size();
  if (elements > values) {
    return errors::InvalidArgument(what, ": tensor of ", WireDTypeName(proto.dtype()),
                                   " declares shape [", dims, "] (", elements,
                                   " elements) but carries only ", values, " values");
  }
  return TensorFromProto(proto, out).WithContext(what);
}

namespace {

std::atomic<int64_t> sender_copied{0};
std::atomic<int64_t> receiver_copied{0};

// Protobuf's wire format, the few pieces RecvTensorResponse needs.
enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };
constexpr int kResponseTensor = 1;   // RecvTensorResponse.tensor
constexpr int kResponseIsDead = 2;   // RecvTensorResponse.is_dead
constexpr int kResponseBulk = 100;   // RecvTensorResponse.bulk_transfer
constexpr int kTensorDtype = 1;      // TensorProto.dtype
constexpr int kTensorShape = 2;      // TensorProto.tensor_shape
constexpr int kTensorVersion = 3;    // TensorProto.version_number
constexpr int kTensorContent = 4;    // TensorProto.tensor_content
constexpr int kMaxVarintBytes = 10;

void PutVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void PutTag(int field, WireType type, std::string* out) {
  PutVarint(static_cast<uint64_t>(field) << 3 | type, out);
}

size_t VarintSize(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

void ReleaseTensor(void* tensor) { std::unique_ptr<Tensor> release(static_cast<Tensor*>(tensor)); }

// `size` bytes of `value`'s buffer from `offset`, not copied: the slice
// holds a reference to the buffer until gRPC drops it.
grpc::Slice ReferenceBytes(const Tensor& value, size_t offset, size_t size) {
  auto holder = std::make_unique<Tensor>(value);
  char* bytes = static_cast<char*>(value.raw_data()) + offset;
  return grpc::Slice(bytes, size, ReleaseTensor, holder.release());
}

grpc::ByteBuffer MessageFromString(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string TooSmall(int64_t limit, const Tensor& value, std::string_view why) {
  return StrCat("RecvTensor: the message limit of ", limit, " bytes is too small for ", why,
                " of a ", value.dtype(), " tensor of shape ", value.shape());
}

StatusOr<std::vector<grpc::ByteBuffer>> EncodeNumeric(const Tensor& value, int64_t limit) {
  wire::TensorShapeProto shape;
  ShapeToProto(PartialShape(value.shape()), &shape);
  std::string header;  // TensorProto fields before the content
  PutTag(kTensorDtype, kVarint, &header);
  PutVarint(static_cast<uint64_t>(value.dtype()), &header);
  PutTag(kTensorShape, kLengthDelimited, &header);
  PutVarint(shape.ByteSizeLong(), &header);
  header += shape.SerializeAsString();

  const int64_t total = static_cast<int64_t>(value.TotalBytes());
  std::vector<grpc::ByteBuffer> messages;
  int64_t offset = 0;
  do {
    const std::string& fields = messages.empty() ? header : std::string();
    // Room for the content once the tags and lengths (at their longest) are in.
    const int64_t room = limit - (2 + 2 * kMaxVarintBytes + static_cast<int64_t>(fields.size()));
    const int64_t size = std::min(total - offset, std::max<int64_t>(room, 0));
    if (size == 0 && (offset < total || room < 0)) {
      return errors::ResourceExhausted(TooSmall(limit, value, "the header"));
    }
    std::string prefix;
    PutTag(kResponseTensor, kLengthDelimited, &prefix);
    const size_t content_field =
        size > 0 ? 1 + VarintSize(static_cast<uint64_t>(size)) + static_cast<size_t>(size) : 0;
    PutVarint(fields.size() + content_field, &prefix);
    prefix += fields;
    if (size > 0) {
      PutTag(kTensorContent, kLengthDelimited, &prefix);
      PutVarint(static_cast<uint64_t>(size), &prefix);
    }
    grpc::Slice slices[2] = {grpc::Slice(prefix), grpc::Slice()};
    if (size > 0) slices[1] = ReferenceBytes(value, offset, static_cast<size_t>(size));
    messages.emplace_back(slices, size > 0 ? 2 : 1);
    offset += size;
  } while (offset < total);
  return messages;
}

// String values: each message carries as many whole elements as fit.
StatusOr<std::vector<grpc::ByteBuffer>> EncodeStrings(const Tensor& value, int64_t limit) {
  std::vector<grpc::ByteBuffer> messages;
  wire::RecvTensorResponse message;
  message.mutable_tensor()->set_dtype(static_cast<wire::DataType>(DT_STRING));
  ShapeToProto(PartialShape(value.shape()), message.mutable_tensor()->mutable_tensor_shape());
  // The outer length may grow by a few bytes past ByteSizeLong's count.
  const int64_t room = limit - kMaxVarintBytes;
  int64_t size = static_cast<int64_t>(message.ByteSizeLong());
  if (size > room) return errors::ResourceExhausted(TooSmall(limit, value, "the header"));
  int64_t copied = 0;
  for (const std::string& element : value.flat<std::string>()) {
    // With room for the tensor field's own length to grow.
    const int64_t element_size = 1 + VarintSize(element.size()) + element.size() + kMaxVarintBytes;
    if (size + element_size > room && message.tensor().string_val_size() > 0) {
      messages.push_back(MessageFromString(message.SerializeAsString()));
      message.Clear();
      size = static_cast<int64_t>(message.ByteSizeLong());
    }
    if (size + element_size > room) {
      return errors::ResourceExhausted(
          TooSmall(limit, value, StrCat("a string element of ", element.size(), " bytes")));
    }
    message.mutable_tensor()->add_string_val(element);
    size += element_size;  // an upper bound: ByteSizeLong per element would be quadratic
    copied += static_cast<int64_t>(element.size());
  }
  messages.push_back(MessageFromString(message.SerializeAsString()));
  sender_copied.fetch_add(copied, std::memory_order_relaxed);
  return messages;
}

}  // namespace

WireCopyCounts GetWireCopyCounts() {
  BulkCounts bulk = GetBulkCounts();
  return {sender_copied.load(std::memory_order_relaxed),
          receiver_copied.load(std::memory_order_relaxed), bulk.sent, bulk.received};
}

grpc::ByteBuffer EncodeBulkRecvTensorResponse(const Tensor& value, const std::string& ticket,
                                              int port) {
  wire::RecvTensorResponse message;
  message.mutable_tensor()->set_dtype(static_cast<wire::DataType>(value.dtype()));
  ShapeToProto(PartialShape(value.shape()), message.mutable_tensor()->mutable_tensor_shape());
  wire::BulkTransfer* bulk = message.mutable_bulk_transfer();
  bulk->set_ticket(ticket);
  bulk->set_port(port);
  bulk->set_byte_count(static_cast<int64_t>(value.TotalBytes()));
  return MessageFromString(message.SerializeAsString());
}

StatusOr<std::vector<grpc::ByteBuffer>> EncodeRecvTensorResponse(const Tensor& value, bool is_dead,
                                                                 int64_t max_message_bytes) {
  if (is_dead) {
    std::string dead;
    PutTag(kResponseIsDead, kVarint, &dead);
    PutVarint(1, &dead);
    std::vector<grpc::ByteBuffer> messages;
    messages.push_back(MessageFromString(dead));
    return messages;
  }
  if (!IsNonPodDType(value.dtype())) return EncodeNumeric(value, max_message_bytes);
  if (value.dtype() == DT_STRING) return EncodeStrings(value, max_message_bytes);
  wire::RecvTensorResponse message;
  WEIR_RETURN_IF_ERROR(TensorToProto(value, message.mutable_tensor()));
  if (static_cast<int64_t>(message.ByteSizeLong()) > max_message_bytes) {
    return errors::ResourceExhausted(
        TooSmall(max_message_bytes, value, StrCat(message.ByteSizeLong(), " bytes")));
  }
  sender_copied.fetch_add(static_cast<int64_t>(message.ByteSizeLong()), std::memory_order_relaxed);
  std::vector<grpc::ByteBuffer> messages;
  messages.push_back(MessageFromString(message.SerializeAsString()));
  return messages;
}

namespace {

// Reads protobuf's wire format across a message's slices without copying.
class SliceReader {
 public:
  explicit SliceReader(const std::vector<grpc::Slice>& slices) : slices_(slices) {
    while (index_ < slices_.size() && slices_[index_].size() == 0) ++index_;
  }

  size_t position() const { return position_; }

  bool ReadVarint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (index_ == slices_.size()) return false;
      const uint8_t byte = slices_[index_].begin()[offset_];
      Advance(1);
      *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  // The next `size` bytes, as slices that share gRPC's memory.
  bool Take(uint64_t size, std::vector<grpc::Slice>* out) {
    while (size > 0) {
      if (index_ == slices_.size()) return false;
      const size_t here = std::min<uint64_t>(size, slices_[index_].size() - offset_);
      if (out != nullptr) out->push_back(slices_[index_].sub(offset_, offset_ + here));
      Advance(here);
      size -= here;
    }
    return true;
  }

  bool Skip(WireType type) {
    uint64_t size = 0;
    switch (type) {
      case kVarint: return ReadVarint(&size);
      case kFixed64: return Take(8, nullptr);
      case kFixed32: return Take(4, nullptr);
      case kLengthDelimited: return ReadVarint(&size) && Take(size, nullptr);
    }
    return false;
  }

 private:
  void Advance(size_t bytes) {
    offset_ += bytes;
    position_ += bytes;
    while (index_ < slices_.size() && offset_ == slices_[index_].size()) {
      ++index_;
      offset_ = 0;
    }
  }

  const std::vector<grpc::Slice>& slices_;
  size_t index_ = 0;
  size_t offset_ = 0;
  size_t position_ = 0;
};

std::string Flatten(const std::vector<grpc::Slice>& slices) {
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

int64_t TotalSize(const std::vector<grpc::Slice>& slices) {
  int64_t total = 0;
  for (const grpc::Slice& slice : slices) total += static_cast<int64_t>(slice.size());
  return total;
}

}  // namespace

std::string RecvTensorDecoder::Describe() const {
  return StrCat(what_, ": tensor of ", dtype_, " and shape ", shape_, " (", expected_bytes_,
                " bytes)");
}

Status RecvTensorDecoder::Add(const grpc::ByteBuffer& message) {
  std::vector<grpc::Slice> slices;
  if (!message.Dump(&slices).ok()) {
    return errors::InvalidArgument(what_, ": RecvTensor message ", messages_, " is unreadable");
  }
  ++messages_;
  const auto malformed = [&] {
    return errors::InvalidArgument(what_, ": RecvTensor message ", messages_ - 1,
                                   " is not a RecvTensorResponse");
  };
  // The fields that the numeric path reads; any other TensorProto field
  // (typed values) sends the message down the protobuf path.
  bool has_dtype = false;
  uint64_t dtype = 0;
  std::string shape_bytes;
  std::vector<grpc::Slice> content;
  bool other_fields = false;
  SliceReader reader(slices);
  const size_t end = static_cast<size_t>(TotalSize(slices));
  while (reader.position() < end) {
    uint64_t tag;
    if (!reader.ReadVarint(&tag)) return malformed();
    const auto type = static_cast<WireType>(tag & 7);
    if (tag >> 3 == kResponseTensor && type == kLengthDelimited) {
      uint64_t length;
      if (!reader.ReadVarint(&length) || length > end - reader.position()) return malformed();
      const size_t tensor_end = reader.position() + length;
      while (reader.position() < tensor_end) {
        uint64_t field;
        if (!reader.ReadVarint(&field)) return malformed();
        const auto field_type = static_cast<WireType>(field & 7);
        bool ok = true;
        if (field >> 3 == kTensorDtype && field_type == kVarint) {
          has_dtype = true;
          ok = reader.ReadVarint(&dtype);
        } else if (field >> 3 == kTensorShape && field_type == kLengthDelimited) {
          uint64_t size;
          std::vector<grpc::Slice> shape;
          ok = reader.ReadVarint(&size) && size <= end && reader.Take(size, &shape);
          // As protobuf reads it: a shape given twice is the two merged
          // (their dims concatenated), which parsing the bytes joined does.
          shape_bytes += Flatten(shape);  // a few bytes per dimension
        } else if (field >> 3 == kTensorContent && field_type == kLengthDelimited) {
          uint64_t size;
          // As protobuf reads it: the last tensor_content of a message wins.
          content.clear();
          ok = reader.ReadVarint(&size) && size <= end && reader.Take(size, &content);
        } else {
          other_fields = other_fields || field >> 3 != kTensorVersion;
          ok = reader.Skip(field_type);
        }
        if (!ok || reader.position() > tensor_end) return malformed();
      }
    } else if (tag >> 3 == kResponseBulk && type == kLengthDelimited) {
      uint64_t length;
      std::vector<grpc::Slice> bytes;
      wire::BulkTransfer bulk;
      if (!reader.ReadVarint(&length) || length > end - reader.position() ||
          !reader.Take(length, &bytes) || !bulk.ParseFromString(Flatten(bytes))) {
        return malformed();
      }
      if (messages_ != 1) {
        return errors::InvalidArgument(what_, ": RecvTensor message ", messages_ - 1,
                                       " announces a bulk transfer after the first message");
      }
      bulk_ = true;
      bulk_ticket_ = bulk.ticket();
      bulk_port_ = bulk.port();
      bulk_declared_bytes_ = bulk.byte_count();
    } else if (tag >> 3 == kResponseIsDead && type == kVarint) {
      uint64_t dead;
      if (!reader.ReadVarint(&dead)) return malformed();
      is_dead_ = is_dead_ || dead != 0;
    } else if (!reader.Skip(type)) {
      return malformed();
    }
  }
  if (bulk_ && messages_ > 1) {
    return errors::InvalidArgument(what_, ": RecvTensor message ", messages_ - 1,
                                   " follows a bulk-transfer answer");
  }
  if (path_ == Path::kUnknown) {
    const bool numeric = has_dtype && !other_fields && dtype < 1024 &&
                         IsValidDType(static_cast<int>(dtype)) &&
                         !IsNonPodDType(static_cast<DType>(dtype));
    path_ = numeric ? Path::kNumeric : Path::kProto;
  }
  if (path_ == Path::kProto) return AddProto(slices);
  if (other_fields) {
    return errors::InvalidArgument(Describe(), ": RecvTensor message ", messages_ - 1,
                                   " carries typed values after tensor_content");
  }
  return AddNumeric(shape_bytes, has_dtype, static_cast<int>(dtype), std::move(content));
}

Status RecvTensorDecoder::AddNumeric(const std::string& shape_bytes, bool has_dtype, int dtype,
                                     std::vector<grpc::Slice> content) {
  if (messages_ == 1) {
    dtype_ = static_cast<DType>(dtype);
    wire::TensorShapeProto shape;
    PartialShape partial;
    if (!shape.ParseFromString(shape_bytes)) {
      return errors::InvalidArgument(what_, ": tensor of ", dtype_, " has a malformed shape");
    }
    Status parsed = ShapeFromProto(shape, &partial);
    if (parsed.ok() && !partial.IsFullyDefined()) {
      parsed = errors::InvalidArgument("shape ", partial, " is not fully defined");
    }
    StatusOr<TensorShape> full =
        parsed.ok() ? TensorShape::FromDims(partial.dim_sizes()) : StatusOr<TensorShape>(parsed);
    if (!full.ok()) {
      return errors::InvalidArgument(what_, ": tensor of ", dtype_, ": ", full.status().message());
    }
    shape_ = *full;
    WEIR_RETURN_IF_ERROR(CheckedMultiply(shape_.num_elements(),
                                         static_cast<int64_t>(DTypeSize(dtype_)), &expected_bytes_,
                                         "tensor bytes")
                             .WithContext(Describe()));
  } else if ((has_dtype && dtype != dtype_) || !shape_bytes.empty()) {
    return errors::InvalidArgument(Describe(), ": RecvTensor message ", messages_ - 1,
                                   " declares the dtype or shape again");
  }
  for (grpc::Slice& slice : content) {
    const int64_t size = static_cast<int64_t>(slice.size());
    if (size > expected_bytes_ - received_bytes_) {
      return errors::InvalidArgument(Describe(), ": RecvTensor carries more than ", expected_bytes_,
                                     " bytes");
    }
    if (value_.IsInitialized()) {
      std::memcpy(static_cast<char*>(value_.raw_data()) + received_bytes_, slice.begin(),
                  slice.size());
      receiver_copied.fetch_add(size, std::memory_order_relaxed);
    } else {
      pending_.push_back(std::move(slice));
    }
    received_bytes_ += size;
  }
  // Allocated once an eighth of the bytes are here: a hostile peer cannot
  // make this task allocate more than 8x what it sent.
  if (!value_.IsInitialized() && received_bytes_ >= expected_bytes_ / 8 && received_bytes_ > 0) {
    return Allocate();
  }
  return Status::OK();
}

Status RecvTensorDecoder::Allocate() {
  StatusOr<Tensor> value = Tensor::Allocate(allocator_, dtype_, shape_);
  if (!value.ok()) return value.status().WithContext(Describe());
  value_ = std::move(*value);
  int64_t offset = 0;
  for (const grpc::Slice& slice : pending_) {
    std::memcpy(static_cast<char*>(value_.raw_data()) + offset, slice.begin(), slice.size());
    offset += static_cast<int64_t>(slice.size());
  }
  receiver_copied.fetch_add(offset, std::memory_order_relaxed);
  pending_.clear();
  return Status::OK();
}

Status RecvTensorDecoder::AddProto(const std::vector<grpc::Slice>& slices) {
  wire::RecvTensorResponse message;
  const std::string bytes = Flatten(slices);
  if (!message.ParseFromString(bytes)) {
    return errors::InvalidArgument(what_, ": RecvTensor message ", messages_ - 1,
                                   " is not a RecvTensorResponse");
  }
  receiver_copied.fetch_add(static_cast<int64_t>(bytes.size()), std::memory_order_relaxed);
  // Repeated fields (string_val...) append; the rest is the first message's.
  if (messages_ > 1) {
    message.mutable_tensor()->clear_dtype();
    message.mutable_tensor()->clear_tensor_shape();
  }
  merged_.MergeFrom(message);
  return Status::OK();
}

Status RecvTensorDecoder::Finish(Tensor* value, bool* is_dead) {
  if (messages_ == 0) {
    return errors::InvalidArgument(what_, ": RecvTensor answered with no message");
  }
  *is_dead = is_dead_;
  if (bulk_) return FinishBulkAnswer(value);
  if (is_dead_) return Status::OK();
  if (path_ == Path::kProto) return TensorFromWire(merged_.tensor(), what_, value);
  if (received_bytes_ != expected_bytes_) {
    return errors::InvalidArgument(Describe(), ": RecvTensor carried only ", received_bytes_,
                                   " bytes");
  }
  if (!value_.IsInitialized()) WEIR_RETURN_IF_ERROR(Allocate());
  FinishBulk(&value_);
  *value = std::move(value_);
  return Status::OK();
}

void RecvTensorDecoder::FinishBulk(Tensor* value) {
  if (value->dtype() == DT_BOOL) {
    // As TensorFromProto reads tensor_content: any nonzero byte is true (a
    // bool holding another byte is undefined behaviour to read).
    auto* bytes = static_cast<unsigned char*>(value->raw_data());
    const auto size = static_cast<int64_t>(value->TotalBytes());
    for (int64_t i = 0; i < size; ++i) bytes[i] = bytes[i] != 0;
  }
}

Status RecvTensorDecoder::FinishBulkAnswer(Tensor* value) {
  // Checked before anything is allocated: the size is the shape's (checked
  // arithmetic in AddNumeric), and the sender's byte count must agree.
  if (path_ != Path::kNumeric || is_dead_ || messages_ != 1 || received_bytes_ != 0) {
    return errors::InvalidArgument(what_,
                                   ": a bulk-transfer answer must be the only message, of a live "
                                   "numeric value without tensor_content");
  }
  if (bulk_declared_bytes_ != expected_bytes_) {
    return errors::InvalidArgument(Describe(), ": the bulk-transfer answer declares ",
                                   bulk_declared_bytes_, " bytes");
  }
  if (bulk_ticket_.size() != kBulkTicketBytes || bulk_port_ < 1 || bulk_port_ > 65535) {
    return errors::InvalidArgument(Describe(), ": the bulk-transfer answer has a ticket of ",
                                   bulk_ticket_.size(), " bytes and port ", bulk_port_);
  }
  StatusOr<Tensor> allocated = Tensor::Allocate(allocator_, dtype_, shape_);
  if (!allocated.ok()) return allocated.status().WithContext(Describe());
  *value = std::move(*allocated);
  return Status::OK();
}

}  // namespace weir
