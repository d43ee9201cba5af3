// Image file bytes -> the JPEG and PNG decoders (weir/kernels/image_codec_libs.h),
// with options chosen by the first byte. Corrupt, truncated or hostile files
// must come back as errors; a decoded image must stay under the size limit,
// and a decoded PNG must survive EncodePngBytes and DecodePngBytes unchanged.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "weir/kernels/image_codec_libs.h"

namespace {

class VectorSink : public weir::ImageSink {
 public:
  explicit VectorSink(int bytes_per_value) : bytes_per_value_(bytes_per_value) {}
  void* Allocate(int64_t height, int64_t width, int64_t channels) override {
    weir::fuzz::Require(height >= 0 && width >= 0 && channels >= 1 && channels <= 4,
                        "a decoder asked for an impossible image");
    weir::fuzz::Require(height * width * channels < weir::kMaxDecodedImageValues,
                        "a decoder asked for an image over the size limit");
    height_ = height, width_ = width, channels_ = channels;
    pixels_.assign(height * width * channels * bytes_per_value_, 0);
    return pixels_.data();
  }
  std::vector<uint8_t> pixels_;
  int64_t height_ = 0, width_ = 0, channels_ = 0;

 private:
  int bytes_per_value_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir;
  fuzz::InitOnce();
  if (size < 1) return 0;
  const uint8_t options = data[0];
  ++data, --size;
  std::string error;
  JpegDecodeOptions jpeg;
  jpeg.channels = (options & 3) == 2 ? 3 : options & 3;  // 0, 1, 3
  jpeg.ratio = 1 << ((options >> 2) & 3);
  jpeg.fancy_upscaling = (options & 16) != 0;
  jpeg.try_recover_truncated = (options & 32) != 0;
  jpeg.accurate_dct = (options & 64) != 0;
  VectorSink jpeg_sink(1);
  (void)DecodeJpegBytes(data, size, jpeg, &jpeg_sink, &error);
  int64_t shape[3];
  (void)JpegHeaderShape(data, size, shape, &error);

  const int channels = (options >> 4) % 5;  // 0..4
  const int bits = (options & 128) ? 16 : 8;
  VectorSink png_sink(bits / 8);
  if (!DecodePngBytes(data, size, channels, bits, &png_sink, &error)) return 0;
  if (png_sink.height_ == 0 || png_sink.width_ == 0) return 0;
  std::string png;
  fuzz::Require(EncodePngBytes(png_sink.pixels_.data(), png_sink.height_, png_sink.width_,
                               static_cast<int>(png_sink.channels_), bits, 1, &png, &error),
                "EncodePngBytes refused an image DecodePngBytes gave");
  VectorSink again(bits / 8);
  fuzz::Require(DecodePngBytes(reinterpret_cast<const uint8_t*>(png.data()), png.size(),
                               static_cast<int>(png_sink.channels_), bits, &again, &error),
                "DecodePngBytes refused what EncodePngBytes wrote");
  fuzz::Require(again.pixels_ == png_sink.pixels_, "a PNG round trip changed the pixels");
  return 0;
}
