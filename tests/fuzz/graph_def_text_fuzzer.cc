// Text-format GraphDef -> ParseGraphDefText -> import and compile
// (fuzz_support.h). A graph that parses must also survive re-encoding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_support.h"
#include "weir/graph/graph_def_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weir;
  fuzz::InitOnce();
  StatusOr<GraphDef> graph =
      ParseGraphDefText(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!graph.ok()) return 0;
  fuzz::Require(ParseGraphDefText(SerializeGraphDefText(*graph)).ok(),
                "a parsed text GraphDef does not parse after SerializeGraphDefText");
  fuzz::ImportAndCompile(*graph);
  return 0;
}
