#include "weir/framework/node_def.h"

namespace weir {

std::string NodeDef::Describe() const {
  std::string out = StrCat("'", name, "' (", op, ")");
  if (!source_location.empty()) out += StrCat(" created at ", source_location);
  return out;
}

std::string TensorId::ToString() const {
  if (port < 0) return "^" + node;
  if (port == 0) return node;
  return StrCat(node, ":", port);
}

StatusOr<TensorId> ParseTensorName(std::string_view text) {
  TensorId id;
  if (!text.empty() && text[0] == '^') {
    id.node = std::string(text.substr(1));
    id.port = -1;
    if (id.node.empty() || id.node.find(':') != std::string::npos) {
      return errors::InvalidArgument("malformed control input '", text, "'");
    }
    return id;
  }
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    id.node = std::string(text);
  } else {
    id.node = std::string(text.substr(0, colon));
    int64_t port;
    if (!ParseInt64(text.substr(colon + 1), &port) || port < 0 || port > INT32_MAX) {
      return errors::InvalidArgument("malformed tensor name '", text,
                                     "': expected 'node' or 'node:port' with port >= 0");
    }
    id.port = static_cast<int>(port);
  }
  if (id.node.empty()) {
    return errors::InvalidArgument("malformed tensor name '", text, "': empty node name");
  }
  return id;
}

}  // namespace weir
