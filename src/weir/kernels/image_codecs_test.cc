// The image codecs, colour ops and non-max suppression on their own:
// lossless PNG round trips (8 and 16 bits, 1..4 channels), JPEG round trips
// close to the original, format sniffing, and hostile input (empty, garbage,
// truncated, a header declaring a huge image, bad attrs) as InvalidArgument.
// Decoded pixels against TensorFlow's are checked in python/tests.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "weir/kernels/kernel_test_util.h"

namespace weir {
namespace {

Tensor Pattern8(int64_t h, int64_t w, int64_t c) {
  Tensor t(DT_UINT8, TensorShape({h, w, c}));
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const int64_t y = i / (w * c), x = (i / c) % w, ch = i % c;
    t.data<uint8_t>()[i] = static_cast<uint8_t>((y * 16 + x * 8 + ch * 60) % 256);
  }
  return t;
}

Tensor Bytes(const std::string& s) { return Tensor::Scalar<std::string>(s); }

std::string EncodePng(const Tensor& image) {
  auto out = RunKernel("EncodePng", {{"T", image.dtype()}}, {image});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].data<std::string>()[0] : "";
}

std::string EncodeJpeg(const Tensor& image, AttrMap attrs = {}) {
  auto out = RunKernel("EncodeJpeg", std::move(attrs), {image});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].data<std::string>()[0] : "";
}

void ExpectInvalid(const StatusOr<std::vector<Tensor>>& out, const std::string& fragment) {
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(errors::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().ToString().find(fragment), std::string::npos) << out.status();
}

TEST(ImageCodecs, PngRoundTripsEveryChannelCountLosslessly) {
  for (int64_t c = 1; c <= 4; ++c) {
    Tensor image = Pattern8(5, 7, c);
    const std::string png = EncodePng(image);
    for (const char* op : {"DecodePng", "DecodeImage", "DecodeJpeg"}) {
      if (std::string(op) == "DecodeJpeg" && (c == 2 || c == 4)) continue;
      auto out = RunKernel(op, {}, {Bytes(png)});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), TensorShape({5, 7, c})) << op;
      EXPECT_EQ(ToDoubles((*out)[0]), ToDoubles(image)) << op << " channels " << c;
    }
  }
}

TEST(ImageCodecs, Png16BitsAndDtypeConversions) {
  Tensor image(DT_UINT16, TensorShape({1, 3, 1}));
  image.data<uint16_t>()[0] = 0;
  image.data<uint16_t>()[1] = 1000;
  image.data<uint16_t>()[2] = 65535;
  const std::string png = EncodePng(image);
  auto wide = RunKernel("DecodePng", {{"dtype", DT_UINT16}}, {Bytes(png)});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(ToDoubles((*wide)[0]), (std::vector<double>{0, 1000, 65535}));
  auto narrow = RunKernel("DecodePng", {}, {Bytes(png)});  // the high byte
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_EQ(ToDoubles((*narrow)[0]), (std::vector<double>{0, 3, 255}));
  auto real = RunKernel("DecodeImage", {{"dtype", DT_FLOAT}}, {Bytes(png)});
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_FLOAT_EQ((*real)[0].data<float>()[1], 1000.0f / 65535.0f);
  // 8-bit to 16: 255 -> 65535 (x 257).
  auto up = RunKernel("DecodePng", {{"dtype", DT_UINT16}}, {Bytes(EncodePng(Pattern8(2, 2, 3)))});
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(ToDoubles((*up)[0])[1], ToDoubles(Pattern8(2, 2, 3))[1] * 257);
}

TEST(ImageCodecs, PngChannelConversions) {
  Tensor rgb = Pattern8(3, 4, 3);
  const std::string png = EncodePng(rgb);
  auto rgba = RunKernel("DecodePng", {{"channels", int64_t{4}}}, {Bytes(png)});
  ASSERT_TRUE(rgba.ok()) << rgba.status();
  EXPECT_EQ((*rgba)[0].shape(), TensorShape({3, 4, 4}));
  EXPECT_EQ((*rgba)[0].data<uint8_t>()[3], 255);  // opaque alpha added
  auto gray = RunKernel("DecodePng", {{"channels", int64_t{1}}}, {Bytes(png)});
  ASSERT_TRUE(gray.ok()) << gray.status();
  const uint8_t* p = rgb.data<uint8_t>();
  // ITU-R 601 luma, within libpng's rounding.
  EXPECT_NEAR((*gray)[0].data<uint8_t>()[0], 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2], 1.0);
}

TEST(ImageCodecs, JpegRoundTripIsClose) {
  Tensor image(DT_UINT8, TensorShape({16, 16, 3}));
  for (int64_t i = 0; i < image.NumElements(); ++i) {
    image.data<uint8_t>()[i] = static_cast<uint8_t>(100 + 40 * std::sin(i * 0.01));
  }
  const std::string jpeg =
      EncodeJpeg(image, {{"quality", int64_t{100}}, {"chroma_downsampling", false}});
  auto shape = RunKernel("ExtractJpegShape", {}, {Bytes(jpeg)});
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(ToDoubles((*shape)[0]), (std::vector<double>{16, 16, 3}));
  for (const char* dct : {"", "INTEGER_ACCURATE"}) {
    auto out = RunKernel("DecodeJpeg", {{"dct_method", std::string(dct)}}, {Bytes(jpeg)});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<double> got = ToDoubles((*out)[0]), want = ToDoubles(image);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 8) << dct << " " << i;
  }
  auto half =
      RunKernel("DecodeJpeg", {{"ratio", int64_t{2}}, {"channels", int64_t{1}}}, {Bytes(jpeg)});
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ((*half)[0].shape(), TensorShape({8, 8, 1}));
  auto crop = RunKernel("DecodeAndCropJpeg", {},
                        {Bytes(jpeg), Tensor::FromVector<int32_t>({2, 3, 5, 4}, TensorShape({4}))});
  ASSERT_TRUE(crop.ok()) << crop.status();
  EXPECT_EQ((*crop)[0].shape(), TensorShape({5, 4, 3}));
}

// One PNG chunk: length, type, data, CRC.
std::string PngChunk(const std::string& type, const std::string& data) {
  std::string out;
  const uint32_t length = static_cast<uint32_t>(data.size());
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((length >> shift) & 0xff);
  const std::string body = type + data;
  uint32_t crc = 0xffffffffu;
  for (unsigned char byte : body) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xffffffffu;
  out += body;
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((crc >> shift) & 0xff);
  return out;
}

// A PNG declaring a width x height RGB image, with an empty IDAT.
std::string PngHeader(uint32_t width, uint32_t height) {
  std::string ihdr;
  for (uint32_t v : {width, height}) {
    for (int shift = 24; shift >= 0; shift -= 8) ihdr += static_cast<char>((v >> shift) & 0xff);
  }
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + PngChunk("IHDR", ihdr) + PngChunk("IDAT", "");
}

TEST(ImageCodecs, HostileInputIsInvalidArgument) {
  for (const char* op : {"DecodeJpeg", "DecodePng", "DecodeImage"}) {
    ExpectInvalid(RunKernel(op, {}, {Bytes("")}), "empty");
    ExpectInvalid(RunKernel(op, {}, {Bytes("not an image at all")}), "unknown image format");
    ExpectInvalid(RunKernel(op, {}, {Bytes("\xFF\xD8\xFF")}), "invalid JPEG");
    ExpectInvalid(RunKernel(op, {}, {Bytes(std::string("\x89PNG\r\n\x1a\n", 8))}), "invalid PNG");
    // Declared sizes beyond libpng's limit and beyond 2^29 values.
    ExpectInvalid(RunKernel(op, {}, {Bytes(PngHeader(0x7fffffff, 0x7fffffff))}), "invalid PNG");
    ExpectInvalid(RunKernel(op, {}, {Bytes(PngHeader(60000, 60000))}), "limit");
    ExpectInvalid(RunKernel(op, {}, {Bytes(PngHeader(0, 10))}), "invalid PNG");
    ExpectInvalid(
        RunKernel(op, {}, {Tensor::FromVector<std::string>({"a", "b"}, TensorShape({2}))}),
        "scalar");
  }
  const std::string jpeg = EncodeJpeg(Pattern8(32, 32, 3));
  const std::string png = EncodePng(Pattern8(32, 32, 3));
  for (size_t cut : {size_t{10}, jpeg.size() / 3, jpeg.size() - 2}) {
    ExpectInvalid(RunKernel("DecodeJpeg", {}, {Bytes(jpeg.substr(0, cut))}), "JPEG");
  }
  for (size_t cut : {size_t{20}, png.size() / 2, png.size() - 1}) {
    ExpectInvalid(RunKernel("DecodePng", {}, {Bytes(png.substr(0, cut))}), "PNG");
  }
  // A truncated JPEG decodes when asked to recover.
  auto recovered = RunKernel("DecodeJpeg", {{"try_recover_truncated", true}},
                             {Bytes(jpeg.substr(0, jpeg.size() / 2))});
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_EQ((*recovered)[0].shape(), TensorShape({32, 32, 3}));
  // Corrupt bytes in the middle: an error or an image, never a crash.
  std::string corrupt = jpeg;
  for (size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 40; ++i) corrupt[i] = '\x13';
  (void)RunKernel("DecodeJpeg", {}, {Bytes(corrupt)});
  std::string corrupt_png = png;
  corrupt_png[png.size() / 2] ^= 0x55;
  ExpectInvalid(RunKernel("DecodePng", {}, {Bytes(corrupt_png)}), "PNG");
  ExpectInvalid(RunKernel("DecodeJpeg", {{"ratio", int64_t{3}}}, {Bytes(jpeg)}), "ratio");
  ExpectInvalid(RunKernel("DecodeJpeg", {{"channels", int64_t{2}}}, {Bytes(jpeg)}), "channels");
  ExpectInvalid(RunKernel("DecodePng", {{"channels", int64_t{4}}}, {Bytes(jpeg)}), "channels");
  ExpectInvalid(RunKernel("DecodePng", {{"channels", int64_t{2}}}, {Bytes(png)}), "channels");
  ExpectInvalid(RunKernel("DecodeJpeg", {{"dct_method", std::string("FLOAT")}}, {Bytes(jpeg)}),
                "dct_method");
  ExpectInvalid(
      RunKernel("DecodeAndCropJpeg", {},
                {Bytes(jpeg), Tensor::FromVector<int32_t>({30, 0, 5, 5}, TensorShape({4}))}),
      "crop_window");
  ExpectInvalid(RunKernel("ExtractJpegShape", {}, {Bytes(png)}), "not a JPEG");
  ExpectInvalid(RunKernel("EncodeJpeg", {{"quality", int64_t{101}}}, {Pattern8(2, 2, 3)}),
                "quality");
  ExpectInvalid(RunKernel("EncodeJpeg", {}, {Pattern8(2, 2, 2)}), "1 or 3 channels");
  ExpectInvalid(
      RunKernel("EncodeJpeg", {{"format", std::string("grayscale")}}, {Pattern8(2, 2, 3)}),
      "1 or 3 channels");
  ExpectInvalid(RunKernel("EncodeJpeg", {}, {Pattern8(0, 4, 3)}), "EncodeJpeg");
  ExpectInvalid(RunKernel("EncodePng", {}, {Pattern8(2, 2, 5)}), "1 to 4 channels");
  ExpectInvalid(RunKernel("EncodePng", {{"compression", int64_t{10}}}, {Pattern8(2, 2, 3)}),
                "compression");
  ExpectInvalid(RunKernel("EncodePng", {}, {Pattern8(0, 3, 3)}), "EncodePng");
}

TEST(ImageColor, HsvOfPrimariesAndRoundTrip) {
  Tensor rgb = Tensor::FromVector<float>(
      {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5f, 0.5f, 0.5f, 0.2f, 0.4f, 0.8f}, TensorShape({5, 3}));
  auto hsv = RunKernel("RGBToHSV", {{"T", DT_FLOAT}}, {rgb});
  ASSERT_TRUE(hsv.ok()) << hsv.status();
  std::vector<double> want = {0, 1, 1, 1.0 / 3, 1,         1,    2.0 / 3, 1,
                              1, 0, 0, 0.5,     11.0 / 18, 0.75, 0.8};
  std::vector<double> got = ToDoubles((*hsv)[0]);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  auto back = RunKernel("HSVToRGB", {{"T", DT_FLOAT}}, {(*hsv)[0]});
  ASSERT_TRUE(back.ok()) << back.status();
  got = ToDoubles((*back)[0]);
  std::vector<double> orig = ToDoubles(rgb);
  for (size_t i = 0; i < orig.size(); ++i) EXPECT_NEAR(got[i], orig[i], 1e-6) << i;
  ExpectInvalid(RunKernel("RGBToHSV", {{"T", DT_FLOAT}},
                          {Tensor::FromVector<float>({1, 2}, TensorShape({1, 2}))}),
                "3 channels");
  ExpectInvalid(RunKernel("AdjustHue", {{"T", DT_FLOAT}},
                          {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor::Scalar<float>(0.1f)}),
                "rank >= 3");
}

TEST(ImageColor, ContrastAndSaturation) {
  Tensor image = Tensor::FromVector<float>({0, 1, 2, 3, 4, 5, 6, 7}, TensorShape({2, 2, 2}));
  auto out = RunKernel("AdjustContrastv2", {{"T", DT_FLOAT}}, {image, Tensor::Scalar<float>(2)});
  ASSERT_TRUE(out.ok()) << out.status();
  // Channel means 3 and 4: (x - m) * 2 + m.
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{-3, -2, 1, 2, 5, 6, 9, 10}));
  Tensor rgb = Tensor::FromVector<float>({0.2f, 0.4f, 0.8f}, TensorShape({1, 1, 3}));
  auto gray = RunKernel("AdjustSaturation", {{"T", DT_FLOAT}}, {rgb, Tensor::Scalar<float>(0)});
  ASSERT_TRUE(gray.ok()) << gray.status();
  for (double v : ToDoubles((*gray)[0])) EXPECT_NEAR(v, 0.8, 1e-6);
  auto hue = RunKernel("AdjustHue", {{"T", DT_FLOAT}}, {rgb, Tensor::Scalar<float>(1.0f / 3)});
  ASSERT_TRUE(hue.ok()) << hue.status();
  // Hue 11/18 + 1/3 = 17/18: r = v, g = min, b = min + range / 3.
  std::vector<double> got = ToDoubles((*hue)[0]);
  EXPECT_NEAR(got[0], 0.8, 1e-6);
  EXPECT_NEAR(got[1], 0.2, 1e-6);
  EXPECT_NEAR(got[2], 0.4, 1e-6);
}

TEST(NonMaxSuppression, GreedySelectionPaddingAndErrors) {
  // Boxes 0 and 1 overlap by IoU 0.6 (box 1 flipped corners), box 2 apart.
  Tensor boxes = Tensor::FromVector<float>({0, 0, 1, 1, 1, 1, 0, 0.4f, 0, 2, 1, 3, 0, 0, 0, 0},
                                           TensorShape({4, 4}));
  Tensor scores = Tensor::FromVector<float>({0.9f, 0.95f, 0.3f, 0.1f}, TensorShape({4}));
  auto v3 = RunKernel("NonMaxSuppressionV3", {},
                      {boxes, scores, Tensor::Scalar<int32_t>(10), Tensor::Scalar<float>(0.5f),
                       Tensor::Scalar<float>(0.2f)});
  ASSERT_TRUE(v3.ok()) << v3.status();
  EXPECT_EQ(ToDoubles((*v3)[0]), (std::vector<double>{1, 2}));
  auto v4 = RunKernel("NonMaxSuppressionV4", {{"pad_to_max_output_size", true}},
                      {boxes, scores, Tensor::Scalar<int32_t>(5), Tensor::Scalar<float>(0.7f),
                       Tensor::Scalar<float>(0.0f)});
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(ToDoubles((*v4)[0]), (std::vector<double>{1, 0, 2, 3, 0}));
  EXPECT_EQ(ToDoubles((*v4)[1]), (std::vector<double>{4}));
  auto v5 = RunKernel("NonMaxSuppressionV5", {},
                      {boxes, scores, Tensor::Scalar<int32_t>(2), Tensor::Scalar<float>(1.0f),
                       Tensor::Scalar<float>(0.0f), Tensor::Scalar<float>(0.5f)});
  ASSERT_TRUE(v5.ok()) << v5.status();
  // Soft-NMS: box 0 decays to 0.9 * exp(-0.36) = 0.628 and still beats box 2.
  EXPECT_EQ(ToDoubles((*v5)[0]), (std::vector<double>{1, 0}));
  EXPECT_NEAR((*v5)[1].data<float>()[1], 0.9 * std::exp(-0.36), 1e-5);
  auto empty = RunKernel("NonMaxSuppression", {},
                         {Tensor(DT_FLOAT, TensorShape({0, 4})), Tensor(DT_FLOAT, TensorShape({0})),
                          Tensor::Scalar<int32_t>(3)});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].NumElements(), 0);
  ExpectInvalid(
      RunKernel("NonMaxSuppressionV2", {},
                {boxes, scores, Tensor::Scalar<int32_t>(-1), Tensor::Scalar<float>(0.5f)}),
      "non-negative");
  ExpectInvalid(RunKernel("NonMaxSuppressionV2", {},
                          {boxes, scores, Tensor::Scalar<int32_t>(1), Tensor::Scalar<float>(1.5f)}),
                "iou_threshold");
  ExpectInvalid(RunKernel("NonMaxSuppressionV2", {},
                          {boxes, Tensor(DT_FLOAT, TensorShape({3})), Tensor::Scalar<int32_t>(1),
                           Tensor::Scalar<float>(0.5f)}),
                "scores");
  // NaN scores are never selected, NaN boxes suppress nothing: no crash.
  Tensor nan_scores = Tensor::FromVector<float>({NAN, 0.5f, NAN, 0.4f}, TensorShape({4}));
  auto nan =
      RunKernel("NonMaxSuppressionV2", {},
                {boxes, nan_scores, Tensor::Scalar<int32_t>(4), Tensor::Scalar<float>(0.5f)});
  ASSERT_TRUE(nan.ok()) << nan.status();
  EXPECT_EQ(ToDoubles((*nan)[0]), (std::vector<double>{1, 3}));
}

}  // namespace
}  // namespace weir
