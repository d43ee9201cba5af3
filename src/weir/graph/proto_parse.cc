#include "weir/graph/proto_parse.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <limits>

#include "weir/base/str_util.h"

namespace weir {
namespace {

// Keeps the text parser's first error for the Status (instead of
// protobuf's log line).
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first_.empty()) first_ = StrCat("line ", line + 1, " column ", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

constexpr size_t kMaxBytes = static_cast<size_t>(std::numeric_limits<int>::max());

}  // namespace

bool ParseBinaryProto(std::string_view bytes, google::protobuf::Message* message) {
  if (bytes.size() > kMaxBytes) return false;
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  coded.SetRecursionLimit(kMaxProtoNesting);
  return message->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

bool ParseTextProto(std::string_view text, google::protobuf::Message* message, std::string* error) {
  if (text.size() > kMaxBytes) {
    *error = StrCat(text.size(), " bytes, over protobuf's 2 GiB limit");
    return false;
  }
  FirstErrorCollector collector;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.SetRecursionLimit(kMaxProtoNesting);
  google::protobuf::io::ArrayInputStream stream(text.data(), static_cast<int>(text.size()));
  if (parser.Parse(&stream, message)) return true;
  *error = collector.first();
  return false;
}

}  // namespace weir
