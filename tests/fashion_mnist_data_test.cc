// The Fashion-MNIST reader on the real files of Debian's
// dataset-fashion-mnist, and on damaged copies.
#include "fashion_mnist_data.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "weir/base/file_system.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

TEST(FashionMnistDataTest, LoadsTheRealDataset) {
  StatusOr<fashion_mnist::Dataset> data = fashion_mnist::Load();
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train.images.shape(), TensorShape({60000, 784}));
  EXPECT_EQ(data->train.labels.shape(), TensorShape({60000}));
  EXPECT_EQ(data->test.images.shape(), TensorShape({10000, 784}));
  // The dataset is balanced: 6,000 training and 1,000 test images a class.
  std::vector<int> train_counts(10), test_counts(10);
  for (int32_t label : data->train.labels.flat<int32_t>()) ++train_counts[label];
  for (int32_t label : data->test.labels.flat<int32_t>()) ++test_counts[label];
  EXPECT_EQ(train_counts, std::vector<int>(10, 6000));
  EXPECT_EQ(test_counts, std::vector<int>(10, 1000));
  float lo = 1, hi = 0;
  for (float v : data->train.images.flat<float>()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_EQ(lo, 0.f);
  EXPECT_EQ(hi, 1.f);
}

class DamagedFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("weir_fmnist_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string WriteGzip(const std::string& name, const std::string& bytes) {
    std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
    return path;
  }
  fs::path dir_;
};

TEST_F(DamagedFilesTest, MissingDirectorySaysHowToInstall) {
  StatusOr<fashion_mnist::Dataset> data = fashion_mnist::Load((dir_ / "nothing").string());
  EXPECT_EQ(data.status().code(), Code::kNotFound);
  EXPECT_NE(data.status().message().find("train-images-idx3-ubyte.gz"), std::string::npos);
  EXPECT_NE(data.status().message().find("apt-get install dataset-fashion-mnist"), std::string::npos);
}

TEST_F(DamagedFilesTest, TruncatedAndMalformedFilesAreDataLoss) {
  // Labels: magic 0x801, count 4, but only 3 bytes of data.
  std::string truncated = WriteGzip("short.gz", std::string("\0\0\x08\x01\0\0\0\x04\x01\x02\x03", 11));
  StatusOr<Tensor> t = fashion_mnist::ReadIdxFile(truncated);
  EXPECT_EQ(t.status().code(), Code::kDataLoss) << t.status();
  EXPECT_NE(t.status().message().find("short.gz"), std::string::npos);

  std::string bad_magic = WriteGzip("magic.gz", std::string("\0\0\x09\x01\0\0\0\x01\x01", 9));
  EXPECT_EQ(fashion_mnist::ReadIdxFile(bad_magic).status().code(), Code::kDataLoss);

  std::string not_gzip = (dir_ / "garbage.gz").string();
  ASSERT_TRUE(WriteStringToFileAtomic(not_gzip, std::string("\x1f\x8b\x08\x00garbage", 11)).ok());
  EXPECT_EQ(fashion_mnist::ReadIdxFile(not_gzip).status().code(), Code::kDataLoss);

  std::string good = WriteGzip("good.gz", std::string("\0\0\x08\x01\0\0\0\x03\x01\x02\x09", 11));
  StatusOr<Tensor> labels = fashion_mnist::ReadIdxFile(good);
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(labels->shape(), TensorShape({3}));
  EXPECT_EQ(labels->data<uint8_t>()[2], 9);
}

}  // namespace
}  // namespace weir
