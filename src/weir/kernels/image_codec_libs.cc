// libjpeg and libpng behind image_codec_libs.h. Both libraries report errors
// by longjmp; each function below that calls setjmp keeps every piece of
// state in a struct its caller owns (never an automatic variable changed
// after setjmp, never an object with a destructor in the jumped-over frame).
#include "weir/kernels/image_codec_libs.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include <jpeglib.h>
// after jpeglib.h: the message codes and ERREXIT / WARNMS
#include <jerror.h>
}

namespace weir {
namespace {

// ---- JPEG ----

struct JpegErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* manager = reinterpret_cast<JpegErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, manager->message);
  longjmp(manager->jump, 1);
}

// Warnings (corrupt data the decoder skipped over) are not printed.
void JpegEmitMessage(j_common_ptr, int) {}

// A source over memory that, when asked to recover a truncated file, ends it
// with an EOI marker once (the decoder then fills the missing rows).
struct JpegMemorySource {
  jpeg_source_mgr pub;
  bool try_recover_truncated;
  bool eoi_inserted;
};

const JOCTET kEndOfImage[2] = {0xFF, JPEG_EOI};

void SourceInit(j_decompress_ptr) {}
void SourceTerm(j_decompress_ptr) {}

boolean SourceFill(j_decompress_ptr cinfo) {
  auto* source = reinterpret_cast<JpegMemorySource*>(cinfo->src);
  if (source->try_recover_truncated && !source->eoi_inserted) {
    WARNMS(cinfo, JWRN_JPEG_EOF);
    source->pub.next_input_byte = kEndOfImage;
    source->pub.bytes_in_buffer = 2;
    source->eoi_inserted = true;
    return TRUE;
  }
  ERREXIT(cinfo, JERR_INPUT_EOF);
  return FALSE;
}

void SourceSkip(j_decompress_ptr cinfo, long count) {  // NOLINT(runtime/int): libjpeg's type
  auto* source = reinterpret_cast<JpegMemorySource*>(cinfo->src);
  if (count <= 0) return;
  if (static_cast<size_t>(count) <= source->pub.bytes_in_buffer) {
    source->pub.next_input_byte += count;
    source->pub.bytes_in_buffer -= count;
    return;
  }
  source->pub.next_input_byte += source->pub.bytes_in_buffer;
  source->pub.bytes_in_buffer = 0;
  SourceFill(cinfo);
}

struct JpegDecodeState {
  jpeg_decompress_struct cinfo;
  JpegErrorManager error;
  JpegMemorySource source;
  bool created = false;
};

void SetUpDecompress(JpegDecodeState* state, const uint8_t* data, size_t size,
                     bool try_recover_truncated) {
  state->cinfo.err = jpeg_std_error(&state->error.pub);
  state->error.pub.error_exit = JpegErrorExit;
  state->error.pub.emit_message = JpegEmitMessage;
  state->error.message[0] = '\0';
  jpeg_create_decompress(&state->cinfo);
  state->created = true;
  state->source.pub.init_source = SourceInit;
  state->source.pub.fill_input_buffer = SourceFill;
  state->source.pub.skip_input_data = SourceSkip;
  state->source.pub.resync_to_restart = jpeg_resync_to_restart;
  state->source.pub.term_source = SourceTerm;
  state->source.pub.next_input_byte = data;
  state->source.pub.bytes_in_buffer = size;
  state->source.try_recover_truncated = try_recover_truncated;
  state->source.eoi_inserted = false;
  state->cinfo.src = &state->source.pub;
}

// The setjmp frame: only the pointers it was given, nothing changed after
// setjmp is read after a jump.
bool RunJpegDecode(JpegDecodeState* state, const JpegDecodeOptions& options, ImageSink* sink,
                   std::string* error) {
  if (setjmp(state->error.jump)) {
    *error = state->error.message;
    return false;
  }
  jpeg_decompress_struct* cinfo = &state->cinfo;
  jpeg_read_header(cinfo, TRUE);
  const J_COLOR_SPACE space = cinfo->jpeg_color_space;
  if (space == JCS_CMYK || space == JCS_YCCK) {
    *error = "CMYK and YCCK JPEGs are not supported";
    return false;
  }
  int channels = options.channels;
  if (channels == 0) channels = cinfo->num_components == 1 ? 1 : 3;
  cinfo->out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  cinfo->scale_num = 1;
  cinfo->scale_denom = options.ratio;
  cinfo->do_fancy_upsampling = options.fancy_upscaling ? TRUE : FALSE;
  cinfo->dct_method = options.accurate_dct ? JDCT_ISLOW : JDCT_IFAST;
  jpeg_calc_output_dimensions(cinfo);
  const int64_t height = cinfo->output_height, width = cinfo->output_width;
  if (height <= 0 || width <= 0) {
    *error = "the JPEG has no pixels";
    return false;
  }
  if (height * width * channels >= kMaxDecodedImageValues) {
    *error = "the JPEG of " + std::to_string(height) + " x " + std::to_string(width) + " x " +
             std::to_string(channels) + " values is larger than the limit of 2^29";
    return false;
  }
  jpeg_start_decompress(cinfo);
  if (cinfo->output_components != channels) {
    *error = "the JPEG decoder gave " + std::to_string(cinfo->output_components) +
             " components, not " + std::to_string(channels);
    return false;
  }
  auto* pixels = static_cast<uint8_t*>(sink->Allocate(height, width, channels));
  if (pixels == nullptr) {
    *error = "could not allocate the image";
    return false;
  }
  const int64_t row_bytes = width * channels;
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW row = pixels + static_cast<int64_t>(cinfo->output_scanline) * row_bytes;
    if (jpeg_read_scanlines(cinfo, &row, 1) != 1) break;
  }
  const int64_t rows_read = cinfo->output_scanline;
  if (rows_read < height) {
    if (rows_read < options.acceptable_fraction * height || !options.try_recover_truncated) {
      *error = "the JPEG is truncated: " + std::to_string(rows_read) + " of " +
               std::to_string(height) + " rows decoded";
      return false;
    }
    std::memset(pixels + rows_read * row_bytes, 0, (height - rows_read) * row_bytes);
  }
  jpeg_abort_decompress(cinfo);
  return true;
}

bool RunJpegHeader(JpegDecodeState* state, int64_t shape[3], std::string* error) {
  if (setjmp(state->error.jump)) {
    *error = state->error.message;
    return false;
  }
  jpeg_read_header(&state->cinfo, TRUE);
  shape[0] = state->cinfo.image_height;
  shape[1] = state->cinfo.image_width;
  shape[2] = state->cinfo.num_components;
  return true;
}

struct JpegEncodeState {
  jpeg_compress_struct cinfo;
  JpegErrorManager error;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): libjpeg's type
  bool created = false;
};

bool RunJpegEncode(JpegEncodeState* state, const uint8_t* pixels, int64_t height, int64_t width,
                   int channels, const JpegEncodeOptions& options, std::string* error) {
  if (setjmp(state->error.jump)) {
    *error = state->error.message;
    return false;
  }
  jpeg_compress_struct* cinfo = &state->cinfo;
  jpeg_mem_dest(cinfo, &state->buffer, &state->size);
  cinfo->image_width = static_cast<JDIMENSION>(width);
  cinfo->image_height = static_cast<JDIMENSION>(height);
  cinfo->input_components = channels;
  cinfo->in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, options.quality, TRUE);
  cinfo->write_JFIF_header = TRUE;
  cinfo->density_unit = options.density_in_cm ? 2 : 1;
  cinfo->X_density = static_cast<UINT16>(options.x_density);
  cinfo->Y_density = static_cast<UINT16>(options.y_density);
  if (options.progressive) jpeg_simple_progression(cinfo);
  if (options.optimize_size) cinfo->optimize_coding = TRUE;
  if (!options.chroma_downsampling && channels == 3) {
    cinfo->comp_info[0].h_samp_factor = 1;
    cinfo->comp_info[0].v_samp_factor = 1;
  }
  jpeg_start_compress(cinfo, TRUE);
  if (!options.xmp_metadata.empty()) {
    static const char kXmpPrefix[] = "http://ns.adobe.com/xap/1.0/";  // with its '\0'
    std::string marker(kXmpPrefix, sizeof(kXmpPrefix));
    marker += options.xmp_metadata;
    jpeg_write_marker(cinfo, JPEG_APP0 + 1, reinterpret_cast<const JOCTET*>(marker.data()),
                      static_cast<unsigned int>(marker.size()));
  }
  const int64_t row_bytes = width * channels;
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels) + cinfo->next_scanline * row_bytes;
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  return true;
}

// ---- PNG ----

struct PngState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t offset = 0;
  std::string* out = nullptr;
  std::vector<png_bytep> rows;
  char message[256] = {0};
};

void PngError(png_structp png, png_const_charp message) {
  auto* state = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof(state->message), "%s", message);
  png_longjmp(png, 1);
}

void PngWarning(png_structp, png_const_charp) {}

void PngRead(png_structp png, png_bytep into, png_size_t count) {
  auto* state = static_cast<PngState*>(png_get_io_ptr(png));
  if (count > state->size - state->offset) png_error(png, "the PNG is truncated");
  std::memcpy(into, state->data + state->offset, count);
  state->offset += count;
}

void PngWrite(png_structp png, png_bytep from, png_size_t count) {
  auto* state = static_cast<PngState*>(png_get_io_ptr(png));
  state->out->append(reinterpret_cast<const char*>(from), count);
}

void PngFlush(png_structp) {}

bool RunPngDecode(PngState* state, int channels, int bits, ImageSink* sink, std::string* error) {
  if (setjmp(png_jmpbuf(state->png))) {
    *error = state->message;
    return false;
  }
  png_structp png = state->png;
  png_infop info = state->info;
  png_set_read_fn(png, state, PngRead);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  const bool is_gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
  const bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
  // channels is not assigned after setjmp (it would be clobbered by a jump).
  const int out_channels = channels != 0 ? channels : (is_gray ? 1 : 3) + (has_alpha ? 1 : 0);
  const bool want_alpha = out_channels == 2 || out_channels == 4;
  const bool want_gray = out_channels < 3;
  if (static_cast<int64_t>(height) * width * out_channels >= kMaxDecodedImageValues) {
    *error = "the PNG of " + std::to_string(height) + " x " + std::to_string(width) + " x " +
             std::to_string(out_channels) + " values is larger than the limit of 2^29";
    return false;
  }
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (is_gray && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (want_alpha && has_trns) {
    png_set_tRNS_to_alpha(png);
  } else if (!want_alpha && has_alpha) {
    png_set_strip_alpha(png);
  } else if (want_alpha && !has_alpha) {
    png_set_add_alpha(png, 0xffff, PNG_FILLER_AFTER);
  }
  if (want_gray && !is_gray) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  if (!want_gray && is_gray) png_set_gray_to_rgb(png);
  if (bit_depth == 16 && bits == 8) png_set_strip_16(png);
  if (bit_depth < 16 && bits == 16) png_set_expand_16(png);
  if (bits == 16) {
    const uint16_t probe = 1;
    if (*reinterpret_cast<const uint8_t*>(&probe) == 1) png_set_swap(png);  // little-endian
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t row_bytes = static_cast<size_t>(width) * out_channels * (bits / 8);
  if (png_get_channels(png, info) != out_channels || png_get_rowbytes(png, info) != row_bytes) {
    *error = "the PNG decoder gave " + std::to_string(png_get_channels(png, info)) +
             " channels, not " + std::to_string(out_channels);
    return false;
  }
  auto* pixels = static_cast<uint8_t*>(sink->Allocate(height, width, out_channels));
  if (pixels == nullptr) {
    *error = "could not allocate the image";
    return false;
  }
  state->rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y) state->rows[y] = pixels + y * row_bytes;
  png_read_image(png, state->rows.data());
  png_read_end(png, nullptr);
  return true;
}

bool RunPngEncode(PngState* state, const void* pixels, int64_t height, int64_t width, int channels,
                  int bits, int compression, std::string* error) {
  if (setjmp(png_jmpbuf(state->png))) {
    *error = state->message;
    return false;
  }
  static const int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                    PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  png_structp png = state->png;
  png_set_write_fn(png, state, PngWrite, PngFlush);
  if (compression != -1) png_set_compression_level(png, compression);
  png_set_IHDR(png, state->info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height),
               bits, kColorTypes[channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, state->info);
  if (bits == 16) {
    const uint16_t probe = 1;
    if (*reinterpret_cast<const uint8_t*>(&probe) == 1) png_set_swap(png);
  }
  const size_t row_bytes = static_cast<size_t>(width) * channels * (bits / 8);
  for (int64_t y = 0; y < height; ++y) {
    png_write_row(png, static_cast<const uint8_t*>(pixels) + y * row_bytes);
  }
  png_write_end(png, nullptr);
  return true;
}

}  // namespace

bool DecodeJpegBytes(const uint8_t* data, size_t size, const JpegDecodeOptions& options,
                     ImageSink* sink, std::string* error) {
  if (size == 0) {
    *error = "the JPEG is empty";
    return false;
  }
  JpegDecodeState state;
  SetUpDecompress(&state, data, size, options.try_recover_truncated);
  const bool ok = RunJpegDecode(&state, options, sink, error);
  jpeg_destroy_decompress(&state.cinfo);
  return ok;
}

bool JpegHeaderShape(const uint8_t* data, size_t size, int64_t shape[3], std::string* error) {
  if (size == 0) {
    *error = "the JPEG is empty";
    return false;
  }
  JpegDecodeState state;
  SetUpDecompress(&state, data, size, false);
  const bool ok = RunJpegHeader(&state, shape, error);
  jpeg_destroy_decompress(&state.cinfo);
  return ok;
}

bool EncodeJpegBytes(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                     const JpegEncodeOptions& options, std::string* out, std::string* error) {
  JpegEncodeState state;
  state.cinfo.err = jpeg_std_error(&state.error.pub);
  state.error.pub.error_exit = JpegErrorExit;
  state.error.pub.emit_message = JpegEmitMessage;
  state.error.message[0] = '\0';
  jpeg_create_compress(&state.cinfo);
  const bool ok = RunJpegEncode(&state, pixels, height, width, channels, options, error);
  if (ok) out->assign(reinterpret_cast<const char*>(state.buffer), state.size);
  jpeg_destroy_compress(&state.cinfo);
  std::free(state.buffer);
  return ok;
}

bool DecodePngBytes(const uint8_t* data, size_t size, int channels, int bits, ImageSink* sink,
                    std::string* error) {
  PngState state;
  state.data = data;
  state.size = size;
  state.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, PngError, PngWarning);
  if (state.png == nullptr) {
    *error = "could not create the PNG reader";
    return false;
  }
  state.info = png_create_info_struct(state.png);
  bool ok = state.info != nullptr;
  if (!ok) *error = "could not create the PNG reader";
  if (ok) ok = RunPngDecode(&state, channels, bits, sink, error);
  png_destroy_read_struct(&state.png, state.info ? &state.info : nullptr, nullptr);
  return ok;
}

bool EncodePngBytes(const void* pixels, int64_t height, int64_t width, int channels, int bits,
                    int compression, std::string* out, std::string* error) {
  PngState state;
  state.out = out;
  state.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state, PngError, PngWarning);
  if (state.png == nullptr) {
    *error = "could not create the PNG writer";
    return false;
  }
  state.info = png_create_info_struct(state.png);
  bool ok = state.info != nullptr;
  if (!ok) *error = "could not create the PNG writer";
  if (ok) ok = RunPngEncode(&state, pixels, height, width, channels, bits, compression, error);
  png_destroy_write_struct(&state.png, state.info ? &state.info : nullptr);
  return ok;
}

}  // namespace weir
