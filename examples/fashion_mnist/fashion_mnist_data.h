// Fashion-MNIST from the IDX files of Debian's `dataset-fashion-mnist`
// (/usr/share/datasets/fashion-mnist/*.gz).
//
// Images come back as float [n, 784] scaled to [0, 1], labels as int32 [n].
// A missing, truncated or malformed file is an error that names it and says
// how to install the package.
#pragma once

#include <string>

#include "weir/base/status.h"
#include "weir/framework/tensor.h"

namespace weir {
namespace fashion_mnist {

inline constexpr char kDefaultDir[] = "/usr/share/datasets/fashion-mnist";
inline constexpr int kImageSize = 28 * 28;
inline constexpr int kNumClasses = 10;

struct Split {
  Tensor images;  // float [n, 784], values in [0, 1]
  Tensor labels;  // int32 [n], values in [0, 10)
};

struct Dataset {
  Split train;  // 60,000 examples
  Split test;   // 10,000 examples
};

// Reads "<dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz".
StatusOr<Dataset> Load(const std::string& dir = kDefaultDir);

// Only the test split ("<dir>/t10k-*"), for runs that train from elsewhere.
StatusOr<Split> LoadTestSplit(const std::string& dir = kDefaultDir);

// One IDX file (gzip-compressed or not), checked against its magic number:
// 0x803 for uint8 images [n, rows, cols], 0x801 for uint8 labels [n].
StatusOr<Tensor> ReadIdxFile(const std::string& path);

}  // namespace fashion_mnist
}  // namespace weir
