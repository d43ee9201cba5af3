// Weir's op registry as a binary OpList (proto/op_def.proto, TensorFlow's
// OpList on the wire), for the op-definition comparison with TensorFlow
// (op_def_parity.py, which runs it).
//
//   weir_op_list FILE    writes every registered op, in name order, to FILE
//
// Any error exits non-zero with the message on stderr.
#include <iostream>

#include "weir/base/file_system.h"
#include "weir/framework/op_def.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/standard_registration.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: weir_op_list FILE\n";
    return 2;
  }
  weir::RegisterStandardOpsAndKernels();
  std::string bytes = weir::SerializeOpList(weir::OpRegistry::Global()->ListOps());
  weir::Status status = weir::WriteStringToFileAtomic(argv[1], bytes);
  if (!status.ok()) {
    std::cerr << "weir_op_list: " << status << "\n";
    return 1;
  }
  return 0;
}
