// The Weir half of the TensorFlow checkpoint interop check
// (check_checkpoint.py, which drives it; see README.md here).
//
//   weir_write_test_checkpoint PREFIX [--many N]
//       writes a checkpoint of known tensors of every dtype a checkpoint
//       holds, then prints them as JSON (name, dtype, shape, bytes in hex);
//       --many adds N int32 scalars with long names, enough of them (about
//       3000) to spread the index over several blocks
//   weir_write_test_checkpoint --read [--json] PREFIX
//       reads every tensor of the checkpoint at PREFIX and prints one line
//       "name  dtype  shape  sum" each, or with --json the same JSON
//
// Any error exits non-zero with the message on stderr.
#include <Eigen/Core>
#include <complex>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "weir/framework/tensor_bundle.h"

namespace weir {
namespace {

using Json = nlohmann::json;

std::string Hex(const char* data, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

Json Describe(const std::string& name, const Tensor& t) {
  Json j = {{"name", name},
            {"dtype", std::string(DTypeName(t.dtype()))},
            {"shape", std::vector<int64_t>(t.shape().dim_sizes().begin(),
                                           t.shape().dim_sizes().end())}};
  if (t.dtype() == DT_STRING) {
    Json strings = Json::array();
    for (const std::string& s : t.flat<std::string>()) strings.push_back(Hex(s.data(), s.size()));
    j["strings_hex"] = strings;
  } else {
    j["hex"] = Hex(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  }
  return j;
}

// The sum of the elements (total bytes for strings), for a quick look.
std::string Sum(const Tensor& t) {
  if (t.dtype() == DT_STRING) {
    size_t bytes = 0;
    for (const std::string& s : t.flat<std::string>()) bytes += s.size();
    return StrCat(bytes, " bytes");
  }
  std::complex<double> sum = 0;
  auto add = [&]<typename T>(const T* data) {
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        sum += std::complex<double>(data[i].real(), data[i].imag());
      } else if constexpr (std::is_arithmetic_v<T>) {
        sum += static_cast<double>(data[i]);
      } else {  // half, bfloat16
        sum += static_cast<double>(static_cast<float>(data[i]));
      }
    }
  };
  if (t.dtype() == DT_HALF) {
    add(t.data<Eigen::half>());
  } else if (t.dtype() == DT_BFLOAT16) {
    add(t.data<Eigen::bfloat16>());
  } else {
    DispatchNumericDType(t.dtype(), [&]<typename T>() { add(t.data<T>()); });
  }
  std::ostringstream os;
  os.precision(17);
  if (sum.imag() == 0) {
    os << sum.real();
  } else {
    os << "(" << sum.real() << "," << sum.imag() << ")";
  }
  return os.str();
}

std::vector<std::pair<std::string, Tensor>> TestTensors() {
  using H = Eigen::half;
  using B = Eigen::bfloat16;
  std::vector<float> ramp(24);
  for (int i = 0; i < 24; ++i) ramp[i] = 0.25f * static_cast<float>(i) - 3.0f;
  std::vector<int64_t> big(1000);
  for (int i = 0; i < 1000; ++i) big[i] = int64_t{i} * 1000003 - (int64_t{1} << 40);
  return {
      {"dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", Tensor::FromVector(ramp, TensorShape({2, 3, 4}))},
      {"dense/bias", Tensor::FromVector<float>({-0.0f, 1e-38f, 3.4e38f})},
      {"scalar_float", Tensor::Scalar<float>(2.5f)},
      {"empty_float", Tensor(DT_FLOAT, TensorShape({0, 3}))},
      {"double", Tensor::FromVector<double>({3.141592653589793, -1e300, 5e-324})},
      {"int32", Tensor::FromVector<int32_t>({-2147483647 - 1, 0, 2147483647, 7},
                                            TensorShape({2, 2}))},
      {"int64/big", Tensor::FromVector(big, TensorShape({10, 100}))},
      {"global_step", Tensor::Scalar<int64_t>(123456789012345)},
      {"bool", Tensor::FromVector<bool>({true, false, false, true, true})},
      {"uint8", Tensor::FromVector<uint8_t>({0, 1, 127, 128, 255})},
      {"int8", Tensor::FromVector<int8_t>({-128, -1, 0, 127})},
      {"int16", Tensor::FromVector<int16_t>({-32768, 12345})},
      {"uint16", Tensor::FromVector<uint16_t>({65535, 0})},
      {"uint32", Tensor::FromVector<uint32_t>({4294967295u, 1})},
      {"uint64", Tensor::FromVector<uint64_t>({18446744073709551615ull, 2})},
      {"half", Tensor::FromVector<H>({H(1.0f), H(-2.5f), H(65504.0f), H(6e-8f)})},
      {"bfloat16", Tensor::FromVector<B>({B(1.0f), B(-3.0e38f), B(0.1f)})},
      {"complex64", Tensor::FromVector<complex64>({{1.5f, -2.0f}, {0.0f, 3.0f}})},
      {"complex128", Tensor::Scalar<complex128>({1e100, -1e-100})},
      {"string/vector", Tensor::FromVector<std::string>(
                            {"hello", "", std::string("\0\xff\x80 binary", 10),
                             std::string(200, 'L')})},
      {"string/matrix", Tensor::FromVector<std::string>({"a", "bb", "ccc", "dddd"},
                                                        TensorShape({2, 2}))},
      {"string/scalar", Tensor::Scalar<std::string>("weir")},
      {"string/empty", Tensor(DT_STRING, TensorShape({0}))},
  };
}

Status Write(const std::string& prefix, int many) {
  BundleWriter writer(prefix);
  Json out = Json::array();
  std::vector<std::pair<std::string, Tensor>> tensors = TestTensors();
  for (int i = 0; i < many; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "many/%06d/", i);
    tensors.emplace_back(name + std::string(80, 'x'), Tensor::Scalar<int32_t>(i));
  }
  for (const auto& [name, tensor] : tensors) {
    WEIR_RETURN_IF_ERROR(writer.Add(name, tensor));
    out.push_back(Describe(name, tensor));
  }
  WEIR_RETURN_IF_ERROR(writer.Finish());
  std::cout << out.dump(1) << "\n";
  return Status::OK();
}

Status Read(const std::string& prefix, bool json) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  Json out = Json::array();
  for (const BundleTensorInfo& info : reader->ListTensors()) {
    WEIR_ASSIGN_OR_RETURN(Tensor tensor, reader->Lookup(info.name));
    if (json) {
      out.push_back(Describe(info.name, tensor));
    } else {
      std::cout << info.name << "\t" << tensor.dtype() << "\t" << tensor.shape() << "\t"
                << Sum(tensor) << "\n";
    }
  }
  if (json) std::cout << out.dump(1) << "\n";
  return Status::OK();
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  weir::Status status;
  int64_t many = 0;
  if (args.size() == 1 && args[0][0] != '-') {
    status = weir::Write(args[0], 0);
  } else if (args.size() == 3 && args[0][0] != '-' && args[1] == "--many" &&
             weir::ParseInt64(args[2], &many) && many >= 0 && many <= 1000000) {
    status = weir::Write(args[0], static_cast<int>(many));
  } else if (args.size() == 2 && args[0] == "--read") {
    status = weir::Read(args[1], /*json=*/false);
  } else if (args.size() == 3 && args[0] == "--read" && args[1] == "--json") {
    status = weir::Read(args[2], /*json=*/true);
  } else {
    std::fprintf(stderr, "usage: %s PREFIX [--many N] | --read [--json] PREFIX\n", argv[0]);
    return 2;
  }
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}
