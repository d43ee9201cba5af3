#include "weir/framework/rendezvous.h"

namespace weir {

std::string Rendezvous::CreateKey(const std::string& src_device, uint64_t src_incarnation,
                                  const std::string& dst_device, const std::string& edge_name,
                                  const FrameAndIter& frame_iter) {
  return StrCat(src_device, ";", src_incarnation, ";", dst_device, ";", edge_name, ";",
                frame_iter.frame_id, ":", frame_iter.iter_id);
}

StatusOr<Rendezvous::ParsedKey> Rendezvous::ParseKey(const std::string& key) {
  std::vector<std::string> parts = StrSplit(key, ';');
  if (parts.size() != 5) {
    return errors::InvalidArgument("rendezvous key '", key, "' does not have 5 parts");
  }
  ParsedKey parsed;
  parsed.src_device = parts[0];
  // Incarnations and frame ids are full-range uint64s, so parse them unsigned.
  if (!ParseUint64(parts[1], &parsed.src_incarnation)) {
    return errors::InvalidArgument("rendezvous key '", key, "' has a bad incarnation");
  }
  parsed.dst_device = parts[2];
  parsed.edge_name = parts[3];
  std::vector<std::string> frame = StrSplit(parts[4], ':');
  if (frame.size() != 2 || !ParseUint64(frame[0], &parsed.frame_iter.frame_id) ||
      !ParseInt64(frame[1], &parsed.frame_iter.iter_id)) {
    return errors::InvalidArgument("rendezvous key '", key, "' has a bad frame:iter");
  }
  parsed.full_key = key;
  return parsed;
}

}  // namespace weir
