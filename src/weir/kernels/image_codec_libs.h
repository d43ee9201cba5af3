// Thin, crash-proof wrappers over libjpeg(-turbo) and libpng: every library
// error (corrupt or truncated data, hostile headers) comes back as a message,
// never an abort, and image sizes are checked before anything is allocated.
// The library state lives in structs the caller owns, so the setjmp frames
// inside hold no object with a destructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace weir {

// Images larger than this many values (height * width * channels) are
// refused before their pixels are allocated (TensorFlow refuses JPEGs of
// 2^29 values too).
inline constexpr int64_t kMaxDecodedImageValues = int64_t{1} << 29;

// Gives the buffer for a decoded height x width x channels image of
// `bytes_per_value`-byte values, or nullptr (with the reason kept by the
// caller) when it cannot.
struct ImageSink {
  virtual ~ImageSink() = default;
  virtual void* Allocate(int64_t height, int64_t width, int64_t channels) = 0;
};

struct JpegDecodeOptions {
  int channels = 0;  // 0 (the file's), 1 or 3
  int ratio = 1;     // 1, 2, 4 or 8
  bool fancy_upscaling = true;
  bool try_recover_truncated = false;
  float acceptable_fraction = 1;
  bool accurate_dct = false;  // INTEGER_ACCURATE; else INTEGER_FAST
};

// Decodes the JPEG in data[0, size) into sink's buffer (uint8). On failure
// returns false and sets *error (sink may have been called).
bool DecodeJpegBytes(const uint8_t* data, size_t size, const JpegDecodeOptions& options,
                     ImageSink* sink, std::string* error);

// The JPEG's [height, width, components] from its header.
bool JpegHeaderShape(const uint8_t* data, size_t size, int64_t shape[3], std::string* error);

struct JpegEncodeOptions {
  int quality = 95;
  bool progressive = false;
  bool optimize_size = false;
  bool chroma_downsampling = true;
  bool density_in_cm = false;
  int x_density = 300;
  int y_density = 300;
  std::string xmp_metadata;
};

bool EncodeJpegBytes(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                     const JpegEncodeOptions& options, std::string* out, std::string* error);

// Decodes the PNG into sink's buffer, with `channels` (0: the file's after
// palette expansion, 1..4) and 8 or 16 bits per value (16: native-endian
// uint16).
bool DecodePngBytes(const uint8_t* data, size_t size, int channels, int bits, ImageSink* sink,
                    std::string* error);

// pixels: height x width x channels (1..4) values of 8 or 16 bits.
bool EncodePngBytes(const void* pixels, int64_t height, int64_t width, int channels, int bits,
                    int compression, std::string* out, std::string* error);

}  // namespace weir
