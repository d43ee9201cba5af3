#include "fashion_mnist_data.h"

#include <zlib.h>

#include <vector>

namespace weir {
namespace fashion_mnist {
namespace {

constexpr char kInstallHint[] =
    "; install Debian's dataset-fashion-mnist package (`apt-get install dataset-fashion-mnist`, "
    "or scripts/install_deps.sh)";

StatusOr<std::string> ReadGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return errors::NotFound("cannot open Fashion-MNIST file '", path, "'", kInstallHint);
  }
  std::string data;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
  int error = 0;
  const char* message = gzerror(file, &error);
  bool failed = n < 0 || (error != Z_OK && error != Z_STREAM_END);
  std::string reason = failed ? message : "";
  gzclose(file);
  if (failed) {
    return errors::DataLoss("Fashion-MNIST file '", path, "' is damaged (", reason, ")",
                            kInstallHint);
  }
  return data;
}

uint32_t BigEndian32(const std::string& data, size_t offset) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data() + offset);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Images [n, 784] as floats in [0, 1].
StatusOr<Tensor> ImagesToFloat(const Tensor& raw, const std::string& path) {
  if (raw.dims() != 3 || raw.dim_size(1) * raw.dim_size(2) != kImageSize) {
    return errors::DataLoss("'", path, "' holds images of shape ", raw.shape(),
                            ", expected [n,28,28]", kInstallHint);
  }
  Tensor images(DT_FLOAT, TensorShape({raw.dim_size(0), kImageSize}));
  const uint8_t* src = raw.data<uint8_t>();
  float* dst = images.data<float>();
  for (int64_t i = 0; i < raw.NumElements(); ++i) dst[i] = src[i] * (1.0f / 255.0f);
  return images;
}

StatusOr<Tensor> LabelsToInt(const Tensor& raw, const std::string& path) {
  if (raw.dims() != 1) {
    return errors::DataLoss("'", path, "' holds labels of shape ", raw.shape(), ", expected [n]",
                            kInstallHint);
  }
  Tensor labels(DT_INT32, raw.shape());
  for (int64_t i = 0; i < raw.NumElements(); ++i) {
    uint8_t label = raw.data<uint8_t>()[i];
    if (label >= kNumClasses) {
      return errors::DataLoss("'", path, "' has label ", int{label}, " at index ", i,
                              ", outside [0, 10)", kInstallHint);
    }
    labels.data<int32_t>()[i] = label;
  }
  return labels;
}

StatusOr<Split> LoadSplit(const std::string& dir, const std::string& prefix) {
  std::string images_path = StrCat(dir, "/", prefix, "-images-idx3-ubyte.gz");
  std::string labels_path = StrCat(dir, "/", prefix, "-labels-idx1-ubyte.gz");
  WEIR_ASSIGN_OR_RETURN(Tensor raw_images, ReadIdxFile(images_path));
  WEIR_ASSIGN_OR_RETURN(Tensor raw_labels, ReadIdxFile(labels_path));
  Split split;
  WEIR_ASSIGN_OR_RETURN(split.images, ImagesToFloat(raw_images, images_path));
  WEIR_ASSIGN_OR_RETURN(split.labels, LabelsToInt(raw_labels, labels_path));
  if (split.images.dim_size(0) != split.labels.dim_size(0)) {
    return errors::DataLoss("'", images_path, "' has ", split.images.dim_size(0),
                            " images but '", labels_path, "' has ", split.labels.dim_size(0),
                            " labels", kInstallHint);
  }
  return split;
}

}  // namespace

StatusOr<Tensor> ReadIdxFile(const std::string& path) {
  WEIR_ASSIGN_OR_RETURN(std::string data, ReadGzip(path));
  if (data.size() < 8) {
    return errors::DataLoss("'", path, "' is too short to be an IDX file (", data.size(),
                            " bytes)", kInstallHint);
  }
  uint32_t magic = BigEndian32(data, 0);
  int rank = static_cast<int>(magic & 0xff);
  if ((magic >> 8) != 0x08 || (rank != 1 && rank != 3)) {
    return errors::DataLoss("'", path, "' has IDX magic 0x", std::hex, magic,
                            ", expected 0x801 (labels) or 0x803 (images)", kInstallHint);
  }
  size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (data.size() < header) {
    return errors::DataLoss("'", path, "' is truncated in its header", kInstallHint);
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < rank; ++d) dims.push_back(BigEndian32(data, 4 + 4 * d));
  // Checked: dims whose product wraps to the file's size must not pass.
  StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) {
    return errors::DataLoss("'", path, "' has a bad header: ", shape.status().message(),
                            kInstallHint);
  }
  const int64_t count = shape->num_elements();
  if (data.size() - header != static_cast<size_t>(count)) {
    return errors::DataLoss("'", path, "' should hold ", count, " bytes of data after its header but has ",
                            data.size() - header, kInstallHint);
  }
  Tensor out(DT_UINT8, *shape);
  std::copy(data.begin() + header, data.end(), out.data<uint8_t>());
  return out;
}

StatusOr<Split> LoadTestSplit(const std::string& dir) { return LoadSplit(dir, "t10k"); }

StatusOr<Dataset> Load(const std::string& dir) {
  Dataset dataset;
  WEIR_ASSIGN_OR_RETURN(dataset.train, LoadSplit(dir, "train"));
  WEIR_ASSIGN_OR_RETURN(dataset.test, LoadSplit(dir, "t10k"));
  return dataset;
}

}  // namespace fashion_mnist
}  // namespace weir
