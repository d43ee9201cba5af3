// RecvTensor's wire format (wire_tensor.h): the sender's messages reference
// the tensor's buffer, the receiver copies each byte once, values over the
// message limit are split, protobuf's own parser reads every message, and
// hostile messages are refused.
#include "weir/distributed/wire_tensor.h"

#include <gtest/gtest.h>

#include <random>

#include "weir/distributed/credentials.h"
#include "weir/framework/tensor_proto.h"

namespace weir {
namespace {

constexpr int64_t k64KiB = 64 << 10;

Tensor Iota(int64_t n) {
  Tensor t(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) t.flat<float>()[i] = static_cast<float>(i) * 0.5f;
  return t;
}

std::vector<grpc::Slice> Slices(const grpc::ByteBuffer& message) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(message.Dump(&slices).ok());
  return slices;
}

std::string Bytes(const grpc::ByteBuffer& message) {
  std::string bytes;
  for (const grpc::Slice& slice : Slices(message)) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

grpc::ByteBuffer Message(const wire::RecvTensorResponse& proto) {
  grpc::Slice slice(proto.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

Status Decode(const std::vector<grpc::ByteBuffer>& messages, Tensor* value, bool* is_dead) {
  RecvTensorDecoder decoder("test");
  for (const grpc::ByteBuffer& message : messages) WEIR_RETURN_IF_ERROR(decoder.Add(message));
  return decoder.Finish(value, is_dead);
}

TEST(WireTensorTest, A16MiBTensorIsReferencedBySenderAndCopiedOnceByReceiver) {
  const int64_t n = 4 << 20;  // 16 MiB of float
  Tensor value = Iota(n);
  const WireCopyCounts before = GetWireCopyCounts();
  auto messages = EncodeRecvTensorResponse(value, false, kDefaultMaxMessageBytes);
  ASSERT_TRUE(messages.ok()) << messages.status();
  ASSERT_EQ(messages->size(), 1u);
  // The tensor's bytes are a slice over the tensor's own buffer.
  int referencing = 0;
  for (const grpc::Slice& slice : Slices((*messages)[0])) {
    if (slice.size() == value.TotalBytes() && slice.begin() == value.raw_data()) ++referencing;
  }
  EXPECT_EQ(referencing, 1);
  EXPECT_FALSE(value.RefCountIsOne());  // the message holds the buffer
  EXPECT_EQ(GetWireCopyCounts().sender - before.sender, 0);

  Tensor received;
  bool is_dead = true;
  ASSERT_TRUE(Decode(*messages, &received, &is_dead).ok());
  EXPECT_FALSE(is_dead);
  EXPECT_EQ(GetWireCopyCounts().receiver - before.receiver, n * 4);  // each byte once
  EXPECT_TRUE(received.ContentEquals(value));
  EXPECT_NE(received.raw_data(), value.raw_data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(received.raw_data()) % 64, 0u);

  messages->clear();  // gRPC done with the messages: the buffer is the tensor's alone again
  EXPECT_TRUE(value.RefCountIsOne());
}

TEST(WireTensorTest, ProtobufParsesTheMessagesAsRecvTensorResponse) {
  Tensor value = Iota(1000);
  auto one = EncodeRecvTensorResponse(value, false, kDefaultMaxMessageBytes);
  ASSERT_TRUE(one.ok());
  wire::RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Bytes((*one)[0])));
  EXPECT_FALSE(parsed.is_dead());
  Tensor from_proto;
  ASSERT_TRUE(TensorFromProto(parsed.tensor(), &from_proto).ok());
  EXPECT_TRUE(from_proto.ContentEquals(value));
  // Byte for byte what protobuf writes for the same message.
  wire::RecvTensorResponse reference;
  ASSERT_TRUE(TensorToProto(value, reference.mutable_tensor()).ok());
  EXPECT_EQ(Bytes((*one)[0]), reference.SerializeAsString());

  // Split: every message parses; the contents concatenate to the bytes.
  auto split = EncodeRecvTensorResponse(value, false, 1024);
  ASSERT_TRUE(split.ok());
  ASSERT_GT(split->size(), 3u);
  std::string content;
  for (size_t i = 0; i < split->size(); ++i) {
    wire::RecvTensorResponse part;
    ASSERT_TRUE(part.ParseFromString(Bytes((*split)[i]))) << i;
    EXPECT_EQ(part.tensor().has_tensor_shape(), i == 0) << i;
    content += part.tensor().tensor_content();
  }
  EXPECT_EQ(content, std::string(static_cast<const char*>(value.raw_data()), value.TotalBytes()));
}

TEST(WireTensorTest, ATensorOverTheLimitIsSplitIntoMessagesThatReferenceIt) {
  const int64_t n = 1 << 18;  // 1 MiB of float, 64 KiB messages
  Tensor value = Iota(n);
  const WireCopyCounts before = GetWireCopyCounts();
  auto messages = EncodeRecvTensorResponse(value, false, k64KiB);
  ASSERT_TRUE(messages.ok()) << messages.status();
  EXPECT_GE(messages->size(), 17u);
  EXPECT_LE(messages->size(), 18u);
  const char* next = static_cast<const char*>(value.raw_data());
  for (const grpc::ByteBuffer& message : *messages) {
    EXPECT_LE(static_cast<int64_t>(message.Length()), k64KiB);
    std::vector<grpc::Slice> slices = Slices(message);
    ASSERT_EQ(slices.size(), 2u);
    EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), next);  // in order, in place
    next += slices[1].size();
  }
  EXPECT_EQ(next, static_cast<const char*>(value.raw_data()) + value.TotalBytes());
  Tensor received;
  bool is_dead;
  ASSERT_TRUE(Decode(*messages, &received, &is_dead).ok());
  EXPECT_TRUE(received.ContentEquals(value));
  EXPECT_EQ(GetWireCopyCounts().sender - before.sender, 0);
  EXPECT_EQ(GetWireCopyCounts().receiver - before.receiver, n * 4);
}

TEST(WireTensorTest, DeadEmptyAndStringValues) {
  Tensor received;
  bool is_dead = false;
  auto dead = EncodeRecvTensorResponse(Tensor(), true, k64KiB);
  ASSERT_TRUE(dead.ok());
  ASSERT_TRUE(Decode(*dead, &received, &is_dead).ok());
  EXPECT_TRUE(is_dead);
  wire::RecvTensorResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(Bytes((*dead)[0])));
  EXPECT_TRUE(parsed.is_dead());

  Tensor empty(DT_INT64, TensorShape({0, 3}));
  auto empty_messages = EncodeRecvTensorResponse(empty, false, k64KiB);
  ASSERT_TRUE(empty_messages.ok());
  EXPECT_EQ(empty_messages->size(), 1u);
  ASSERT_TRUE(Decode(*empty_messages, &received, &is_dead).ok());
  EXPECT_FALSE(is_dead);
  EXPECT_EQ(received.dtype(), DT_INT64);
  EXPECT_EQ(received.shape(), TensorShape({0, 3}));

  Tensor strings(DT_STRING, TensorShape({50, 40}));
  for (int64_t i = 0; i < strings.NumElements(); ++i) {
    strings.flat<std::string>()[i] = std::string(static_cast<size_t>(i % 200), 'a' + i % 26);
  }
  auto string_messages = EncodeRecvTensorResponse(strings, false, k64KiB);
  ASSERT_TRUE(string_messages.ok()) << string_messages.status();
  EXPECT_GT(string_messages->size(), 2u);
  for (const grpc::ByteBuffer& message : *string_messages) {
    EXPECT_LE(static_cast<int64_t>(message.Length()), k64KiB);
  }
  ASSERT_TRUE(Decode(*string_messages, &received, &is_dead).ok());
  EXPECT_TRUE(received.ContentEquals(strings));

  // What cannot fit: one string element over the limit, a header over it.
  Tensor huge_element(DT_STRING, TensorShape({2}));
  huge_element.flat<std::string>()[1] = std::string(k64KiB, 'x');
  auto refused = EncodeRecvTensorResponse(huge_element, false, k64KiB);
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted) << refused.status();
  EXPECT_NE(refused.status().message().find("string element of 65536 bytes"), std::string::npos)
      << refused.status();
  EXPECT_EQ(EncodeRecvTensorResponse(Iota(10), false, 16).status().code(),
            Code::kResourceExhausted);
}

TEST(WireTensorTest, HostileMessagesAreRefused) {
  Tensor value;
  bool is_dead;
  auto float_message = [](std::vector<int64_t> dims, std::string content) {
    wire::RecvTensorResponse proto;
    proto.mutable_tensor()->set_dtype(static_cast<wire::DataType>(DT_FLOAT));
    for (int64_t d : dims) proto.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(d);
    proto.mutable_tensor()->set_tensor_content(std::move(content));
    return proto;
  };
  // A huge declared shape with 8 bytes: refused, nothing of its size allocated
  // (the decoder holds the 8 bytes until an eighth of the size came).
  Status s =
      Decode({Message(float_message({int64_t{1} << 40}, std::string(8, 'x')))}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("carried only 8 bytes"), std::string::npos) << s;
  EXPECT_NE(s.message().find("4398046511104 bytes"), std::string::npos) << s;
  // More bytes than the shape needs.
  s = Decode({Message(float_message({2}, std::string(12, 'x')))}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // Dims whose product overflows, negative dims.
  s = Decode({Message(float_message({int64_t{1} << 40, int64_t{1} << 40}, "x"))}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  s = Decode({Message(float_message({-5}, ""))}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // A second message that declares another shape.
  s = Decode({Message(float_message({2}, std::string(4, 'x'))),
              Message(float_message({1}, std::string(4, 'x')))},
             &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // Not protobuf at all; a truncated length; no message.
  grpc::Slice garbage(std::string("\x0a\xff\xff\xff\xff\x0f", 6));
  s = Decode({grpc::ByteBuffer(&garbage, 1)}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  grpc::Slice truncated(std::string("\x0a\x05\x08\x01", 4));
  s = Decode({grpc::ByteBuffer(&truncated, 1)}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  s = Decode({}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // An unknown dtype takes the protobuf path and its checks.
  wire::RecvTensorResponse bad_dtype = float_message({1}, "xxxx");
  bad_dtype.mutable_tensor()->set_dtype(static_cast<wire::DataType>(99));
  s = Decode({Message(bad_dtype)}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  // The protobuf path keeps wire_tensor's check: a short typed field.
  wire::RecvTensorResponse typed;
  typed.mutable_tensor()->set_dtype(static_cast<wire::DataType>(DT_FLOAT));
  typed.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  typed.mutable_tensor()->add_float_val(1.f);
  s = Decode({Message(typed)}, &value, &is_dead);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("carries only 1 values"), std::string::npos) << s;
}

// A message that repeats fields inside its tensor is read as protobuf
// reads it (found by worker_wire_fuzzer): the last tensor_content wins, and
// two tensor_shape fields merge (their dims concatenated). The reference is
// protobuf's own parser, through TensorFromWire.
TEST(WireTensorTest, RepeatedFieldsReadAsProtobufDoes) {
  auto field = [](int number, const std::string& payload) {
    std::string out(1, static_cast<char>(number << 3 | 2));
    out.push_back(static_cast<char>(payload.size()));  // payloads here are < 128 bytes
    return out + payload;
  };
  const std::string dtype("\x08\x01", 2);  // DT_FLOAT
  auto dim = [&](int size) { return field(2, std::string{'\x08', static_cast<char>(size)}); };
  auto floats = [](std::vector<float> v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  };
  const std::vector<std::string> tensors = {
      // shape [2]; content 1.0 then 2.0: protobuf keeps 2.0 alone (too short).
      dtype + field(2, dim(2)) + field(4, floats({1})) + field(4, floats({2})),
      // shape [1]; content 1, 2 then 3: protobuf keeps 3.
      dtype + field(2, dim(1)) + field(4, floats({1, 2})) + field(4, floats({3})),
      // shape [2] then [3]: protobuf reads [2, 3].
      dtype + field(2, dim(2)) + field(2, dim(3)) + field(4, floats({0, 1, 2, 3, 4, 5})),
  };
  for (size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(i);
    const std::string bytes = field(1, tensors[i]);
    wire::RecvTensorResponse parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    Tensor want;
    const Status want_status = TensorFromWire(parsed.tensor(), "want", &want);
    grpc::Slice slice(bytes);
    Tensor got;
    bool is_dead = true;
    const Status got_status = Decode({grpc::ByteBuffer(&slice, 1)}, &got, &is_dead);
    ASSERT_EQ(got_status.ok(), want_status.ok()) << got_status << " vs " << want_status;
    if (!want_status.ok()) continue;
    EXPECT_FALSE(is_dead);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_TRUE(got.ContentEquals(want)) << got.DebugString() << " vs " << want.DebugString();
  }
}

// A bool tensor's bytes other than 0 and 1 (found by worker_wire_fuzzer)
// are true, as TensorFromProto reads tensor_content, never a bool holding
// another byte (undefined behaviour to read).
TEST(WireTensorTest, BoolBytesOtherThanZeroAndOneAreTrue) {
  wire::RecvTensorResponse message;
  message.mutable_tensor()->set_dtype(static_cast<wire::DataType>(DT_BOOL));
  message.mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(4);
  message.mutable_tensor()->set_tensor_content(std::string("\x01\x40\x00\xff", 4));
  Tensor want;
  ASSERT_TRUE(TensorFromWire(message.tensor(), "want", &want).ok());
  Tensor got;
  bool is_dead = true;
  Status s = Decode({Message(message)}, &got, &is_dead);
  ASSERT_TRUE(s.ok()) << s;
  const auto* bytes = static_cast<const unsigned char*>(got.raw_data());
  EXPECT_EQ(std::vector<int>(bytes, bytes + 4), (std::vector<int>{1, 1, 0, 1}));
  EXPECT_TRUE(got.ContentEquals(want)) << got.DebugString() << " vs " << want.DebugString();
}

// Damaged messages (bytes flipped, cut short, a message dropped or
// repeated) are an error or a value of exactly the declared size, never a
// crash or a read past the bytes (run under valgrind or ASan to see the
// latter).
TEST(WireTensorTest, DamagedMessagesAreErrorsOrWholeValues) {
  Tensor value(DT_INT32, TensorShape({3, 100}));
  for (int i = 0; i < 300; ++i) value.flat<int32_t>()[i] = i;
  Tensor strings(DT_STRING, TensorShape({20}));
  for (int i = 0; i < 20; ++i) strings.flat<std::string>()[i] = std::string(i * 7, 'a' + i);
  std::mt19937 random(1234);
  int errors = 0;
  for (const Tensor& source : {value, strings}) {
    auto messages = EncodeRecvTensorResponse(source, false, 200);
    ASSERT_TRUE(messages.ok()) << messages.status();
    ASSERT_GT(messages->size(), 2u);
    std::vector<std::string> bytes;
    for (const grpc::ByteBuffer& message : *messages) bytes.push_back(Bytes(message));
    for (int trial = 0; trial < 3000; ++trial) {
      std::vector<std::string> damaged = bytes;
      std::string& target = damaged[random() % damaged.size()];
      switch (random() % 4) {
        case 0:  // flip a byte
          if (!target.empty()) target[random() % target.size()] ^= 1 + random() % 255;
          break;
        case 1:  // cut short
          target.resize(random() % (target.size() + 1));
          break;
        case 2:  // drop a message
          damaged.erase(damaged.begin() + random() % damaged.size());
          break;
        case 3:  // repeat one
          damaged.push_back(damaged[random() % damaged.size()]);
          break;
      }
      std::vector<grpc::ByteBuffer> parts;
      size_t carried = 0;
      for (const std::string& part : damaged) {
        carried += part.size();
        grpc::Slice slice(part);
        parts.emplace_back(&slice, 1);
      }
      Tensor decoded;
      bool is_dead = false;
      Status s = Decode(parts, &decoded, &is_dead);
      if (!s.ok()) {
        ++errors;
        EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
      } else if (!is_dead) {
        // A flipped content byte still decodes, to a value no larger than
        // what the messages carried (at most 8 bytes per value of a typed
        // field).
        EXPECT_TRUE(decoded.IsInitialized());
        EXPECT_LE(decoded.TotalBytes(), 8 * carried);
      }
    }
  }
  EXPECT_GT(errors, 1000);
}

}  // namespace
}  // namespace weir
