// TFRecord files written by TensorFlow (tests/data/tf_records_*, from
// export_records.py) read by Weir, byte for byte: with RecordReader, and
// through TFRecordReaderV2 in a session, whose keys must equal the keys
// TensorFlow's own reader gave.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "weir/base/record_reader.h"
#include "weir/ops/standard_ops.h"
#include "weir/runtime/session.h"

namespace weir {
namespace {

struct Fixture {
  std::vector<std::string> records;
  struct File {
    std::string path, compression;
    std::vector<uint64_t> offsets;
  };
  std::vector<File> files;
};

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

Fixture ReadFixture() {
  const std::string dir = WEIR_TEST_DATA;
  std::ifstream in(dir + "/tf_records.json");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str());
  Fixture fixture;
  for (const auto& hex : json.at("records")) fixture.records.push_back(FromHex(hex));
  for (const auto& file : json.at("files")) {
    fixture.files.push_back({dir + "/" + file.at("file").get<std::string>(),
                             file.at("compression").get<std::string>(),
                             file.at("offsets").get<std::vector<uint64_t>>()});
  }
  return fixture;
}

TEST(TfRecordsTest, FixturesHoldEmptyAndBinaryRecordsInEveryCompression) {
  Fixture fixture = ReadFixture();
  ASSERT_EQ(fixture.files.size(), 3u);
  EXPECT_EQ(fixture.records[0], "");
  EXPECT_EQ(fixture.records[2].size(), 256u);
}

TEST(TfRecordsTest, RecordReaderReadsTensorFlowsFiles) {
  Fixture fixture = ReadFixture();
  for (const Fixture::File& file : fixture.files) {
    SCOPED_TRACE(file.path);
    auto reader = RecordReader::Open(file.path, *ParseRecordCompression(file.compression));
    ASSERT_TRUE(reader.ok()) << reader.status();
    for (size_t i = 0; i < fixture.records.size(); ++i) {
      EXPECT_EQ((*reader)->offset(), file.offsets[i]);
      std::string record;
      Status s = (*reader)->ReadRecord(&record);
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_TRUE(record == fixture.records[i]) << "record " << i;
    }
    std::string record;
    EXPECT_EQ((*reader)->ReadRecord(&record).code(), Code::kOutOfRange);
  }
}

TEST(TfRecordsTest, ReaderOpsReadTensorFlowsFilesWithTensorFlowsKeys) {
  Fixture fixture = ReadFixture();
  Scope root = Scope::NewRootScope();
  for (size_t f = 0; f < fixture.files.size(); ++f) {
    Scope s = root.NewSubScope(StrCat("f", f));
    Output queue = ops::FIFOQueueV2(s.WithOpName("queue"), {DT_STRING});
    ops::QueueEnqueueV2(s.WithOpName("enqueue"), queue,
                        {Tensor::Scalar<std::string>(fixture.files[f].path)});
    ops::QueueCloseV2(s.WithOpName("close"), queue);
    Output reader = ops::TFRecordReaderV2(s.WithOpName("reader"),
                                          {{"compression_type", fixture.files[f].compression}});
    ops::ReaderReadUpToV2(s.WithOpName("read"), reader, queue, int64_t{2});
  }
  ASSERT_TRUE(root.ok()) << root.status();
  auto session = std::move(Session::New({})).value();
  ASSERT_TRUE(session->Create(root.ToGraphDef()).ok());
  for (size_t f = 0; f < fixture.files.size(); ++f) {
    const Fixture::File& file = fixture.files[f];
    SCOPED_TRACE(file.path);
    std::string prefix = StrCat("f", f, "/");
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {}, {prefix + "enqueue"}, &out).ok());
    ASSERT_TRUE(session->Run({}, {}, {prefix + "close"}, &out).ok());
    std::vector<std::string> keys, values;
    Status s;
    while ((s = session->Run({}, {prefix + "read:0", prefix + "read:1"}, {}, &out)).ok()) {
      for (int64_t i = 0; i < out[0].NumElements(); ++i) {
        keys.push_back(out[0].data<std::string>()[i]);
        values.push_back(out[1].data<std::string>()[i]);
      }
    }
    EXPECT_EQ(s.code(), Code::kOutOfRange) << s;
    EXPECT_EQ(values, fixture.records);
    std::vector<std::string> expected_keys;
    for (uint64_t offset : file.offsets) expected_keys.push_back(StrCat(file.path, ":", offset));
    EXPECT_EQ(keys, expected_keys);
  }
}

}  // namespace
}  // namespace weir
