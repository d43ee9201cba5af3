#include "weir/framework/tensor_proto.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <string>
#include <vector>

#include "proto/tensor.pb.h"

namespace weir {
namespace {

// "08 01 2a 04" -> the bytes 0x08 0x01 0x2a 0x04.
std::string Hex(std::string_view text) {
  std::string bytes;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    bytes.push_back(static_cast<char>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
    i += 2;
  }
  return bytes;
}

std::string ToHex(const std::string& bytes) {
  std::string out;
  char buffer[4];
  for (unsigned char c : bytes) {
    std::snprintf(buffer, sizeof(buffer), out.empty() ? "%02x" : " %02x", c);
    out += buffer;
  }
  return out;
}

Tensor Decode(const std::string& bytes) {
  wire::TensorProto proto;
  EXPECT_TRUE(proto.ParseFromString(bytes));
  Tensor t;
  Status s = TensorFromProto(proto, &t);
  EXPECT_TRUE(s.ok()) << s;
  return t;
}

Status DecodeStatus(const wire::TensorProto& proto) {
  Tensor t;
  return TensorFromProto(proto, &t);
}

// A tensor of `dtype` and `shape` whose elements differ from each other and
// from zero, to catch swapped or dropped values.
Tensor Sample(DType dtype, const TensorShape& shape) {
  Tensor t(dtype, shape);
  int64_t n = t.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DT_FLOAT: t.data<float>()[i] = 1.5f * i - 3.25f; break;
      case DT_DOUBLE: t.data<double>()[i] = 1e300 / (i + 1); break;
      case DT_INT32: t.data<int32_t>()[i] = -2000000000 + static_cast<int32_t>(i); break;
      case DT_UINT8: t.data<uint8_t>()[i] = static_cast<uint8_t>(250 + i); break;
      case DT_INT16: t.data<int16_t>()[i] = static_cast<int16_t>(-32768 + i); break;
      case DT_INT8: t.data<int8_t>()[i] = static_cast<int8_t>(-128 + i); break;
      case DT_STRING: t.data<std::string>()[i] = std::string("s\0x", 3) + std::to_string(i); break;
      case DT_COMPLEX64: t.data<complex64>()[i] = complex64(i, -0.5f * i); break;
      case DT_INT64: t.data<int64_t>()[i] = INT64_MIN + i; break;
      case DT_BOOL: t.data<bool>()[i] = i % 2 == 0; break;
      case DT_BFLOAT16: t.data<Eigen::bfloat16>()[i] = Eigen::bfloat16(0.25f * i - 1); break;
      case DT_UINT16: t.data<uint16_t>()[i] = static_cast<uint16_t>(65535 - i); break;
      case DT_COMPLEX128: t.data<complex128>()[i] = complex128(1e-300 * i, i); break;
      case DT_HALF: t.data<Eigen::half>()[i] = Eigen::half(0.5f * i - 2); break;
      case DT_RESOURCE:
        t.data<ResourceHandle>()[i] =
            ResourceHandle("/device:CPU:0", "c", "v" + std::to_string(i), "Var");
        break;
      case DT_UINT32: t.data<uint32_t>()[i] = 4294967295u - i; break;
      case DT_UINT64: t.data<uint64_t>()[i] = UINT64_MAX - i; break;
      default: ADD_FAILURE() << "no sample for " << dtype;
    }
  }
  return t;
}

constexpr DType kAllDTypes[] = {
    DT_FLOAT,  DT_DOUBLE,   DT_INT32,     DT_UINT8,  DT_INT16,    DT_INT8,
    DT_STRING, DT_COMPLEX64, DT_INT64,    DT_BOOL,   DT_BFLOAT16, DT_UINT16,
    DT_COMPLEX128, DT_HALF, DT_RESOURCE, DT_UINT32, DT_UINT64,
};

TEST(TensorProtoTest, RoundTripsEveryDType) {
  for (DType dtype : kAllDTypes) {
    for (const TensorShape& shape : {TensorShape(), TensorShape({2, 3}), TensorShape({0, 4})}) {
      Tensor original = Sample(dtype, shape);
      wire::TensorProto proto;
      ASSERT_TRUE(TensorToProto(original, &proto).ok());
      // Through bytes too, so the schema itself is exercised.
      wire::TensorProto parsed;
      ASSERT_TRUE(parsed.ParseFromString(proto.SerializeAsString()));
      Tensor decoded;
      Status s = TensorFromProto(parsed, &decoded);
      ASSERT_TRUE(s.ok()) << dtype << " " << shape << ": " << s;
      EXPECT_TRUE(decoded.ContentEquals(original))
          << original.DebugString() << " vs " << decoded.DebugString();
    }
  }
}

TEST(TensorProtoTest, EncodesNumericAsContentAndOthersAsTypedFields) {
  wire::TensorProto proto;
  ASSERT_TRUE(TensorToProto(Tensor::FromVector<float>({1, 2}), &proto).ok());
  EXPECT_EQ(proto.dtype(), wire::DT_FLOAT);
  EXPECT_EQ(proto.tensor_content().size(), 8u);
  EXPECT_EQ(proto.float_val_size(), 0);

  ASSERT_TRUE(TensorToProto(Tensor::FromVector<std::string>({"a", "bc"}), &proto).ok());
  EXPECT_EQ(proto.dtype(), wire::DT_STRING);
  EXPECT_TRUE(proto.tensor_content().empty());
  ASSERT_EQ(proto.string_val_size(), 2);
  EXPECT_EQ(proto.string_val(1), "bc");

  ASSERT_TRUE(TensorToProto(Sample(DT_RESOURCE, TensorShape({1})), &proto).ok());
  ASSERT_EQ(proto.resource_handle_val_size(), 1);
  EXPECT_EQ(proto.resource_handle_val(0).container(), "c");
  EXPECT_EQ(proto.resource_handle_val(0).name(), "v0");
  EXPECT_EQ(proto.resource_handle_val(0).maybe_type_name(), "Var");
  EXPECT_EQ(proto.resource_handle_val(0).device(), "/device:CPU:0");
}

TEST(TensorProtoTest, DecodesTypedFields) {
  wire::TensorProto p;
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  auto decode = [&](DType dtype) {
    p.set_dtype(static_cast<wire::DataType>(dtype));
    Tensor t;
    Status s = TensorFromProto(p, &t);
    EXPECT_TRUE(s.ok()) << s;
    return t;
  };
  auto expect = [](const Tensor& actual, const Tensor& expected) {
    EXPECT_TRUE(actual.ContentEquals(expected))
        << actual.DebugString() << " vs " << expected.DebugString();
  };

  p.add_float_val(1.5f), p.add_float_val(-2);
  expect(decode(DT_FLOAT), Tensor::FromVector<float>({1.5f, -2}));
  p.add_double_val(0.1), p.add_double_val(1e200);
  expect(decode(DT_DOUBLE), Tensor::FromVector<double>({0.1, 1e200}));
  p.add_int64_val(INT64_MIN), p.add_int64_val(7);
  expect(decode(DT_INT64), Tensor::FromVector<int64_t>({INT64_MIN, 7}));
  p.add_uint32_val(4000000000u), p.add_uint32_val(1);
  expect(decode(DT_UINT32), Tensor::FromVector<uint32_t>({4000000000u, 1}));
  p.add_uint64_val(UINT64_MAX), p.add_uint64_val(2);
  expect(decode(DT_UINT64), Tensor::FromVector<uint64_t>({UINT64_MAX, 2}));
  p.add_bool_val(true), p.add_bool_val(false);
  expect(decode(DT_BOOL), Tensor::FromVector<bool>({true, false}));
  p.add_scomplex_val(1), p.add_scomplex_val(2), p.add_scomplex_val(3), p.add_scomplex_val(4);
  expect(decode(DT_COMPLEX64), Tensor::FromVector<complex64>({{1, 2}, {3, 4}}));
  p.add_dcomplex_val(-1), p.add_dcomplex_val(-2), p.add_dcomplex_val(-3), p.add_dcomplex_val(-4);
  expect(decode(DT_COMPLEX128), Tensor::FromVector<complex128>({{-1, -2}, {-3, -4}}));
  p.add_string_val("x"), p.add_string_val("yz");
  expect(decode(DT_STRING), Tensor::FromVector<std::string>({"x", "yz"}));

  // int_val carries all integers of 32 bits or fewer.
  p.add_int_val(-128), p.add_int_val(127);
  expect(decode(DT_INT32), Tensor::FromVector<int32_t>({-128, 127}));
  expect(decode(DT_INT16), Tensor::FromVector<int16_t>({-128, 127}));
  expect(decode(DT_INT8), Tensor::FromVector<int8_t>({-128, 127}));
  p.clear_int_val();
  p.add_int_val(255), p.add_int_val(0);
  expect(decode(DT_UINT8), Tensor::FromVector<uint8_t>({255, 0}));
  p.clear_int_val();
  p.add_int_val(65535), p.add_int_val(1);
  expect(decode(DT_UINT16), Tensor::FromVector<uint16_t>({65535, 1}));

  // half_val carries bit patterns: 0x3c00 is half 1.0, 0x3f80 bfloat16 1.0.
  p.add_half_val(0x3c00), p.add_half_val(0xc000);
  expect(decode(DT_HALF), Tensor::FromVector<Eigen::half>({Eigen::half(1), Eigen::half(-2)}));
  p.clear_half_val();
  p.add_half_val(0x3f80), p.add_half_val(0xc000);
  expect(decode(DT_BFLOAT16),
         Tensor::FromVector<Eigen::bfloat16>({Eigen::bfloat16(1), Eigen::bfloat16(-2)}));

  wire::ResourceHandleProto* h = p.add_resource_handle_val();
  h->set_name("v"), h->set_container("c"), h->set_maybe_type_name("Var");
  p.add_resource_handle_val()->set_name("w");
  Tensor handles = decode(DT_RESOURCE);
  EXPECT_EQ(handles.flat<ResourceHandle>()[0], ResourceHandle("", "c", "v", "Var"));
  EXPECT_EQ(handles.flat<ResourceHandle>()[1].name(), "w");
}

TEST(TensorProtoTest, TensorContentWinsOverTypedFields) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_INT32);
  p.mutable_tensor_shape()->add_dim()->set_size(1);
  int32_t value = 42;
  p.set_tensor_content(std::string(reinterpret_cast<const char*>(&value), 4));
  p.add_int_val(7);
  Tensor t;
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_EQ(t.flat<int32_t>()[0], 42);
}

TEST(TensorProtoTest, BoolContentNormalizesNonzeroBytes) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_BOOL);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  p.set_tensor_content(std::string("\x00\x01\x07", 3));
  Tensor t;
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<bool>({false, true, true})));
}

TEST(TensorProtoTest, FewerValuesRepeatTheLast) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.add_float_val(7);
  Tensor t;
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<float>({7, 7, 7, 7}, TensorShape({2, 2}))));

  p.add_float_val(8);
  ASSERT_TRUE(TensorFromProto(p, &t).ok());
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<float>({7, 8, 8, 8}, TensorShape({2, 2}))));

  wire::TensorProto c;
  c.set_dtype(wire::DT_COMPLEX64);
  c.mutable_tensor_shape()->add_dim()->set_size(3);
  c.add_scomplex_val(1), c.add_scomplex_val(-1);
  ASSERT_TRUE(TensorFromProto(c, &t).ok());
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<complex64>({{1, -1}, {1, -1}, {1, -1}})));

  wire::TensorProto s;
  s.set_dtype(wire::DT_STRING);
  s.mutable_tensor_shape()->add_dim()->set_size(3);
  s.add_string_val("a"), s.add_string_val("b");
  ASSERT_TRUE(TensorFromProto(s, &t).ok());
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<std::string>({"a", "b", "b"})));

  wire::TensorProto h;
  h.set_dtype(wire::DT_HALF);
  h.mutable_tensor_shape()->add_dim()->set_size(2);
  h.add_half_val(0x3c00);
  ASSERT_TRUE(TensorFromProto(h, &t).ok());
  EXPECT_TRUE(
      t.ContentEquals(Tensor::FromVector<Eigen::half>({Eigen::half(1), Eigen::half(1)})));
}

TEST(TensorProtoTest, NoValuesMeansZeros) {
  for (DType dtype : kAllDTypes) {
    wire::TensorProto p;
    p.set_dtype(static_cast<wire::DataType>(dtype));
    p.mutable_tensor_shape()->add_dim()->set_size(3);
    Tensor t;
    Status s = TensorFromProto(p, &t);
    ASSERT_TRUE(s.ok()) << dtype << ": " << s;
    Tensor zeros(dtype, TensorShape({3}));
    if (DTypeSize(dtype) > 0) std::memset(zeros.raw_data(), 0, zeros.TotalBytes());
    EXPECT_TRUE(t.ContentEquals(zeros)) << t.DebugString();
  }
}

// Each bad proto is InvalidArgument and the message names dtype and shape.
void ExpectInvalid(const wire::TensorProto& p, const std::vector<std::string>& fragments) {
  Status s = DecodeStatus(p);
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(s.message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << s.message();
  }
}

TEST(TensorProtoTest, RejectsUnsupportedDTypes) {
  wire::TensorProto p;
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.set_dtype(wire::DT_INVALID);
  ExpectInvalid(p, {"DT_INVALID (0)", "[2]"});
  p.set_dtype(wire::DT_QINT8);
  ExpectInvalid(p, {"DT_QINT8 (11)", "[2]"});
  p.set_dtype(wire::DT_FLOAT_REF);
  ExpectInvalid(p, {"DT_FLOAT_REF (101)"});
  p.set_dtype(static_cast<wire::DataType>(99));
  ExpectInvalid(p, {"number 99", "[2]"});
}

// A TensorList or Optional exists only inside a step: neither direction
// encodes one, and both say so instead of writing or reading garbage.
TEST(TensorProtoTest, VariantsAreNotEncoded) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_VARIANT);
  Tensor t;
  Status s = TensorFromProto(p, &t);
  EXPECT_EQ(s.code(), Code::kUnimplemented) << s;
  EXPECT_NE(s.message().find("variant"), std::string::npos) << s;
  EXPECT_FALSE(t.IsInitialized());

  Status encoded = TensorToProto(Tensor(DT_VARIANT, TensorShape({2})), &p);
  EXPECT_EQ(encoded.code(), Code::kUnimplemented) << encoded;
  EXPECT_NE(encoded.message().find("variant tensor of shape [2]"), std::string::npos) << encoded;
}

TEST(TensorProtoTest, RejectsBadShapes) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(-1);
  ExpectInvalid(p, {"float", "[2,-1]", "negative"});

  p.mutable_tensor_shape()->Clear();
  p.mutable_tensor_shape()->set_unknown_rank(true);
  ExpectInvalid(p, {"float", "unknown rank"});

  p.mutable_tensor_shape()->Clear();
  for (int i = 0; i < 3; ++i) p.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 30);
  ExpectInvalid(p, {"float", "2^63"});

  p.mutable_tensor_shape()->Clear();
  p.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 61);
  p.set_dtype(wire::DT_COMPLEX128);
  ExpectInvalid(p, {"complex128", "too large"});
}

// Before, a typed field shorter than the shape was broadcast after an
// allocation of the whole shape: [2^40] with one float_val threw
// std::bad_alloc, and a modest string shape could ask for terabytes.
TEST(TensorProtoTest, RefusesTensorsOverTheByteLimitBeforeAllocating) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  p.add_float_val(1.5f);
  ExpectInvalid(p, {"float", "[1099511627776]", "too large", "limit"});

  // Just over 2 GiB of floats; 2 GiB itself is allowed (not tried: it
  // would allocate it).
  p.mutable_tensor_shape()->mutable_dim(0)->set_size((int64_t{1} << 29) + 1);
  ExpectInvalid(p, {"too large"});

  // Strings: the repeated last value counts, not only the element headers.
  wire::TensorProto strings;
  strings.set_dtype(wire::DT_STRING);
  strings.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 20);
  strings.add_string_val(std::string(4096, 'x'));  // 4 GiB once repeated
  ExpectInvalid(strings, {"string", "too large"});
  strings.mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 62);
  ExpectInvalid(strings, {"string", "too large"});

  wire::TensorProto handles;
  handles.set_dtype(wire::DT_RESOURCE);
  handles.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 20);
  handles.add_resource_handle_val()->set_name(std::string(4096, 'v'));
  ExpectInvalid(handles, {"resource", "too large"});

  // A short field repeated over a small shape still decodes.
  strings.mutable_tensor_shape()->mutable_dim(0)->set_size(3);
  Tensor t;
  ASSERT_TRUE(TensorFromProto(strings, &t).ok());
  EXPECT_EQ(t.flat<std::string>()[2], std::string(4096, 'x'));
}

TEST(TensorProtoTest, RejectsWrongContentSize) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_INT32);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.mutable_tensor_shape()->add_dim()->set_size(3);
  p.set_tensor_content(std::string(20, '\0'));
  ExpectInvalid(p, {"int32", "[2,3]", "20 bytes", "6 elements of 4 bytes"});
  p.set_tensor_content(std::string(28, '\0'));
  ExpectInvalid(p, {"int32", "[2,3]", "28 bytes"});

  p.mutable_tensor_shape()->Clear();
  p.mutable_tensor_shape()->add_dim()->set_size(0);
  p.set_tensor_content(std::string(4, '\0'));
  ExpectInvalid(p, {"int32", "[0]"});
}

TEST(TensorProtoTest, RejectsTooManyValues) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  for (int i = 0; i < 3; ++i) p.add_float_val(i);
  ExpectInvalid(p, {"float", "[2]", "float_val has 3 values", "holds 2"});

  wire::TensorProto c;
  c.set_dtype(wire::DT_COMPLEX128);
  c.mutable_tensor_shape();  // a scalar
  for (int i = 0; i < 4; ++i) c.add_dcomplex_val(i);
  ExpectInvalid(c, {"complex128", "[]", "dcomplex_val has 2 values"});
  c.add_dcomplex_val(5);
  ExpectInvalid(c, {"complex128", "[]", "5 values, not (real, imaginary) pairs"});
}

TEST(TensorProtoTest, RejectsWrongStringCounts) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_STRING);
  p.mutable_tensor_shape()->add_dim()->set_size(1);
  p.add_string_val("a"), p.add_string_val("b");
  ExpectInvalid(p, {"string", "[1]", "string_val has 2 values"});

  p.mutable_tensor_shape()->mutable_dim(0)->set_size(0);
  ExpectInvalid(p, {"string", "[0]", "holds 0"});

  p.clear_string_val();
  p.set_tensor_content("abc");
  ExpectInvalid(p, {"string", "tensor_content cannot hold"});
}

TEST(TensorProtoTest, RejectsValuesThatDoNotFit) {
  wire::TensorProto p;
  p.set_dtype(wire::DT_INT8);
  p.mutable_tensor_shape()->add_dim()->set_size(2);
  p.add_int_val(1), p.add_int_val(300);
  ExpectInvalid(p, {"int8", "[2]", "value 1 of int_val (300) does not fit in int8"});

  p.set_dtype(wire::DT_UINT8);
  p.clear_int_val();
  p.add_int_val(-1);
  ExpectInvalid(p, {"uint8", "does not fit"});

  p.set_dtype(wire::DT_HALF);
  p.add_half_val(0x10000);
  ExpectInvalid(p, {"half", "[2]", "16-bit pattern"});
}

TEST(TensorProtoTest, FailureLeavesOutputUntouched) {
  Tensor t = Tensor::Scalar<int32_t>(5);
  wire::TensorProto p;
  p.set_dtype(wire::DT_INT32);
  p.mutable_tensor_shape()->add_dim()->set_size(1);
  p.set_tensor_content("xyz");
  EXPECT_FALSE(TensorFromProto(p, &t).ok());
  EXPECT_EQ(t.scalar<int32_t>(), 5);
}

// Bytes built by hand from the protobuf encoding rules: tag = field << 3 |
// wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32).
TEST(TensorProtoWireTest, DecodesHandBuiltBytes) {
  // dtype=1 (float); tensor_shape {} (a scalar); float_val packed [1.0].
  Tensor t = Decode(Hex("08 01 12 00 2a 04 00 00 80 3f"));
  EXPECT_TRUE(t.ContentEquals(Tensor::Scalar<float>(1.0f))) << t.DebugString();

  // dtype=3 (int32); shape [2,3] (dim {size:2} dim {size:3}); tensor_content
  // of 24 little-endian bytes 0..5.
  t = Decode(Hex("08 03 12 08 12 02 08 02 12 02 08 03 22 18"
                 " 00 00 00 00 01 00 00 00 02 00 00 00 03 00 00 00 04 00 00 00 05 00 00 00"));
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<int32_t>({0, 1, 2, 3, 4, 5}, {2, 3})))
      << t.DebugString();

  // int_val unpacked (field 7 varint, as old writers emit) [5, 7] with shape [3]:
  // unpacked and packed encodings both parse; the last value repeats.
  t = Decode(Hex("08 03 12 04 12 02 08 03 38 05 38 07"));
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<int32_t>({5, 7, 7}))) << t.DebugString();

  // dtype=19 (half); half_val (field 13) packed [0x3c00 = varint 80 78].
  t = Decode(Hex("08 13 6a 02 80 78"));
  EXPECT_TRUE(t.ContentEquals(Tensor::Scalar<Eigen::half>(Eigen::half(1)))) << t.DebugString();

  // dtype=7 (string); shape [2]; string_val (field 8) "ab", "".
  t = Decode(Hex("08 07 12 04 12 02 08 02 42 02 61 62 42 00"));
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<std::string>({"ab", ""}))) << t.DebugString();

  // dtype=9 (int64); int64_val (field 10) packed [-1] (ten-byte varint).
  t = Decode(Hex("08 09 52 0a ff ff ff ff ff ff ff ff ff 01"));
  EXPECT_TRUE(t.ContentEquals(Tensor::Scalar<int64_t>(-1))) << t.DebugString();

  // dtype=10 (bool); shape [2]; bool_val (field 11) packed [1, 0].
  t = Decode(Hex("08 0a 12 04 12 02 08 02 5a 02 01 00"));
  EXPECT_TRUE(t.ContentEquals(Tensor::FromVector<bool>({true, false}))) << t.DebugString();

  // dtype=23 (uint64); uint64_val (field 17: tag varint 8a 01) packed [300 = ac 02].
  t = Decode(Hex("08 17 8a 01 02 ac 02"));
  EXPECT_TRUE(t.ContentEquals(Tensor::Scalar<uint64_t>(300))) << t.DebugString();

  // dtype=8 (complex64); scomplex_val (field 9) packed [1.0, -2.0].
  t = Decode(Hex("08 08 4a 08 00 00 80 3f 00 00 00 c0"));
  EXPECT_TRUE(t.ContentEquals(Tensor::Scalar<complex64>({1, -2}))) << t.DebugString();

  // dtype=20 (resource); resource_handle_val (field 14) {container "c" (2),
  // name "v" (3)}.
  t = Decode(Hex("08 14 72 06 12 01 63 1a 01 76"));
  EXPECT_EQ(t.scalar<ResourceHandle>(), ResourceHandle("", "c", "v", ""));
}

TEST(TensorProtoWireTest, EncodesTheDocumentedBytes) {
  wire::TensorProto proto;
  ASSERT_TRUE(TensorToProto(Tensor::FromVector<float>({1, 2}), &proto).ok());
  // dtype=1; shape [2]; tensor_content 1.0f 2.0f.
  EXPECT_EQ(ToHex(proto.SerializeAsString()),
            "08 01 12 04 12 02 08 02 22 08 00 00 80 3f 00 00 00 40");

  ASSERT_TRUE(TensorToProto(Tensor::Scalar<std::string>("hi"), &proto).ok());
  EXPECT_EQ(ToHex(proto.SerializeAsString()), "08 07 12 00 42 02 68 69");

  wire::TensorShapeProto shape;
  ShapeToProto(PartialShape({-1, 784}), &shape);
  // dim {size: -1 (ten-byte varint)} dim {size: 784 (90 06)}.
  EXPECT_EQ(ToHex(shape.SerializeAsString()),
            "12 0b 08 ff ff ff ff ff ff ff ff ff 01 12 03 08 90 06");
  ShapeToProto(PartialShape::UnknownRank(), &shape);
  EXPECT_EQ(ToHex(shape.SerializeAsString()), "18 01");
}

TEST(ShapeProtoTest, RoundTrips) {
  for (const PartialShape& shape :
       {PartialShape(), PartialShape({}), PartialShape({-1, 784}), PartialShape({0, 3, 1})}) {
    wire::TensorShapeProto proto;
    ShapeToProto(shape, &proto);
    PartialShape decoded({7});
    ASSERT_TRUE(ShapeFromProto(proto, &decoded).ok());
    EXPECT_EQ(decoded, shape) << shape;
  }
}

TEST(ShapeProtoTest, RejectsBadShapes) {
  wire::TensorShapeProto proto;
  proto.add_dim()->set_size(3);
  proto.add_dim()->set_size(-2);
  PartialShape shape;
  Status s = ShapeFromProto(proto, &shape);
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("[3,-2]"), std::string::npos) << s;

  proto.mutable_dim(1)->set_size(4);
  proto.set_unknown_rank(true);
  s = ShapeFromProto(proto, &shape);
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;

  proto.Clear();
  for (int i = 0; i <= TensorShape::kMaxRank; ++i) proto.add_dim()->set_size(1);
  s = ShapeFromProto(proto, &shape);
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
}

// Before, a shape attr of more than 2^63 - 1 elements was accepted.
TEST(ShapeProtoTest, RejectsShapesTooLarge) {
  wire::TensorShapeProto proto;
  proto.add_dim()->set_size(int64_t{1} << 40);
  proto.add_dim()->set_size(int64_t{1} << 40);
  PartialShape shape;
  Status s = ShapeFromProto(proto, &shape);
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("[1099511627776,1099511627776]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("2^63 - 1"), std::string::npos) << s;
  EXPECT_EQ(shape, PartialShape()) << "left untouched";
  // Unknown dims are not counted.
  proto.mutable_dim(1)->set_size(-1);
  ASSERT_TRUE(ShapeFromProto(proto, &shape).ok());
  EXPECT_EQ(shape, PartialShape({int64_t{1} << 40, -1}));
}

}  // namespace
}  // namespace weir
