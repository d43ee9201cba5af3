#include "weir/framework/npy.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "weir/base/file_system.h"

namespace weir {
namespace {

namespace fs = std::filesystem;

constexpr char kInstallHint[] =
    "this test checks .npy files against real NumPy and needs python3 with numpy; "
    "run scripts/install_deps.sh";

// One array written by NumPy from `expression` and by Weir from `expected`.
struct Case {
  std::string name;
  std::string expression;  // Python, with numpy as np
  Tensor expected;
};

template <typename T>
Tensor Vec(std::vector<T> values, TensorShape shape) {
  return Tensor::FromVector(values, shape);
}

std::vector<Case> Cases() {
  using H = Eigen::half;
  return {
      {"f4", "np.arange(6, dtype=np.float32).reshape(2, 3) * 1.5 - 2",
       Vec<float>({-2, -0.5, 1, 2.5, 4, 5.5}, {2, 3})},
      {"f8_rank0", "np.array(3.25)", Tensor::Scalar<double>(3.25)},
      {"f2", "np.array([1, -2, 0.5, 65504], dtype=np.float16)",
       Vec<H>({H(1), H(-2), H(0.5f), H(65504)}, {4})},
      {"i1", "np.array([-128, 0, 127], dtype=np.int8)", Vec<int8_t>({-128, 0, 127}, {3})},
      {"i2", "np.array([[-32768], [32767]], dtype=np.int16)",
       Vec<int16_t>({-32768, 32767}, {2, 1})},
      {"i4", "np.array([-2147483648, 5], dtype=np.int32)",
       Vec<int32_t>({INT32_MIN, 5}, {2})},
      {"i8", "np.array([-9223372036854775808, 9223372036854775807], dtype=np.int64)",
       Vec<int64_t>({INT64_MIN, INT64_MAX}, {2})},
      {"u1", "np.array([0, 255], dtype=np.uint8)", Vec<uint8_t>({0, 255}, {2})},
      {"u2", "np.array([65535, 1], dtype=np.uint16)", Vec<uint16_t>({65535, 1}, {2})},
      {"u4", "np.array([4294967295, 2], dtype=np.uint32)",
       Vec<uint32_t>({4294967295u, 2}, {2})},
      {"u8", "np.array([18446744073709551615, 3], dtype=np.uint64)",
       Vec<uint64_t>({UINT64_MAX, 3}, {2})},
      {"b1", "np.array([True, False, True])", Vec<bool>({true, false, true}, {3})},
      {"b1_rank0", "np.array(True)", Tensor::Scalar<bool>(true)},
      {"c8", "np.array([1+2j, 0-3.5j], dtype=np.complex64)",
       Vec<complex64>({{1, 2}, {0, -3.5f}}, {2})},
      {"c16", "np.array([[1+2j], [3-4j]], dtype=np.complex128)",
       Vec<complex128>({{1, 2}, {3, -4}}, {2, 1})},
      {"empty_f4", "np.zeros((0, 3), dtype=np.float32)", Vec<float>({}, {0, 3})},
      {"empty_i8", "np.zeros((0,), dtype=np.int64)", Vec<int64_t>({}, {0})},
      {"rank5", "np.arange(32, dtype=np.int32).reshape(2, 2, 2, 2, 2)",
       [] {
         std::vector<int32_t> v(32);
         for (int i = 0; i < 32; ++i) v[i] = i;
         return Vec<int32_t>(v, {2, 2, 2, 2, 2});
       }()},
  };
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir_npy_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // Runs `script` with python3, numpy imported as np and the test directory
  // as `d`; returns its exit status and adds its output to the failure.
  int RunPython(const std::string& script) {
    std::string file = Path("script.py");
    std::ofstream(file) << "import sys\nimport numpy as np\nd = sys.argv[1]\n" << script;
    std::string command = StrCat("python3 ", file, " ", dir_, " 2>&1");
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return -1;
    std::string output;
    char buffer[4096];
    while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
    int status = ::pclose(pipe);
    if (status != 0) ADD_FAILURE() << "python3 failed (" << status << "):\n" << output;
    return status;
  }

  // Fails the test, with how to fix it, when NumPy is missing.
  void RequireNumpy() {
    int status = std::system("python3 -c 'import numpy' >/dev/null 2>&1");
    ASSERT_EQ(status, 0) << kInstallHint;
  }

  std::string dir_;
};

TEST_F(NpyTest, ReadsWhatNumpyWrites) {
  ASSERT_NO_FATAL_FAILURE(RequireNumpy());
  std::string script;
  for (const Case& c : Cases()) {
    script += StrCat("np.save(d + '/", c.name, ".npy', ", c.expression, ")\n");
  }
  ASSERT_EQ(RunPython(script), 0);
  for (const Case& c : Cases()) {
    StatusOr<Tensor> t = ReadNpy(Path(c.name + ".npy"));
    ASSERT_TRUE(t.ok()) << c.name << ": " << t.status();
    EXPECT_TRUE(t->ContentEquals(c.expected))
        << c.name << ": " << t->DebugString() << " vs " << c.expected.DebugString();
  }
}

TEST_F(NpyTest, ReadsFormatVersions2And3) {
  ASSERT_NO_FATAL_FAILURE(RequireNumpy());
  ASSERT_EQ(RunPython(R"py(
import numpy.lib.format as fmt
a = np.arange(6, dtype=np.float32).reshape(2, 3) * 1.5 - 2
for version in [(1, 0), (2, 0), (3, 0)]:
    with open(d + '/v%d.npy' % version[0], 'wb') as f:
        fmt.write_array(f, a, version=version)
)py"),
            0);
  Tensor expected = Cases()[0].expected;
  for (int version : {1, 2, 3}) {
    std::string path = Path(StrCat("v", version, ".npy"));
    EXPECT_EQ(static_cast<int>((*ReadFileToString(path))[6]), version);
    StatusOr<Tensor> t = ReadNpy(path);
    ASSERT_TRUE(t.ok()) << version << ": " << t.status();
    EXPECT_TRUE(t->ContentEquals(expected)) << t->DebugString();
  }
}

TEST_F(NpyTest, NumpyReadsWhatWeirWrites) {
  ASSERT_NO_FATAL_FAILURE(RequireNumpy());
  std::string script = "failures = []\n";
  for (const Case& c : Cases()) {
    ASSERT_TRUE(WriteNpy(Path("weir_" + c.name + ".npy"), c.expected).ok()) << c.name;
    script += StrCat("a = np.load(d + '/weir_", c.name, ".npy')\n", "e = ", c.expression,
                     "\n",
                     "if a.dtype != e.dtype or a.shape != e.shape or "
                     "not np.array_equal(a, e) or not a.flags.c_contiguous:\n",
                     "    failures.append('", c.name, ": %r %r vs %r' % (a.dtype, a, e))\n");
  }
  script += "assert not failures, '\\n'.join(failures)\n";
  EXPECT_EQ(RunPython(script), 0);
}

TEST(NpyFormatTest, SerializesLikeNumpy) {
  StatusOr<std::string> bytes = SerializeNpy(Tensor::FromVector<float>({1, 2, 3}));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // Magic, version 1.0, header length 118 (0x76) little-endian, then the dict
  // padded so the data starts at byte 128.
  EXPECT_EQ(bytes->substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_EQ(bytes->substr(10, dict.size()), dict);
  EXPECT_EQ((*bytes)[127], '\n');
  EXPECT_EQ(bytes->size(), 128u + 12u);

  bytes = SerializeNpy(Tensor::Scalar<int8_t>(-1));
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("'descr': '|i1'"), std::string::npos);
  EXPECT_NE(bytes->find("'shape': ()"), std::string::npos);
  EXPECT_EQ(bytes->size() % 64, 1u);

  bytes = SerializeNpy(Tensor(DT_BOOL, TensorShape({2, 0, 3})));
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(bytes->find("'shape': (2, 0, 3)"), std::string::npos);
  EXPECT_EQ(bytes->size(), 128u);
}

TEST(NpyFormatTest, RoundTripsEverySupportedDType) {
  for (const Case& c : Cases()) {
    StatusOr<std::string> bytes = SerializeNpy(c.expected);
    ASSERT_TRUE(bytes.ok()) << c.name << ": " << bytes.status();
    StatusOr<Tensor> back = ParseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << c.name << ": " << back.status();
    EXPECT_TRUE(back->ContentEquals(c.expected)) << c.name;
  }
}

TEST(NpyFormatTest, UnsupportedDTypesAreUnimplemented) {
  for (const Tensor& t : {Tensor(DT_BFLOAT16, TensorShape({2})),
                          Tensor::FromVector<std::string>({"a"}),
                          Tensor(DT_RESOURCE, TensorShape())}) {
    StatusOr<std::string> bytes = SerializeNpy(t);
    EXPECT_TRUE(errors::IsUnimplemented(bytes.status())) << bytes.status();
  }
  Status s = WriteNpy("/nonexistent/x.npy", Tensor::FromVector<std::string>({"a"}));
  EXPECT_TRUE(errors::IsUnimplemented(s)) << s;
  EXPECT_NE(s.message().find("/nonexistent/x.npy"), std::string::npos) << s;
}

// A .npy file with the given header dict and data, laid out by hand.
std::string MakeNpy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict + "\n";
  std::string bytes = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const int width = major == 1 ? 2 : 4;
  for (int i = 0; i < width; ++i) {
    bytes.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  }
  return bytes + header + data;
}

std::string Int32Bytes(std::vector<int32_t> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
}

void ExpectError(std::string_view bytes, Code code, const std::string& fragment) {
  StatusOr<Tensor> t = ParseNpy(bytes);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), code) << t.status();
  EXPECT_NE(t.status().message().find(fragment), std::string::npos)
      << "'" << fragment << "' not in: " << t.status().message();
}

TEST(NpyFormatTest, AcceptsHandWrittenHeaders) {
  const std::string data = Int32Bytes({1, 2, 3});
  Tensor expected = Tensor::FromVector<int32_t>({1, 2, 3});
  for (const std::string& dict :
       {std::string("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"),
        std::string("{\"shape\": (3L,), \"descr\": \"=i4\", \"fortran_order\": False}"),
        std::string("{ 'descr' : 'i4' , 'fortran_order' : True , 'shape' : ( 3 , ) }   ")}) {
    StatusOr<Tensor> t = ParseNpy(MakeNpy(dict, data));
    ASSERT_TRUE(t.ok()) << dict << ": " << t.status();
    EXPECT_TRUE(t->ContentEquals(expected)) << dict;
  }
  StatusOr<Tensor> t =
      ParseNpy(MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,)}", data, 3));
  ASSERT_TRUE(t.ok()) << t.status();

  t = ParseNpy(MakeNpy("{'descr': '>u1', 'fortran_order': False, 'shape': (2,)}", "\x05\x06"));
  ASSERT_TRUE(t.ok()) << t.status();  // one-byte types have no byte order
  EXPECT_TRUE(t->ContentEquals(Tensor::FromVector<uint8_t>({5, 6})));

  t = ParseNpy(MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}",
                       std::string("\x00\x02", 2)));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->ContentEquals(Tensor::FromVector<bool>({false, true})));
}

TEST(NpyFormatTest, RejectsBadFiles) {
  const std::string ok_dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  const std::string data = Int32Bytes({1, 2, 3});

  ExpectError("PK\x03\x04 not npy", Code::kInvalidArgument, "not a .npy file");
  ExpectError("", Code::kInvalidArgument, "not a .npy file");
  ExpectError(std::string("\x93NUMPY\x01\x00\x10", 9), Code::kDataLoss, "truncated");
  ExpectError(MakeNpy(ok_dict, data).substr(0, 30), Code::kDataLoss, "truncated");
  ExpectError(MakeNpy(ok_dict, data.substr(0, 10)), Code::kDataLoss,
              "needs 3 elements of 4 bytes, the file has 10");
  ExpectError(MakeNpy(ok_dict, data + "xx"), Code::kDataLoss, "2 unexpected bytes");
  ExpectError(MakeNpy(ok_dict, data, 4), Code::kUnimplemented, "version 4.0");

  ExpectError(MakeNpy("{'descr': '<i4', 'shape': (3,)}", data), Code::kInvalidArgument,
              "'fortran_order'");
  ExpectError(MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'x': 1}", data),
              Code::kInvalidArgument, "unexpected key 'x'");
  ExpectError(MakeNpy("{'descr': '<i4', 'fortran_order': Fals, 'shape': (3,)}", data),
              Code::kInvalidArgument, "True or False");
  ExpectError(MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,a)}", data),
              Code::kInvalidArgument, "malformed .npy header");
  ExpectError(MakeNpy("{'descr': '<i4, 'fortran_order': False, 'shape': (3,)}", data),
              Code::kInvalidArgument, "malformed .npy header");
  ExpectError(MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,)} x", data),
              Code::kInvalidArgument, "after the dict");
  ExpectError(MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (-3,)}", data),
              Code::kInvalidArgument, "negative");

  ExpectError(MakeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (3, 1)}", data),
              Code::kUnimplemented, "Fortran order");
  ExpectError(MakeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (3,)}", data),
              Code::kUnimplemented, "big-endian");
  ExpectError(MakeNpy("{'descr': '<U1', 'fortran_order': False, 'shape': (3,)}", data),
              Code::kUnimplemented, "'<U1'");
  ExpectError(MakeNpy("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (3,)}", data),
              Code::kUnimplemented, "structured");
}

TEST_F(NpyTest, FileErrorsNameThePath) {
  StatusOr<Tensor> t = ReadNpy(Path("missing.npy"));
  EXPECT_TRUE(errors::IsNotFound(t.status())) << t.status();
  EXPECT_NE(t.status().message().find(Path("missing.npy")), std::string::npos);

  ASSERT_TRUE(WriteStringToFileAtomic(Path("cut.npy"),
                                      (*SerializeNpy(Cases()[0].expected)).substr(0, 140))
                  .ok());
  t = ReadNpy(Path("cut.npy"));
  EXPECT_TRUE(errors::IsDataLoss(t.status())) << t.status();
  EXPECT_NE(t.status().message().find(Path("cut.npy")), std::string::npos) << t.status();

  // Writes go through a temporary file that must not stay behind.
  ASSERT_TRUE(WriteNpy(Path("ok.npy"), Cases()[0].expected).ok());
  ASSERT_TRUE(WriteNpy(Path("ok.npy"), Cases()[1].expected).ok());
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"cut.npy", "ok.npy"}));
  EXPECT_TRUE(ReadNpy(Path("ok.npy"))->ContentEquals(Cases()[1].expected));
}

}  // namespace
}  // namespace weir
