#include "weir/distributed/tls_test_util.h"

#include <stdlib.h>

#include <cstdio>
#include <fstream>

#include "weir/base/str_util.h"

namespace weir {
namespace {

// Runs `command` with a shell; Internal with its output if it fails.
Status Run(const std::string& command) {
  std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return errors::Internal("cannot run: ", command);
  std::string output;
  char buffer[512];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  int status = pclose(pipe);
  if (status != 0) return errors::Internal("failed (", status, "): ", command, "\n", output);
  return Status::OK();
}

Status MakeCa(const std::string& dir, const std::string& name) {
  return Run(StrCat("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes",
                    " -keyout ", dir, "/", name, ".key -out ", dir, "/", name,
                    ".pem -days 2 -subj /CN=", name));
}

}  // namespace

StatusOr<TestCertificates> MakeTestCertificates(const std::vector<std::string>& extra_ips) {
  char pattern[] = "/tmp/weir_tls_test.XXXXXX";
  if (mkdtemp(pattern) == nullptr) return errors::Internal("mkdtemp failed");
  TestCertificates certs;
  certs.dir = pattern;
  const std::string& dir = certs.dir;
  WEIR_RETURN_IF_ERROR(MakeCa(dir, "ca"));
  WEIR_RETURN_IF_ERROR(MakeCa(dir, "other_ca"));
  std::string names = "DNS:localhost,IP:127.0.0.1";
  for (const std::string& ip : extra_ips) names += ",IP:" + ip;
  {
    std::ofstream ext(dir + "/server.ext");
    ext << "subjectAltName=" << names << "\nbasicConstraints=CA:FALSE\n"
        << "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n";
    if (!ext) return errors::Internal("cannot write ", dir, "/server.ext");
  }
  WEIR_RETURN_IF_ERROR(
      Run(StrCat("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ",
                 dir, "/server.key -out ", dir, "/server.csr -subj /CN=localhost")));
  WEIR_RETURN_IF_ERROR(Run(StrCat("openssl x509 -req -in ", dir, "/server.csr -CA ", dir,
                                  "/ca.pem -CAkey ", dir, "/ca.key -CAcreateserial -out ", dir,
                                  "/server.pem -days 2 -extfile ", dir, "/server.ext")));
  certs.ca_cert = dir + "/ca.pem";
  certs.other_ca_cert = dir + "/other_ca.pem";
  certs.server_cert = dir + "/server.pem";
  certs.server_key = dir + "/server.key";
  return certs;
}

}  // namespace weir
