#include "weir/framework/tensor_bundle.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <Eigen/Core>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "proto/tensor_bundle.pb.h"
#include "proto/tensor_shape.pb.h"
#include "weir/base/coding.h"
#include "weir/base/crc32c.h"
#include "weir/base/file_system.h"
#include "weir/framework/sstable.h"
#include "weir/framework/tensor_slice.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// One tensor of each dtype a checkpoint holds, with scalars, empty tensors
// and awkward strings among them.
std::vector<std::pair<std::string, Tensor>> AllKinds() {
  using H = Eigen::half;
  std::vector<std::pair<std::string, Tensor>> tensors = {
      {"float/matrix", Tensor::FromVector<float>({1.5f, -2, 0, 3e30f, -0.0f, 7},
                                                 TensorShape({2, 3}))},
      {"float/scalar", Tensor::Scalar<float>(42.25f)},
      {"float/empty", Tensor(DT_FLOAT, TensorShape({0}))},
      {"float/empty_matrix", Tensor(DT_FLOAT, TensorShape({3, 0}))},
      {"double", Tensor::FromVector<double>({1e-300, 2.5, -3})},
      {"int32", Tensor::FromVector<int32_t>({-1, 0, 2147483647, -2147483647 - 1})},
      {"int64", Tensor::FromVector<int64_t>({int64_t{1} << 62, -5}, TensorShape({2, 1}))},
      {"bool", Tensor::FromVector<bool>({true, false, true})},
      {"uint8", Tensor::FromVector<uint8_t>({0, 255, 128}, TensorShape({1, 3}))},
      {"int8", Tensor::FromVector<int8_t>({-128, 127})},
      {"int16", Tensor::FromVector<int16_t>({-300, 300})},
      {"uint16", Tensor::FromVector<uint16_t>({65535})},
      {"uint32", Tensor::FromVector<uint32_t>({4000000000u})},
      {"uint64", Tensor::Scalar<uint64_t>(~uint64_t{0})},
      {"half", Tensor::FromVector<H>({H(1.5f), H(-0.25f), H(65504.0f)})},
      {"bfloat16", Tensor::FromVector<Eigen::bfloat16>({Eigen::bfloat16(3.0f)})},
      {"complex64", Tensor::FromVector<complex64>({{1, 2}, {-3, 4}})},
      {"complex128", Tensor::Scalar<complex128>({5, -6})},
      {"string/vector", Tensor::FromVector<std::string>(
                            {"", "a", std::string("nul\0byte", 8), std::string(300, 'x')})},
      {"string/scalar", Tensor::Scalar<std::string>("global_step")},
      {"string/empty", Tensor(DT_STRING, TensorShape({0, 2}))},
  };
  return tensors;
}

class TensorBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_bundle_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    prefix_ = dir_ + "/ckpt/model.ckpt-100";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> Files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  Status Write(const std::string& prefix,
               const std::vector<std::pair<std::string, Tensor>>& tensors) {
    BundleWriter writer(prefix);
    for (const auto& [name, tensor] : tensors) WEIR_RETURN_IF_ERROR(writer.Add(name, tensor));
    return writer.Finish();
  }

  // Flips one byte of the file at `path`.
  void FlipByte(const std::string& path, size_t offset) {
    std::string contents = *ReadFileToString(path);
    ASSERT_LT(offset, contents.size());
    contents[offset] ^= 0x01;
    ASSERT_TRUE(WriteStringToFileAtomic(path, contents).ok());
  }

  // The parsed entry of `name`, read straight from the index.
  wire::BundleEntryProto EntryOf(const std::string& name) {
    StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
    EXPECT_TRUE(table.ok()) << table.status();
    wire::BundleEntryProto entry;
    const std::string* value = table->Find(name);
    EXPECT_NE(value, nullptr) << name;
    if (value != nullptr) {
      EXPECT_TRUE(entry.ParseFromString(*value));
    }
    return entry;
  }

  std::string dir_;
  std::string prefix_;
};

TEST_F(TensorBundleTest, EveryDtypeRoundTrips) {
  const auto tensors = AllKinds();
  ASSERT_TRUE(Write(prefix_, tensors).ok());
  EXPECT_EQ(Files(), (std::vector<std::string>{"model.ckpt-100.data-00000-of-00001",
                                               "model.ckpt-100.index"}));
  StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (const auto& [name, expected] : tensors) {
    StatusOr<Tensor> got = (*reader)->Lookup(name);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->ContentEquals(expected))
        << name << ": " << got->DebugString() << " vs " << expected.DebugString();
  }
}

TEST_F(TensorBundleTest, ListTensorsIsSortedWithDtypesAndShapes) {
  ASSERT_TRUE(Write(prefix_, AllKinds()).ok());
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto expected = AllKinds();
  std::sort(expected.begin(), expected.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::vector<BundleTensorInfo>& listed = (*reader)->ListTensors();
  ASSERT_EQ(listed.size(), expected.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i].name, expected[i].first);
    EXPECT_EQ(listed[i].dtype, expected[i].second.dtype()) << listed[i].name;
    EXPECT_EQ(listed[i].shape, expected[i].second.shape()) << listed[i].name;
  }
  const BundleTensorInfo* info = (*reader)->FindTensor("int32");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->dtype, DT_INT32);
  EXPECT_EQ(info->shape, TensorShape({4}));
  EXPECT_EQ((*reader)->FindTensor(""), nullptr);
  EXPECT_EQ((*reader)->FindTensor("int3"), nullptr);
}

TEST_F(TensorBundleTest, EmptyCheckpoint) {
  ASSERT_TRUE(Write(prefix_, {}).ok());
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->ListTensors().empty());
  EXPECT_EQ(fs::file_size(BundleDataFilename(prefix_, 0, 1)), 0u);
}

// The bytes and checksums TensorFlow's reader expects, spelled out.
TEST_F(TensorBundleTest, WireLayoutOfNumbersAndStrings) {
  Tensor floats = Tensor::FromVector<float>({1, 2});
  Tensor strings = Tensor::FromVector<std::string>({"a", "bcd"});
  ASSERT_TRUE(Write(prefix_, {{"f", floats}, {"s", strings}}).ok());

  const std::string data = *ReadFileToString(BundleDataFilename(prefix_, 0, 1));
  const std::string float_bytes(static_cast<const char*>(floats.raw_data()), 8);
  std::string lengths_as_u32;
  PutFixed32(&lengths_as_u32, 1);
  PutFixed32(&lengths_as_u32, 3);
  std::string length_crc;
  PutFixed32(&length_crc, crc32c::Mask(crc32c::Value(lengths_as_u32)));
  const std::string string_bytes = std::string("\x01\x03", 2) + length_crc + "abcd";
  EXPECT_EQ(data, float_bytes + string_bytes);

  wire::BundleEntryProto f = EntryOf("f");
  EXPECT_EQ(f.dtype(), wire::DT_FLOAT);
  ASSERT_EQ(f.shape().dim_size(), 1);
  EXPECT_EQ(f.shape().dim(0).size(), 2);
  EXPECT_EQ(f.shard_id(), 0);
  EXPECT_EQ(f.offset(), 0);
  EXPECT_EQ(f.size(), 8);
  EXPECT_EQ(f.crc32c(), crc32c::Mask(crc32c::Value(float_bytes)));

  wire::BundleEntryProto s = EntryOf("s");
  EXPECT_EQ(s.dtype(), wire::DT_STRING);
  EXPECT_EQ(s.offset(), 8);
  EXPECT_EQ(s.size(), static_cast<int64_t>(string_bytes.size()));
  const std::string covered = lengths_as_u32 + length_crc + "abcd";
  EXPECT_EQ(s.crc32c(), crc32c::Mask(crc32c::Value(covered)));
  EXPECT_NE(s.crc32c(), crc32c::Mask(crc32c::Value(string_bytes)));

  StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(table->entries().size(), 3u);
  EXPECT_EQ(table->entries()[0].first, "");
  wire::BundleHeaderProto header;
  ASSERT_TRUE(header.ParseFromString(table->entries()[0].second));
  EXPECT_EQ(header.num_shards(), 1);
  EXPECT_EQ(header.endianness(), wire::BundleHeaderProto::LITTLE);
  EXPECT_EQ(header.version().producer(), 1);
  EXPECT_EQ(header.version().min_consumer(), 0);
}

TEST_F(TensorBundleTest, MissingTensorIsNotFoundNamingTensorAndPrefix) {
  ASSERT_TRUE(Write(prefix_, {{"w", Tensor::Scalar<float>(1)}}).ok());
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok());
  StatusOr<Tensor> got = (*reader)->Lookup("bias");
  EXPECT_TRUE(errors::IsNotFound(got.status())) << got.status();
  EXPECT_TRUE(Mentions(got.status(), "'bias'")) << got.status();
  EXPECT_TRUE(Mentions(got.status(), prefix_)) << got.status();
}

TEST_F(TensorBundleTest, MissingCheckpointIsNotFound) {
  auto reader = BundleReader::Open(dir_ + "/nothing");
  EXPECT_TRUE(errors::IsNotFound(reader.status())) << reader.status();
  EXPECT_TRUE(Mentions(reader.status(), dir_ + "/nothing")) << reader.status();
}

TEST_F(TensorBundleTest, DamagedDataIsDataLossNamingFileAndTensor) {
  Tensor big(DT_FLOAT, TensorShape({1000}));
  for (int i = 0; i < 1000; ++i) big.data<float>()[i] = static_cast<float>(i);
  ASSERT_TRUE(Write(prefix_, {{"a", big}, {"b", Tensor::FromVector<std::string>({"xyz"})}}).ok());
  const std::string data_path = BundleDataFilename(prefix_, 0, 1);
  FlipByte(data_path, 123);
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  StatusOr<Tensor> a = (*reader)->Lookup("a");
  EXPECT_TRUE(errors::IsDataLoss(a.status())) << a.status();
  EXPECT_TRUE(Mentions(a.status(), data_path)) << a.status();
  EXPECT_TRUE(Mentions(a.status(), "tensor 'a'")) << a.status();
  EXPECT_TRUE((*reader)->Lookup("b").ok());

  // The string's bytes, then its length checksum.
  for (size_t offset : {size_t{4000 + 5 + 1}, size_t{4000 + 2}}) {
    ASSERT_TRUE(Write(prefix_, {{"a", big}, {"b", Tensor::FromVector<std::string>({"xyz"})}})
                    .ok());
    FlipByte(data_path, offset);
    reader = BundleReader::Open(prefix_);
    ASSERT_TRUE(reader.ok()) << reader.status();
    StatusOr<Tensor> b = (*reader)->Lookup("b");
    EXPECT_TRUE(errors::IsDataLoss(b.status())) << b.status();
    EXPECT_TRUE(Mentions(b.status(), "tensor 'b'")) << b.status();
    EXPECT_TRUE((*reader)->Lookup("a").ok());
  }
}

TEST_F(TensorBundleTest, DamagedIndexIsDataLossNamingTheIndex) {
  ASSERT_TRUE(Write(prefix_, AllKinds()).ok());
  FlipByte(BundleIndexFilename(prefix_), 40);
  auto reader = BundleReader::Open(prefix_);
  EXPECT_TRUE(errors::IsDataLoss(reader.status())) << reader.status();
  EXPECT_TRUE(Mentions(reader.status(), BundleIndexFilename(prefix_))) << reader.status();
}

TEST_F(TensorBundleTest, TruncatedOrMissingDataFileIsDataLoss) {
  ASSERT_TRUE(Write(prefix_, AllKinds()).ok());
  const std::string data_path = BundleDataFilename(prefix_, 0, 1);
  std::string data = *ReadFileToString(data_path);
  ASSERT_TRUE(WriteStringToFileAtomic(data_path, data.substr(0, data.size() - 1)).ok());
  auto reader = BundleReader::Open(prefix_);
  EXPECT_TRUE(errors::IsDataLoss(reader.status())) << reader.status();
  EXPECT_TRUE(Mentions(reader.status(), data_path)) << reader.status();
  EXPECT_TRUE(Mentions(reader.status(), "truncated")) << reader.status();

  ASSERT_TRUE(DeleteFile(data_path).ok());
  reader = BundleReader::Open(prefix_);
  EXPECT_TRUE(errors::IsDataLoss(reader.status())) << reader.status();
  EXPECT_TRUE(Mentions(reader.status(), data_path)) << reader.status();
}

// An index whose entry disagrees with its tensor's dtype and shape (a bug
// in some writer): the reader must refuse, never hand out garbage.
TEST_F(TensorBundleTest, EntrySizeMismatchIsDataLoss) {
  ASSERT_TRUE(Write(prefix_, {{"w", Tensor::FromVector<float>({1, 2, 3})},
                              {"s", Tensor::FromVector<std::string>({"ab", "c"})}})
                  .ok());
  StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
  ASSERT_TRUE(table.ok());
  SSTableBuilder builder;
  for (const auto& [key, value] : table->entries()) {
    wire::BundleEntryProto entry;
    if (!key.empty()) {
      ASSERT_TRUE(entry.ParseFromString(value));
      entry.set_size(entry.size() - 1);
      builder.Add(key, entry.SerializeAsString());
    } else {
      builder.Add(key, value);
    }
  }
  ASSERT_TRUE(WriteStringToFileAtomic(BundleIndexFilename(prefix_), builder.Finish()).ok());
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (const char* name : {"w", "s"}) {
    StatusOr<Tensor> got = (*reader)->Lookup(name);
    EXPECT_TRUE(errors::IsDataLoss(got.status())) << got.status();
    EXPECT_TRUE(Mentions(got.status(), StrCat("tensor '", name, "'"))) << got.status();
    EXPECT_TRUE(Mentions(got.status(), BundleDataFilename(prefix_, 0, 1))) << got.status();
  }
}

// A checkpoint of two data files (two saves merged), then its index
// rewritten by `edit` (key "" is the header).
class ShardedBundleTest : public TensorBundleTest {
 protected:
  void SetUp() override {
    TensorBundleTest::SetUp();
    ASSERT_TRUE(Write(dir_ + "/a", {{"a", Tensor::FromVector<float>({1, 2, 3})}}).ok());
    ASSERT_TRUE(Write(dir_ + "/b", {{"b", Tensor::FromVector<int64_t>({4, 5})},
                                    {"s", Tensor::FromVector<std::string>({"x", "yz"})}})
                    .ok());
    ASSERT_TRUE(MergeBundles({dir_ + "/a", dir_ + "/b"}, prefix_, false).ok());
  }

  void EditIndex(const std::function<void(const std::string&, std::string*)>& edit) {
    StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
    ASSERT_TRUE(table.ok());
    SSTableBuilder builder;
    for (const auto& [key, value] : table->entries()) {
      std::string edited = value;
      edit(key, &edited);
      builder.Add(key, edited);
    }
    ASSERT_TRUE(WriteStringToFileAtomic(BundleIndexFilename(prefix_), builder.Finish()).ok());
  }
  void EditEntry(const std::string& name,
                 const std::function<void(wire::BundleEntryProto*)>& edit) {
    EditIndex([&](const std::string& key, std::string* value) {
      if (key != name) return;
      wire::BundleEntryProto entry;
      ASSERT_TRUE(entry.ParseFromString(*value));
      edit(&entry);
      *value = entry.SerializeAsString();
    });
  }
};

TEST_F(ShardedBundleTest, ReadsEachEntryFromItsShard) {
  EXPECT_EQ(EntryOf("a").shard_id(), 0);
  EXPECT_EQ(EntryOf("b").shard_id(), 1);
  EXPECT_EQ(EntryOf("s").shard_id(), 1);
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->Lookup("a")->ContentEquals(Tensor::FromVector<float>({1, 2, 3})));
  EXPECT_TRUE((*reader)->Lookup("b")->ContentEquals(Tensor::FromVector<int64_t>({4, 5})));
  EXPECT_TRUE((*reader)->Lookup("s")->ContentEquals(Tensor::FromVector<std::string>({"x", "yz"})));
}

TEST_F(ShardedBundleTest, ShardIdsOutOfRangeAreDataLoss) {
  for (int shard : {2, -1, 1 << 30}) {
    EditEntry("b", [&](wire::BundleEntryProto* e) { e->set_shard_id(shard); });
    auto reader = BundleReader::Open(prefix_);
    EXPECT_TRUE(errors::IsDataLoss(reader.status())) << shard << ": " << reader.status();
    EXPECT_TRUE(Mentions(reader.status(), "'b'")) << reader.status();
    EXPECT_TRUE(Mentions(reader.status(), BundleIndexFilename(prefix_))) << reader.status();
  }
}

TEST_F(ShardedBundleTest, OffsetsPastTheirShardsEndAreDataLoss) {
  // "a" is the whole of shard 0 (12 bytes); shard 1 is longer, so an offset
  // that fits there must still be refused for shard 0.
  EditEntry("a", [](wire::BundleEntryProto* e) { e->set_offset(4); });
  auto reader = BundleReader::Open(prefix_);
  EXPECT_TRUE(errors::IsDataLoss(reader.status())) << reader.status();
  EXPECT_TRUE(Mentions(reader.status(), BundleDataFilename(prefix_, 0, 2))) << reader.status();
  EXPECT_TRUE(Mentions(reader.status(), "'a'")) << reader.status();
  EditEntry("a", [](wire::BundleEntryProto* e) {
    e->set_offset(0);
    e->set_size(std::numeric_limits<int64_t>::max());
  });
  reader = BundleReader::Open(prefix_);
  EXPECT_TRUE(errors::IsDataLoss(reader.status())) << reader.status();
}

TEST_F(ShardedBundleTest, AHeaderShardCountThatDisagreesIsDataLoss) {
  for (int num_shards : {3, 0, -2, 1 << 20}) {
    EditIndex([&](const std::string& key, std::string* value) {
      if (!key.empty()) return;
      wire::BundleHeaderProto header;
      ASSERT_TRUE(header.ParseFromString(*value));
      header.set_num_shards(num_shards);
      *value = header.SerializeAsString();
    });
    auto reader = BundleReader::Open(prefix_);
    EXPECT_TRUE(errors::IsDataLoss(reader.status())) << num_shards << ": " << reader.status();
  }
  // 3 data files: the third is missing, and named.
  EditIndex([&](const std::string& key, std::string* value) {
    if (!key.empty()) return;
    wire::BundleHeaderProto header;
    ASSERT_TRUE(header.ParseFromString(*value));
    header.set_num_shards(3);
    *value = header.SerializeAsString();
  });
  auto reader = BundleReader::Open(prefix_);
  EXPECT_TRUE(Mentions(reader.status(), BundleDataFilename(prefix_, 0, 3))) << reader.status();
}

TEST_F(TensorBundleTest, UnsupportedDtypesAreListedAndRefusedByName) {
  ASSERT_TRUE(Write(prefix_, {{"w", Tensor::Scalar<float>(1)}}).ok());
  StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
  ASSERT_TRUE(table.ok());
  SSTableBuilder builder;
  for (const auto& [key, value] : table->entries()) {
    wire::BundleEntryProto entry;
    if (key == "w") {
      ASSERT_TRUE(entry.ParseFromString(value));
      entry.set_dtype(wire::DT_VARIANT);
      builder.Add(key, entry.SerializeAsString());
    } else {
      builder.Add(key, value);
    }
  }
  ASSERT_TRUE(WriteStringToFileAtomic(BundleIndexFilename(prefix_), builder.Finish()).ok());
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->ListTensors().size(), 1u);
  EXPECT_EQ((*reader)->ListTensors()[0].dtype, DT_INVALID);
  StatusOr<Tensor> got = (*reader)->Lookup("w");
  EXPECT_TRUE(errors::IsUnimplemented(got.status())) << got.status();
  EXPECT_TRUE(Mentions(got.status(), "DT_VARIANT")) << got.status();
}

TEST_F(TensorBundleTest, BadAddsAreInvalidArgumentAndStick) {
  BundleWriter writer(prefix_);
  Status s = writer.Add("", Tensor::Scalar<float>(1));
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(Mentions(s, prefix_)) << s;
  EXPECT_EQ(writer.Add("fine", Tensor::Scalar<float>(1)), s);
  EXPECT_EQ(writer.Finish(), s);

  BundleWriter resource_writer(prefix_);
  s = resource_writer.Add("handle", Tensor(DT_RESOURCE, TensorShape()));
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(Mentions(s, "'handle'")) << s;
  EXPECT_TRUE(Mentions(s, "resource")) << s;

  BundleWriter variant_writer(prefix_);
  s = variant_writer.Add("list", Tensor(DT_VARIANT, TensorShape()));
  EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(Mentions(s, "'list'")) << s;
  EXPECT_TRUE(Mentions(s, "variant")) << s;
}

TEST_F(TensorBundleTest, FailedFinishLeavesThePreviousCheckpoint) {
  ASSERT_TRUE(Write(prefix_, {{"w", Tensor::Scalar<float>(1)}}).ok());
  const std::vector<std::string> files = Files();
  {
    BundleWriter writer(prefix_);
    ASSERT_TRUE(writer.Add("w", Tensor::Scalar<float>(2)).ok());
    EXPECT_EQ(Files().size(), files.size() + 1);  // the temporary data file
    Status s = writer.Add("w", Tensor::Scalar<float>(3));
    EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
    EXPECT_TRUE(Mentions(s, "added twice")) << s;
    EXPECT_EQ(writer.Finish(), s);
    EXPECT_EQ(Files(), files);
  }
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Lookup("w")->scalar<float>(), 1.0f);
}

TEST_F(TensorBundleTest, AbandonedWriterLeavesNothing) {
  {
    BundleWriter writer(prefix_);
    ASSERT_TRUE(writer.Add("w", Tensor::Scalar<float>(2)).ok());
  }
  EXPECT_TRUE(Files().empty());
  EXPECT_TRUE(errors::IsNotFound(BundleReader::Open(prefix_).status()));
}

TEST_F(TensorBundleTest, FailedRenameRemovesTemporaryFiles) {
  // A directory where the data file belongs: the rename into place fails.
  ASSERT_TRUE(RecursivelyCreateDir(BundleDataFilename(prefix_, 0, 1) + "/occupied").ok());
  BundleWriter writer(prefix_);
  ASSERT_TRUE(writer.Add("w", Tensor::Scalar<float>(2)).ok());
  Status s = writer.Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Mentions(s, BundleDataFilename(prefix_, 0, 1))) << s;
  EXPECT_TRUE(Files().empty());
  EXPECT_FALSE(FileExists(BundleIndexFilename(prefix_)));
  EXPECT_TRUE(errors::IsFailedPrecondition(writer.Finish()));
}

TEST_F(TensorBundleTest, RewritingAPrefixReplacesEverything) {
  ASSERT_TRUE(Write(prefix_, AllKinds()).ok());
  ASSERT_TRUE(Write(prefix_, {{"only", Tensor::FromVector<int64_t>({7, 8})}}).ok());
  EXPECT_EQ(Files().size(), 2u);
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->ListTensors().size(), 1u);
  EXPECT_TRUE((*reader)->Lookup("only")->ContentEquals(Tensor::FromVector<int64_t>({7, 8})));
}

TEST_F(TensorBundleTest, BoolBytesAreNormalized) {
  // Another writer may store true as any nonzero byte.
  ASSERT_TRUE(Write(prefix_, {{"b", Tensor::FromVector<uint8_t>({0, 7, 1})}}).ok());
  StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
  ASSERT_TRUE(table.ok());
  SSTableBuilder builder;
  builder.Add("", *table->Find(""));
  wire::BundleEntryProto entry;
  ASSERT_TRUE(entry.ParseFromString(*table->Find("b")));
  entry.set_dtype(wire::DT_BOOL);
  builder.Add("b", entry.SerializeAsString());
  ASSERT_TRUE(WriteStringToFileAtomic(BundleIndexFilename(prefix_), builder.Finish()).ok());
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok());
  StatusOr<Tensor> got = (*reader)->Lookup("b");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->ContentEquals(Tensor::FromVector<bool>({false, true, true})));
}


// Slices as TensorFlow saves partitioned variables: listed under the
// tensor's name with its full shape, read whole or by any slice.
class SlicedBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "weir_sliced_bundle.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    prefix_ = dir_ + "/ckpt";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static ShapeAndSlice Spec(const std::string& spec) {
    StatusOr<ShapeAndSlice> slice = ParseShapeAndSlice(spec);
    EXPECT_TRUE(slice.ok()) << slice.status();
    return *slice;
  }
  std::string dir_, prefix_;
};

TEST_F(SlicedBundleTest, SlicesRoundTripWholeAndBySlice) {
  // m is the 6x4 matrix 0..23 in three row blocks; s a string vector in two.
  Tensor m(DT_INT32, TensorShape({6, 4}));
  for (int i = 0; i < 24; ++i) m.data<int32_t>()[i] = i;
  {
    BundleWriter writer(prefix_);
    for (const char* spec : {"6 4 4,2:-", "6 4 0,1:-", "6 4 1,3:-"}) {
      StatusOr<Tensor> piece = ExtractSlice(m, Spec(spec));
      ASSERT_TRUE(piece.ok());
      ASSERT_TRUE(writer.AddSlice("m", Spec(spec), *piece).ok()) << spec;
    }
    ASSERT_TRUE(writer.AddSlice("s", Spec("3 0,2"), Tensor::FromVector<std::string>({"a", ""})).ok());
    ASSERT_TRUE(writer.AddSlice("s", Spec("3 2,1"), Tensor::FromVector<std::string>({"ccc"})).ok());
    ASSERT_TRUE(writer.Add("whole", Tensor::FromVector<float>({1, 2, 3})).ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  auto reader = BundleReader::Open(prefix_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_EQ((*reader)->ListTensors().size(), 3u);
  EXPECT_EQ((*reader)->FindTensor("m")->shape, TensorShape({6, 4}));
  StatusOr<Tensor> whole = (*reader)->Lookup("m");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(std::vector<int32_t>(whole->flat<int32_t>().begin(), whole->flat<int32_t>().end()),
            std::vector<int32_t>(m.flat<int32_t>().begin(), m.flat<int32_t>().end()));
  for (const char* spec : {"6 4 0,6:1,2", "6 4 3,2:-", "6 4 1,3:-", "6 4 5,0:-"}) {
    StatusOr<Tensor> got = (*reader)->LookupSlice("m", Spec(spec));
    ASSERT_TRUE(got.ok()) << spec << ": " << got.status();
    StatusOr<Tensor> want = ExtractSlice(m, Spec(spec));
    EXPECT_EQ(std::vector<int32_t>(got->flat<int32_t>().begin(), got->flat<int32_t>().end()),
              std::vector<int32_t>(want->flat<int32_t>().begin(), want->flat<int32_t>().end()))
        << spec;
  }
  StatusOr<Tensor> s = (*reader)->Lookup("s");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(std::vector<std::string>(s->flat<std::string>().begin(), s->flat<std::string>().end()),
            (std::vector<std::string>{"a", "", "ccc"}));
  // A whole tensor reads by slice too.
  StatusOr<Tensor> part = (*reader)->LookupSlice("whole", Spec("3 1,2"));
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(std::vector<float>(part->flat<float>().begin(), part->flat<float>().end()),
            (std::vector<float>{2, 3}));
  EXPECT_TRUE(errors::IsInvalidArgument((*reader)->LookupSlice("whole", Spec("4 1,2")).status()));
}

TEST_F(SlicedBundleTest, BadSlicesAreInvalidArgumentAndStick) {
  BundleWriter writer(prefix_);
  Tensor two_rows(DT_FLOAT, TensorShape({2, 3}));
  ASSERT_TRUE(writer.AddSlice("w", Spec("4 3 0,2:-"), two_rows).ok());
  Status overlap = writer.AddSlice("w", Spec("4 3 1,2:-"), two_rows);
  EXPECT_TRUE(errors::IsInvalidArgument(overlap)) << overlap;
  EXPECT_NE(overlap.message().find("tensor 'w'"), std::string::npos) << overlap;
  EXPECT_EQ(writer.Finish(), overlap);
  EXPECT_FALSE(std::filesystem::exists(prefix_ + ".index"));

  for (auto add : std::vector<std::function<Status(BundleWriter&)>>{
           [&](BundleWriter& w) { return w.AddSlice("w", Spec("4 3 0,1:-"), two_rows); },
           [&](BundleWriter& w) {
             EXPECT_TRUE(w.AddSlice("w", Spec("4 3 0,2:-"), two_rows).ok());
             return w.AddSlice("w", Spec("5 3 2,2:-"), two_rows);
           },
           [&](BundleWriter& w) {
             EXPECT_TRUE(w.Add("w", two_rows).ok());
             return w.AddSlice("w", Spec("4 3 0,2:-"), two_rows);
           },
           [&](BundleWriter& w) {
             EXPECT_TRUE(w.AddSlice("w", Spec("4 3 0,2:-"), two_rows).ok());
             return w.Add("w", two_rows);
           }}) {
    BundleWriter w(prefix_);
    Status s = add(w);
    EXPECT_TRUE(errors::IsInvalidArgument(s)) << s;
    EXPECT_NE(s.message().find("'w'"), std::string::npos) << s;
  }
}

TEST_F(SlicedBundleTest, MissingPieceIsDataLoss) {
  {
    BundleWriter writer(prefix_);
    ASSERT_TRUE(writer.AddSlice("w", Spec("4 0,2"), Tensor::FromVector<float>({1, 2})).ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  // Drop the piece's key from the index: the listed slice has no bytes.
  StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
  ASSERT_TRUE(table.ok());
  SSTableBuilder builder;
  for (const auto& [key, value] : table->entries()) {
    if (key.empty() || key[0] != '\0') builder.Add(key, value);
  }
  ASSERT_TRUE(WriteStringToFileAtomic(BundleIndexFilename(prefix_), builder.Finish()).ok());
  auto reader = BundleReader::Open(prefix_);
  EXPECT_TRUE(errors::IsDataLoss(reader.status())) << reader.status();
  EXPECT_NE(reader.status().message().find("tensor 'w'"), std::string::npos) << reader.status();
}

// 30000 one-element slices of a vector and 30000 cells of a 150 x 200
// matrix: checked in O(n log n) (pairwise, 4.5 * 10^8 steps each).
TEST_F(SlicedBundleTest, ManySlicesOpenAndAnOverlapAmongThemIsFound) {
  constexpr int64_t kN = 30000;
  constexpr int64_t kRows = 150, kCols = 200;
  Tensor v(DT_FLOAT, TensorShape({kN}));
  for (int64_t i = 0; i < kN; ++i) v.data<float>()[i] = static_cast<float>(i);
  {
    BundleWriter writer(prefix_);
    // Backwards, so that the order of the index differs from the order of
    // the extents.
    for (int64_t i = kN - 1; i >= 0; --i) {
      ShapeAndSlice slice{TensorShape({kN}), {i}, {1}};
      ASSERT_TRUE(
          writer.AddSlice("v", slice, Tensor::FromVector<float>({static_cast<float>(i)})).ok());
    }
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < kCols; ++c) {
        ShapeAndSlice slice{TensorShape({kRows, kCols}), {r, c}, {1, 1}};
        Tensor cell(DT_INT32, TensorShape({1, 1}));
        cell.data<int32_t>()[0] = static_cast<int32_t>(r * kCols + c);
        ASSERT_TRUE(writer.AddSlice("m", slice, cell).ok());
      }
    }
    ASSERT_TRUE(writer.Finish().ok());
  }
  {
    auto reader = BundleReader::Open(prefix_);
    ASSERT_TRUE(reader.ok()) << reader.status();
    StatusOr<Tensor> got = (*reader)->Lookup("v");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->ContentEquals(v));
    StatusOr<Tensor> cell = (*reader)->LookupSlice("m", Spec("150 200 149,1:199,1"));
    ASSERT_TRUE(cell.ok()) << cell.status();
    EXPECT_EQ(cell->data<int32_t>()[0], 149 * 200 + 199);
  }
  // List one stored slice twice (its bytes are there): the two overlap.
  for (const std::string name : {"v", "m"}) {
    StatusOr<SSTable> table = SSTable::Open(BundleIndexFilename(prefix_));
    ASSERT_TRUE(table.ok());
    SSTableBuilder builder;
    for (const auto& [key, value] : table->entries()) {
      if (key != name) {
        builder.Add(key, value);
        continue;
      }
      wire::BundleEntryProto entry;
      ASSERT_TRUE(entry.ParseFromString(value));
      *entry.add_slices() = entry.slices(entry.slices_size() / 2);
      builder.Add(key, entry.SerializeAsString());
    }
    const std::string index = BundleIndexFilename(prefix_);
    const std::string saved = index + ".saved";
    std::filesystem::copy_file(index, saved, std::filesystem::copy_options::overwrite_existing);
    ASSERT_TRUE(WriteStringToFileAtomic(index, builder.Finish()).ok());
    auto reader = BundleReader::Open(prefix_);
    EXPECT_TRUE(errors::IsDataLoss(reader.status())) << reader.status();
    EXPECT_NE(reader.status().message().find("two slices of tensor '" + name + "' overlap"),
              std::string::npos)
        << reader.status();
    std::filesystem::rename(saved, index);
  }
}

TEST_F(SlicedBundleTest, OverlapsAreFoundInEveryRank) {
  // Boxes that touch are disjoint; one element in common is an overlap,
  // also when the pieces are many and the overlap comes late (the writer
  // then finds it at Finish).
  Tensor cell(DT_FLOAT, TensorShape({1, 1, 1}));
  Tensor block(DT_FLOAT, TensorShape({2, 2, 2}));
  {
    BundleWriter writer(prefix_);
    for (int64_t i = 0; i < 100; ++i) {
      ASSERT_TRUE(writer
                      .AddSlice("w",
                                {TensorShape({4, 5, 6}), {i % 4, (i / 4) % 5, i / 20}, {1, 1, 1}},
                                cell)
                      .ok());
    }
    // Covers (2..3, 3..4, 4..5): cell i = 2 + 4 * 3 + 20 * 4 = 94 among them.
    ASSERT_TRUE(writer.AddSlice("w", {TensorShape({4, 5, 6}), {2, 3, 4}, {2, 2, 2}}, block).ok());
    Status status = writer.Finish();
    EXPECT_TRUE(errors::IsInvalidArgument(status)) << status;
    EXPECT_NE(status.message().find("tensor 'w' gets overlapping slices"), std::string::npos)
        << status;
  }
  {
    BundleWriter writer(prefix_);
    for (int64_t i = 0; i < 100; ++i) {
      ASSERT_TRUE(writer
                      .AddSlice("w",
                                {TensorShape({4, 5, 6}), {i % 4, (i / 4) % 5, i / 20}, {1, 1, 1}},
                                cell)
                      .ok());
    }
    // A block of cells not written yet: disjoint from them.
    ASSERT_TRUE(writer
                    .AddSlice("w", {TensorShape({4, 5, 6}), {0, 0, 5}, {2, 2, 1}},
                              Tensor(DT_FLOAT, TensorShape({2, 2, 1})))
                    .ok());
    EXPECT_TRUE(writer.Finish().ok());
  }
}

}  // namespace
}  // namespace weir
