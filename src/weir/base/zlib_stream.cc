#include "weir/base/zlib_stream.h"

#include <zlib.h>

#include "weir/base/logging.h"

namespace weir {
namespace {

constexpr size_t kZlibBufferBytes = 256 * 1024;

// TensorFlow's ZlibCompressionOptions: window_bits MAX_WBITS, +16 for the
// gzip header and trailer instead of zlib's.
int WindowBits(RecordCompression compression) {
  return compression == RecordCompression::kGzip ? MAX_WBITS + 16 : MAX_WBITS;
}

std::string_view ZlibMessage(const z_stream& stream, int code) {
  if (stream.msg != nullptr) return stream.msg;
  switch (code) {
    case Z_MEM_ERROR: return "out of memory";
    case Z_DATA_ERROR: return "invalid data";
    case Z_NEED_DICT: return "needs a preset dictionary";
    default: return "error";
  }
}

}  // namespace

StatusOr<RecordCompression> ParseRecordCompression(std::string_view name) {
  if (name.empty()) return RecordCompression::kNone;
  if (name == "ZLIB") return RecordCompression::kZlib;
  if (name == "GZIP") return RecordCompression::kGzip;
  return errors::InvalidArgument("unknown compression type '", name,
                                 "': expected \"\", \"ZLIB\" or \"GZIP\"");
}

std::string_view RecordCompressionName(RecordCompression compression) {
  switch (compression) {
    case RecordCompression::kZlib: return "ZLIB";
    case RecordCompression::kGzip: return "GZIP";
    case RecordCompression::kNone: break;
  }
  return "";
}

struct ZlibCompressor::State {
  z_stream stream{};
  Sink sink;
  std::unique_ptr<char[]> out = std::make_unique<char[]>(kZlibBufferBytes);
  bool finished = false;
};

StatusOr<std::unique_ptr<ZlibCompressor>> ZlibCompressor::Create(RecordCompression compression,
                                                                 Sink sink) {
  CHECK(compression != RecordCompression::kNone);
  auto state = std::make_unique<State>();
  state->sink = std::move(sink);
  // TensorFlow's defaults: default level, memLevel 9, default strategy.
  int code = deflateInit2(&state->stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
                          WindowBits(compression), 9, Z_DEFAULT_STRATEGY);
  if (code != Z_OK) {
    return errors::ResourceExhausted("could not start a ", RecordCompressionName(compression),
                                     " stream: ", ZlibMessage(state->stream, code));
  }
  state->stream.next_out = reinterpret_cast<Bytef*>(state->out.get());
  state->stream.avail_out = kZlibBufferBytes;
  return std::unique_ptr<ZlibCompressor>(new ZlibCompressor(std::move(state)));
}

ZlibCompressor::ZlibCompressor(std::unique_ptr<State> state) : state_(std::move(state)) {}

ZlibCompressor::~ZlibCompressor() { deflateEnd(&state_->stream); }

// Runs deflate over the pending input with `flush`, handing the sink each
// full output buffer, and (for a flush) what the flush produced.
Status ZlibCompressor::Deflate(int flush) {
  z_stream& stream = state_->stream;
  auto drain = [&]() -> Status {
    size_t produced = kZlibBufferBytes - stream.avail_out;
    stream.next_out = reinterpret_cast<Bytef*>(state_->out.get());
    stream.avail_out = kZlibBufferBytes;
    if (produced == 0) return Status::OK();
    return state_->sink(std::string_view(state_->out.get(), produced));
  };
  while (true) {
    int code = deflate(&stream, flush);
    if (code == Z_STREAM_ERROR) return errors::Internal("deflate: ", ZlibMessage(stream, code));
    // Z_BUF_ERROR only means no progress was possible this call.
    bool done = flush == Z_NO_FLUSH ? stream.avail_in == 0
                : flush == Z_FINISH ? code == Z_STREAM_END
                                    : stream.avail_out != 0;
    if (stream.avail_out == 0 || (done && flush != Z_NO_FLUSH)) WEIR_RETURN_IF_ERROR(drain());
    if (done) return Status::OK();
  }
}

Status ZlibCompressor::Append(std::string_view data) {
  DCHECK(!state_->finished) << "Append after Finish";
  z_stream& stream = state_->stream;
  while (!data.empty()) {
    // avail_in is 32 bits: feed very large records in pieces.
    size_t piece = std::min<size_t>(data.size(), 1u << 30);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(piece);
    WEIR_RETURN_IF_ERROR(Deflate(Z_NO_FLUSH));
    data.remove_prefix(piece);
  }
  return Status::OK();
}

Status ZlibCompressor::Flush() { return Deflate(Z_SYNC_FLUSH); }

Status ZlibCompressor::Finish() {
  DCHECK(!state_->finished) << "second Finish";
  state_->finished = true;
  return Deflate(Z_FINISH);
}

struct ZlibDecompressor::State {
  z_stream stream{};
  RecordCompression compression = RecordCompression::kNone;
  std::unique_ptr<SequentialFile> file;
  std::unique_ptr<char[]> in = std::make_unique<char[]>(kZlibBufferBytes);
  uint64_t consumed = 0;  // compressed bytes read before the current fill of `in`
  size_t filled = 0;      // bytes of the current fill
  bool file_at_end = false;
  bool stream_ended = false;  // the last member ended cleanly
  bool any_input = false;
};

StatusOr<std::unique_ptr<ZlibDecompressor>> ZlibDecompressor::Create(
    RecordCompression compression, std::unique_ptr<SequentialFile> file) {
  CHECK(compression != RecordCompression::kNone);
  auto state = std::make_unique<State>();
  state->compression = compression;
  state->file = std::move(file);
  int code = inflateInit2(&state->stream, WindowBits(compression));
  if (code != Z_OK) {
    return errors::ResourceExhausted("could not start reading the ",
                                     RecordCompressionName(compression), " stream of '",
                                     state->file->path(), "': ", ZlibMessage(state->stream, code));
  }
  return std::unique_ptr<ZlibDecompressor>(new ZlibDecompressor(std::move(state)));
}

ZlibDecompressor::ZlibDecompressor(std::unique_ptr<State> state) : state_(std::move(state)) {}

ZlibDecompressor::~ZlibDecompressor() { inflateEnd(&state_->stream); }

StatusOr<size_t> ZlibDecompressor::Read(char* out, size_t n) {
  State& s = *state_;
  z_stream& stream = s.stream;
  size_t produced = 0;
  while (produced < n) {
    if (stream.avail_in == 0 && !s.file_at_end) {
      WEIR_ASSIGN_OR_RETURN(size_t got, s.file->Read(s.in.get(), kZlibBufferBytes));
      s.consumed += s.filled;
      s.filled = got;
      stream.next_in = reinterpret_cast<Bytef*>(s.in.get());
      stream.avail_in = static_cast<uInt>(got);
      if (got == 0) s.file_at_end = true;
      if (got > 0) s.any_input = true;
    }
    if (stream.avail_in == 0 && s.file_at_end) {
      // A file with no bytes at all is an empty stream, as TensorFlow reads it.
      // Bytes decoded before the cut are returned; the next call reports it.
      if (s.stream_ended || !s.any_input || produced > 0) return produced;
      return errors::DataLoss("truncated ", RecordCompressionName(s.compression), " stream in '",
                              s.file->path(), "': the file ends at byte ", s.file->size(),
                              " inside the stream");
    }
    if (s.stream_ended) {
      // More bytes after a complete member: the next member of the stream.
      inflateReset(&stream);
      s.stream_ended = false;
    }
    size_t piece = std::min<size_t>(n - produced, 1u << 30);
    stream.next_out = reinterpret_cast<Bytef*>(out + produced);
    stream.avail_out = static_cast<uInt>(piece);
    int code = inflate(&stream, Z_NO_FLUSH);
    produced += piece - stream.avail_out;
    if (code == Z_STREAM_END) {
      s.stream_ended = true;
    } else if (code != Z_OK && code != Z_BUF_ERROR) {
      uint64_t position = s.consumed + (s.filled - stream.avail_in);
      return errors::DataLoss("corrupt ", RecordCompressionName(s.compression), " stream in '",
                              s.file->path(), "' near compressed byte ", position, ": ",
                              ZlibMessage(stream, code));
    }
  }
  return produced;
}

}  // namespace weir
