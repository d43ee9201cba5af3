// The image codec kernels: one decoder for DecodeJpeg, DecodePng,
// DecodeImage and DecodeAndCropJpeg (as in TensorFlow 2, each sniffs the
// format from the first bytes, so DecodeJpeg reads PNGs too), EncodeJpeg,
// EncodePng and ExtractJpegShape. The libraries sit behind
// image_codec_libs.h; errors name the op, the format and the sizes.
#include <cstring>
#include <string>

#include "weir/framework/kernel_registry.h"
#include "weir/kernels/image_codec_libs.h"

namespace weir {
namespace {

enum class ImageFormat { kJpeg, kPng, kGif, kBmp, kUnknown };

ImageFormat SniffFormat(const std::string& data) {
  auto starts = [&](const char* magic, size_t n) {
    return data.size() >= n && std::memcmp(data.data(), magic, n) == 0;
  };
  if (starts("\xFF\xD8\xFF", 3)) return ImageFormat::kJpeg;
  if (starts("\x89PNG\r\n\x1A\n", 8)) return ImageFormat::kPng;
  if (starts("GIF8", 4)) return ImageFormat::kGif;
  if (starts("BM", 2)) return ImageFormat::kBmp;
  return ImageFormat::kUnknown;
}

uint32_t LittleEndian(const std::string& data, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data[at + i]);
  return v;
}

// An uncompressed (BI_RGB) BMP of 8 (gray), 24 (BGR) or 32 (BGRA) bits per
// pixel, rows bottom-up (top-down for a negative height), each padded to 4
// bytes, into sink as gray, RGB or RGBA; `channels` 0 or the file's.
bool DecodeBmpBytes(const std::string& data, int64_t channels, ImageSink* sink,
                    std::string* error) {
  if (data.size() < 54) {
    *error = "the BMP headers need 54 bytes";
    return false;
  }
  const uint32_t offset = LittleEndian(data, 10, 4);
  const int32_t width = static_cast<int32_t>(LittleEndian(data, 18, 4));
  const int32_t signed_height = static_cast<int32_t>(LittleEndian(data, 22, 4));
  const uint32_t bits = LittleEndian(data, 28, 2);
  const uint32_t compression = LittleEndian(data, 30, 4);
  if (bits != 8 && bits != 24 && bits != 32) {
    *error = "BMPs of " + std::to_string(bits) + " bits per pixel are not supported";
    return false;
  }
  if (compression != 0) {
    *error = "compressed BMPs are not supported";
    return false;
  }
  const int64_t file_channels = bits / 8;
  if (channels != 0 && channels != file_channels) {
    *error = "channels " + std::to_string(channels) + " do not match the file's " +
             std::to_string(file_channels);
    return false;
  }
  const int64_t height = signed_height < 0 ? -static_cast<int64_t>(signed_height) : signed_height;
  if (width <= 0 || height <= 0) {
    *error = "the BMP is " + std::to_string(width) + " x " + std::to_string(signed_height);
    return false;
  }
  if (height * width * file_channels >= kMaxDecodedImageValues) {
    *error = "the BMP is larger than the limit of 2^29 values";
    return false;
  }
  const int64_t row_bytes = (static_cast<int64_t>(bits) * width + 31) / 32 * 4;
  if (offset > data.size() || (static_cast<int64_t>(data.size()) - offset) / row_bytes < height) {
    *error = "the BMP's pixels (" + std::to_string(height) + " rows of " +
             std::to_string(row_bytes) + " bytes at " + std::to_string(offset) +
             ") run past its end";
    return false;
  }
  auto* pixels = static_cast<uint8_t*>(sink->Allocate(height, width, file_channels));
  if (pixels == nullptr) {
    *error = "could not allocate the image";
    return false;
  }
  for (int64_t y = 0; y < height; ++y) {
    const int64_t file_row = signed_height < 0 ? y : height - 1 - y;
    const auto* from =
        reinterpret_cast<const uint8_t*>(data.data()) + offset + file_row * row_bytes;
    uint8_t* to = pixels + y * width * file_channels;
    for (int64_t x = 0; x < width; ++x) {
      const uint8_t* p = from + x * file_channels;
      uint8_t* q = to + x * file_channels;
      if (file_channels == 1) {
        q[0] = p[0];
      } else {
        q[0] = p[2], q[1] = p[1], q[2] = p[0];  // BGR(A) -> RGB(A)
        if (file_channels == 4) q[3] = p[3];
      }
    }
  }
  return true;
}

const char* FormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kBmp: return "BMP";
    default: return "image";
  }
}

// Allocates the decoded image as a temporary tensor of `dtype`.
class TensorSink : public ImageSink {
 public:
  TensorSink(OpKernelContext* context, DType dtype) : context_(context), dtype_(dtype) {}
  void* Allocate(int64_t height, int64_t width, int64_t channels) override {
    status_ = context_->allocate_temp(dtype_, TensorShape({height, width, channels}), &tensor_);
    return status_.ok() ? tensor_.raw_data() : nullptr;
  }
  const Tensor& tensor() const { return tensor_; }
  const Status& status() const { return status_; }

 private:
  OpKernelContext* context_;
  DType dtype_;
  Tensor tensor_;
  Status status_;
};

class DecodeImageOp : public OpKernel {
 public:
  explicit DecodeImageOp(OpKernelConstruction* context) : OpKernel(context) {
    const std::string& op = type_string();
    context->SetStatus(context->GetAttr("channels", &channels_));
    if (op == "DecodePng" || op == "DecodeImage") {
      context->SetStatus(context->GetAttr("dtype", &dtype_));
    }
    const bool jpeg_attrs = op == "DecodeJpeg" || op == "DecodeAndCropJpeg";
    if (jpeg_attrs) {
      int64_t ratio = 1;
      std::string dct;
      context->SetStatus(context->GetAttr("ratio", &ratio));
      context->SetStatus(context->GetAttr("fancy_upscaling", &jpeg_.fancy_upscaling));
      context->SetStatus(context->GetAttr("try_recover_truncated", &jpeg_.try_recover_truncated));
      context->SetStatus(context->GetAttr("acceptable_fraction", &jpeg_.acceptable_fraction));
      context->SetStatus(context->GetAttr("dct_method", &dct));
      if (!context->status().ok()) return;
      if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8) {
        context->SetStatus(
            errors::InvalidArgument(op, ": ratio must be 1, 2, 4 or 8, got ", ratio));
      }
      jpeg_.ratio = static_cast<int>(ratio);
      if (dct != "" && dct != "INTEGER_FAST" && dct != "INTEGER_ACCURATE") {
        context->SetStatus(errors::InvalidArgument(
            op, ": dct_method must be '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', got '", dct, "'"));
      }
      jpeg_.accurate_dct = dct == "INTEGER_ACCURATE";
    }
    const int64_t max_channels = jpeg_attrs ? 3 : 4;
    if (channels_ < 0 || channels_ > max_channels || channels_ == 2) {  // as TensorFlow
      context->SetStatus(errors::InvalidArgument(op, ": channels must be ",
                                                 jpeg_attrs ? "0, 1 or 3" : "0, 1, 3 or 4",
                                                 ", got ", channels_));
    }
    crop_ = op == "DecodeAndCropJpeg";
  }

  void Compute(OpKernelContext* context) override {
    const std::string& op = type_string();
    const Tensor& contents = context->input(0);
    OP_REQUIRES(context, contents.dims() == 0,
                errors::InvalidArgument(op, ": contents must be a scalar string, got shape ",
                                        contents.shape()));
    const std::string& data = contents.data<std::string>()[0];
    OP_REQUIRES(context, !data.empty(), errors::InvalidArgument(op, ": the input is empty"));
    const ImageFormat format = SniffFormat(data);
    OP_REQUIRES(
        context, format != ImageFormat::kGif,
        errors::Unimplemented(op, ": GIF images are not supported (", data.size(), " bytes)"));
    OP_REQUIRES(context, format != ImageFormat::kUnknown,
                errors::InvalidArgument(op, ": unknown image format (JPEG, PNG or BMP required), ",
                                        data.size(), " bytes"));
    OP_REQUIRES(context, !crop_ || format == ImageFormat::kJpeg,
                errors::InvalidArgument(op, ": DecodeAndCropJpeg needs a JPEG"));
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    std::string error;
    bool ok;
    // 16-bit PNGs decode at 16 bits for uint16 and float outputs.
    const bool wide = format == ImageFormat::kPng && dtype_ != DT_UINT8 &&
                      (dtype_ == DT_UINT16 || PngIs16Bit(data));
    TensorSink sink(context, wide ? DT_UINT16 : DT_UINT8);
    if (format == ImageFormat::kJpeg) {
      OP_REQUIRES(
          context, channels_ != 2 && channels_ != 4,
          errors::InvalidArgument(op, ": a JPEG decodes to 0, 1 or 3 channels, not ", channels_));
      JpegDecodeOptions options = jpeg_;
      options.channels = static_cast<int>(channels_);
      ok = DecodeJpegBytes(bytes, data.size(), options, &sink, &error);
    } else if (format == ImageFormat::kBmp) {
      ok = DecodeBmpBytes(data, channels_, &sink, &error);
    } else {
      ok = DecodePngBytes(bytes, data.size(), static_cast<int>(channels_), wide ? 16 : 8, &sink,
                          &error);
    }
    OP_REQUIRES_OK(context, sink.status());
    OP_REQUIRES(context, ok,
                errors::InvalidArgument(op, ": invalid ", FormatName(format), " data (",
                                        data.size(), " bytes): ", error));
    Tensor image = sink.tensor();
    if (crop_) OP_REQUIRES_OK(context, Crop(context, &image));
    context->set_output(0, Convert(image, wide));
  }

 private:
  static bool PngIs16Bit(const std::string& data) {
    // IHDR's bit depth is byte 24 of a PNG.
    return data.size() > 24 && static_cast<uint8_t>(data[24]) == 16;
  }

  // crop_window [y, x, height, width] of image.
  Status Crop(OpKernelContext* context, Tensor* image) const {
    const Tensor& window = context->input(1);
    if (window.dims() != 1 || window.NumElements() != 4) {
      return errors::InvalidArgument(
          "DecodeAndCropJpeg: crop_window must be [y, x, height, "
          "width], got shape ",
          window.shape());
    }
    const int32_t* w = window.data<int32_t>();
    const int64_t rows = image->dim_size(0), cols = image->dim_size(1), depth = image->dim_size(2);
    const int64_t y = w[0], x = w[1], h = w[2], wd = w[3];
    if (y < 0 || x < 0 || h <= 0 || wd <= 0 || y + h > rows || x + wd > cols) {
      return errors::InvalidArgument("DecodeAndCropJpeg: crop_window [", y, ", ", x, ", ", h, ", ",
                                     wd, "] is not inside the ", rows, " x ", cols, " image");
    }
    Tensor cropped;
    WEIR_RETURN_IF_ERROR(context->allocate_temp(DT_UINT8, TensorShape({h, wd, depth}), &cropped));
    const uint8_t* from = image->data<uint8_t>();
    uint8_t* to = cropped.data<uint8_t>();
    for (int64_t r = 0; r < h; ++r) {
      std::memcpy(to + r * wd * depth, from + ((y + r) * cols + x) * depth, wd * depth);
    }
    *image = cropped;
    return Status::OK();
  }

  // The decoded uint8 (or uint16 when `wide`) image in dtype_: uint8 to
  // uint16 multiplies by 256 for JPEGs (as TensorFlow does) and 257 for
  // PNGs (libpng's expansion, done while decoding); float scales to [0, 1].
  Tensor Convert(const Tensor& image, bool wide) const {
    if (dtype_ == (wide ? DT_UINT16 : DT_UINT8)) return image;
    Tensor out(dtype_, image.shape());
    const int64_t n = image.NumElements();
    if (dtype_ == DT_UINT16) {  // a JPEG (PNGs decode wide)
      const uint8_t* in = image.data<uint8_t>();
      uint16_t* o = out.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint16_t>(in[i] << 8);
    } else if (wide) {
      const uint16_t* in = image.data<uint16_t>();
      float* o = out.data<float>();
      for (int64_t i = 0; i < n; ++i) o[i] = in[i] * (1.0f / 65535.0f);
    } else {
      const uint8_t* in = image.data<uint8_t>();
      float* o = out.data<float>();
      for (int64_t i = 0; i < n; ++i) o[i] = in[i] * (1.0f / 255.0f);
    }
    return out;
  }

  int64_t channels_ = 0;
  DType dtype_ = DT_UINT8;
  JpegDecodeOptions jpeg_;
  bool crop_ = false;
};

// Shared checks of the encoders: a [height, width, channels] image whose
// dims the codec can hold.
Status CheckEncodeImage(const std::string& op, const Tensor& image, int64_t max_dim) {
  if (image.dims() != 3) {
    return errors::InvalidArgument(op, ": image must be [height, width, channels], got shape ",
                                   image.shape(), " of ", image.dtype());
  }
  if (image.dim_size(0) > max_dim || image.dim_size(1) > max_dim) {
    return errors::InvalidArgument(op, ": image ", image.shape(), " is larger than ", max_dim,
                                   " pixels in height or width");
  }
  return Status::OK();
}

class EncodeJpegOp : public OpKernel {
 public:
  explicit EncodeJpegOp(OpKernelConstruction* context) : OpKernel(context) {
    int64_t quality = 95, x_density = 300, y_density = 300;
    std::string unit;
    context->SetStatus(context->GetAttr("format", &format_));
    context->SetStatus(context->GetAttr("quality", &quality));
    context->SetStatus(context->GetAttr("progressive", &options_.progressive));
    context->SetStatus(context->GetAttr("optimize_size", &options_.optimize_size));
    context->SetStatus(context->GetAttr("chroma_downsampling", &options_.chroma_downsampling));
    context->SetStatus(context->GetAttr("density_unit", &unit));
    context->SetStatus(context->GetAttr("x_density", &x_density));
    context->SetStatus(context->GetAttr("y_density", &y_density));
    context->SetStatus(context->GetAttr("xmp_metadata", &options_.xmp_metadata));
    if (!context->status().ok()) return;
    if (quality < 0 || quality > 100) {
      context->SetStatus(
          errors::InvalidArgument("EncodeJpeg: quality must be in [0, 100], got ", quality));
    }
    for (int64_t density : {x_density, y_density}) {
      if (density < 0 || density > 65535) {
        context->SetStatus(errors::InvalidArgument(
            "EncodeJpeg: x_density and y_density must be in [0, 65535], got ", density));
      }
    }
    if (options_.xmp_metadata.size() > 65000) {
      context->SetStatus(errors::InvalidArgument("EncodeJpeg: xmp_metadata of ",
                                                 options_.xmp_metadata.size(),
                                                 " bytes does not fit a JPEG marker"));
    }
    options_.quality = static_cast<int>(quality);
    options_.x_density = static_cast<int>(x_density);
    options_.y_density = static_cast<int>(y_density);
    options_.density_in_cm = unit == "cm";
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& image = context->input(0);
    OP_REQUIRES_OK(context, CheckEncodeImage("EncodeJpeg", image, 65500));
    const int64_t channels = image.dim_size(2);
    const int64_t wanted = format_ == "grayscale" ? 1 : format_ == "rgb" ? 3 : channels;
    OP_REQUIRES(
        context, (wanted == 1 || wanted == 3) && channels == wanted,
        errors::InvalidArgument("EncodeJpeg: image ", image.shape(), " must have 1 or 3 channels",
                                format_.empty() ? "" : " as format '", format_,
                                format_.empty() ? "" : "' says"));
    std::string out, error;
    OP_REQUIRES(
        context,
        EncodeJpegBytes(image.data<uint8_t>(), image.dim_size(0), image.dim_size(1),
                        static_cast<int>(channels), options_, &out, &error),
        errors::InvalidArgument("EncodeJpeg: cannot encode image ", image.shape(), ": ", error));
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &output));
    output->data<std::string>()[0] = std::move(out);
  }

 private:
  std::string format_;
  JpegEncodeOptions options_;
};

class EncodePngOp : public OpKernel {
 public:
  explicit EncodePngOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("compression", &compression_));
    if (context->status().ok() && (compression_ < -1 || compression_ > 9)) {
      context->SetStatus(
          errors::InvalidArgument("EncodePng: compression must be in [-1, 9], got ", compression_));
    }
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& image = context->input(0);
    OP_REQUIRES_OK(context, CheckEncodeImage("EncodePng", image, int64_t{1} << 30));
    const int64_t channels = image.dim_size(2);
    OP_REQUIRES(context, channels >= 1 && channels <= 4,
                errors::InvalidArgument("EncodePng: image ", image.shape(), " of ", image.dtype(),
                                        " must have 1 to 4 channels"));
    std::string out, error;
    const int bits = image.dtype() == DT_UINT16 ? 16 : 8;
    OP_REQUIRES(context,
                EncodePngBytes(image.raw_data(), image.dim_size(0), image.dim_size(1),
                               static_cast<int>(channels), bits, static_cast<int>(compression_),
                               &out, &error),
                errors::InvalidArgument("EncodePng: cannot encode image ", image.shape(), " of ",
                                        image.dtype(), ": ", error));
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape(), &output));
    output->data<std::string>()[0] = std::move(out);
  }

 private:
  int64_t compression_ = -1;
};

class ExtractJpegShapeOp : public OpKernel {
 public:
  explicit ExtractJpegShapeOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("output_type", &output_type_));
  }

  void Compute(OpKernelContext* context) override {
    const Tensor& contents = context->input(0);
    OP_REQUIRES(context, contents.dims() == 0,
                errors::InvalidArgument("ExtractJpegShape: contents must be a scalar string, "
                                        "got shape ",
                                        contents.shape()));
    const std::string& data = contents.data<std::string>()[0];
    OP_REQUIRES(context, SniffFormat(data) == ImageFormat::kJpeg,
                errors::InvalidArgument("ExtractJpegShape: the input (", data.size(),
                                        " bytes) is not a JPEG"));
    int64_t shape[3];
    std::string error;
    OP_REQUIRES(
        context,
        JpegHeaderShape(reinterpret_cast<const uint8_t*>(data.data()), data.size(), shape, &error),
        errors::InvalidArgument("ExtractJpegShape: invalid JPEG header (", data.size(),
                                " bytes): ", error));
    Tensor* output;
    OP_REQUIRES_OK(context, context->allocate_output(0, TensorShape({3}), &output));
    for (int i = 0; i < 3; ++i) {
      if (output_type_ == DT_INT32) {
        output->data<int32_t>()[i] = static_cast<int32_t>(shape[i]);
      } else {
        output->data<int64_t>()[i] = shape[i];
      }
    }
  }

 private:
  DType output_type_ = DT_INT32;
};

}  // namespace

void RegisterImageCodecKernels(KernelRegistry* registry) {
  for (const char* op :
       {"DecodeJpeg", "DecodePng", "DecodeImage", "DecodeAndCropJpeg", "DecodeBmp"}) {
    registry->Register(KernelBuilder(op), MakeKernel<DecodeImageOp>);
  }
  registry->Register(KernelBuilder("EncodeJpeg"), MakeKernel<EncodeJpegOp>);
  registry->Register(KernelBuilder("EncodePng"), MakeKernel<EncodePngOp>);
  registry->Register(KernelBuilder("ExtractJpegShape"), MakeKernel<ExtractJpegShapeOp>);
}

}  // namespace weir
