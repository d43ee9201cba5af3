// Throwaway TLS material for tests, made with the openssl command line at
// test time: a CA, a server certificate it signs (naming localhost,
// 127.0.0.1 and any extra IPs), and an unrelated CA.
#pragma once

#include <string>
#include <vector>

#include "weir/base/status.h"

namespace weir {

struct TestCertificates {
  std::string dir;  // holds every file; the caller removes it
  std::string ca_cert;
  std::string server_cert;
  std::string server_key;
  std::string other_ca_cert;  // signed nothing here: a client trusting it rejects the server
};

// Internal naming the openssl command and its output if openssl fails.
StatusOr<TestCertificates> MakeTestCertificates(const std::vector<std::string>& extra_ips = {});

}  // namespace weir
