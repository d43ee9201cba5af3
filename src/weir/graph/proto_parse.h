// Decoding protobuf messages from untrusted bytes, with the limits every
// parser of Weir's wire formats applies (graph files, SavedModels, op
// lists): protobuf's 2 GiB, and a bound on nesting so that a hostile file
// cannot overflow the stack. Only for .cc files that parse protos.
#pragma once

#include <string>
#include <string_view>

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace weir {

// How deep messages may nest. A GraphDef's deepest real nesting (a func
// attr inside a body node inside a function of its library, inside a
// SavedModel's MetaGraphDef) is a few dozen levels.
inline constexpr int kMaxProtoNesting = 100;

// Decodes binary `bytes` into `message`; false when they do not parse,
// are over 2 GiB, leave bytes over or nest deeper than kMaxProtoNesting.
// May throw std::bad_alloc for a huge message (callers map it to
// ResourceExhausted).
bool ParseBinaryProto(std::string_view bytes, google::protobuf::Message* message);

// Decodes the text format; on failure `error` gets the first error with its
// line and column ("line 3 column 7: ...").
bool ParseTextProto(std::string_view text, google::protobuf::Message* message, std::string* error);

}  // namespace weir
