#include "weir/distributed/credentials.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/auth_metadata_processor.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include "weir/base/file_system.h"
#include "weir/base/sanitizers.h"
#include "weir/base/str_util.h"
#include "weir/distributed/grpc_credentials.h"
#include "weir/distributed/grpc_util.h"

namespace weir {
namespace {

// gRPC reads sockets into 64 KiB buffers from malloc and frees them once a
// message has been consumed: a 4 MiB RecvTensor message is 64 of them, all
// freed together. glibc gives the free top of a heap back to the kernel once
// it exceeds M_TRIM_THRESHOLD (128 KiB until the program frees a large
// mmap'd block, which the tensor allocator's cache of large blocks seldom
// does), so every message landed in fresh pages that the kernel faulted in
// and zeroed: a fifth to a third of the process's cycles when receiving
// 16-256 MiB tensors (docs/performance.md, "RecvTensor throughput"). Fixed
// here at the values that glibc's own adaptation reaches at most (its
// largest mmap threshold, 32 MiB, and twice that for trimming), once per
// process, when the first channel or server is made. A program that sets
// glibc's malloc tunables itself (GLIBC_TUNABLES=glibc.malloc....) keeps them.
void KeepFreedReadBuffers() {
#if defined(__GLIBC__) && !defined(WEIR_ADDRESS_SANITIZER)
  static std::once_flag once;
  std::call_once(once, [] {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
  });
#endif
}

constexpr size_t kMaxTokenBytes = 4096;
// Servers accept keepalive pings this often; clients ping at most half as
// often, so timing jitter never makes a ping look abusive.
constexpr std::chrono::milliseconds kMinServerPingInterval{1000};
constexpr std::chrono::milliseconds kMinClientKeepalive{2000};
constexpr char kAuthorization[] = "authorization";  // the header gRPC's token credentials set

Status ValidateToken(std::string_view token, std::string_view where) {
  if (token.size() > kMaxTokenBytes) {
    return errors::InvalidArgument(where, ": the auth token is ", token.size(), " bytes; at most ",
                                   kMaxTokenBytes);
  }
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return errors::InvalidArgument(where,
                                     ": the auth token must be printable ASCII without spaces");
    }
  }
  return Status::OK();
}

Status ValidateLimit(int64_t bytes, std::string_view where) {
  if (bytes < 1 || bytes > kMaxMessageBytesLimit) {
    return errors::InvalidArgument(where, ": max_message_bytes ", bytes, " is not in 1..",
                                   kMaxMessageBytesLimit);
  }
  return Status::OK();
}

std::string_view StripWhitespace(std::string_view text) {
  const char* space = " \t\r\n\f\v";
  size_t begin = text.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(space) - begin + 1);
}

// A PEM file's text; `what` names the option ("tls_cert_file").
StatusOr<std::string> ReadPem(const std::string& path, std::string_view what) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return errors::InvalidArgument(what, " '", path, "' cannot be read: ", text.status().message());
  }
  if (text->find("-----BEGIN ") == std::string::npos) {
    return errors::InvalidArgument(what, " '", path, "' is not a PEM file");
  }
  return text;
}

// Compares in time independent of where the first difference is, so the
// time of a refusal does not reveal how much of a guess was right.
bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// The server side of the token: every call's metadata must carry
// "authorization: Bearer <token>". gRPC runs it before the handler, so a
// refused call never reaches a service.
class TokenChecker final : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenChecker(const std::string& token) : expected_("Bearer " + token) {}

  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext*,
                       OutputMetadata* consumed, OutputMetadata*) override {
    auto found = auth_metadata.find(kAuthorization);
    if (found == auth_metadata.end()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "the call carries no auth token and this server "
                          "requires one (the client's auth_token)");
    }
    std::string_view given(found->second.data(), found->second.size());
    if (!ConstantTimeEqual(given, expected_)) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the call's auth token is wrong");
    }
    consumed->emplace(kAuthorization, std::string(given));  // handlers never see it
    return grpc::Status::OK;
  }

 private:
  std::string expected_;
};

}  // namespace

Status ServerSecurity::Validate() const {
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return errors::InvalidArgument(
        "TLS needs both a certificate (tls_cert_file) and its key "
        "(tls_key_file); only the ",
        tls_cert_file.empty() ? "key" : "certificate", " was given");
  }
  if (!tls_ca_file.empty() && !tls()) {
    return errors::InvalidArgument("tls_ca_file '", tls_ca_file,
                                   "' was given without the server's tls_cert_file/tls_key_file");
  }
  if (!auth_token.empty()) {
    if (!tls()) {
      return errors::InvalidArgument(
          "an auth token needs TLS (tls_cert_file/tls_key_file): a token over plaintext is "
          "readable by anyone on the path");
    }
    WEIR_RETURN_IF_ERROR(ValidateToken(auth_token, "server"));
  }
  return ValidateLimit(max_message_bytes, "server");
}

Status ChannelOptions::Validate() const {
  if (!tls_server_name.empty() && !tls()) {
    return errors::InvalidArgument("tls_server_name '", tls_server_name,
                                   "' was given without a CA (tls_ca_file)");
  }
  if (!auth_token.empty()) {
    if (!tls()) {
      return errors::InvalidArgument(
          "an auth token needs TLS (a CA in tls_ca_file): a token over plaintext is readable "
          "by anyone on the path");
    }
    WEIR_RETURN_IF_ERROR(ValidateToken(auth_token, "client"));
  }
  if (keepalive.count() != 0 && keepalive < kMinClientKeepalive) {
    return errors::InvalidArgument("client keepalive of ", keepalive.count(),
                                   " ms: 0 (none) or at least ", kMinClientKeepalive.count(),
                                   " ms (servers refuse pings more often than every ",
                                   kMinServerPingInterval.count(), " ms)");
  }
  return ValidateLimit(max_message_bytes, "client");
}

ChannelOptions PeerChannelOptions(const ServerSecurity& security) {
  ChannelOptions options;
  if (security.tls()) {
    options.tls_ca_file =
        security.tls_ca_file.empty() ? security.tls_cert_file : security.tls_ca_file;
  }
  options.auth_token = security.auth_token;
  options.max_message_bytes = security.max_message_bytes;
  return options;
}

StatusOr<std::string> ReadAuthTokenFile(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return errors::InvalidArgument("auth token file '", path,
                                   "' cannot be read: ", text.status().message());
  }
  std::string_view token = StripWhitespace(*text);
  if (token.empty()) return errors::InvalidArgument("auth token file '", path, "' is empty");
  WEIR_RETURN_IF_ERROR(ValidateToken(token, StrCat("auth token file '", path, "'")));
  return std::string(token);
}

StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurity& security) {
  WEIR_RETURN_IF_ERROR(security.Validate());
  if (!security.tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  WEIR_ASSIGN_OR_RETURN(pair.private_key, ReadPem(security.tls_key_file, "tls_key_file"));
  WEIR_ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(security.tls_cert_file, "tls_cert_file"));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::SslServerCredentials(ssl);
  if (!security.auth_token.empty()) {
    credentials->SetAuthMetadataProcessor(std::make_shared<TokenChecker>(security.auth_token));
  }
  return credentials;
}

void ApplyServerLimits(const ServerSecurity& security, grpc::ServerBuilder* builder) {
  KeepFreedReadBuffers();
  builder->SetMaxReceiveMessageSize(static_cast<int>(security.max_message_bytes));
  builder->SetMaxSendMessageSize(static_cast<int>(security.max_message_bytes));
  // Clients' keepalive pings during long calls (ChannelOptions::keepalive):
  // gRPC's default (5 min) would answer them with GOAWAY, ending the calls.
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                              static_cast<int>(kMinServerPingInterval.count()));
}

StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                     const ChannelOptions& options) {
  WEIR_RETURN_IF_ERROR(options.Validate());
  KeepFreedReadBuffers();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(options.max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(options.max_message_bytes));
  if (options.keepalive.count() > 0) {
    const int keepalive = static_cast<int>(
        std::min<int64_t>(options.keepalive.count(), std::numeric_limits<int>::max()));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive);
    // Keep pinging while a call waits without data (the default stops
    // after two pings), as often as the keepalive time.
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, keepalive);
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (!options.tls()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    WEIR_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPem(options.tls_ca_file, "tls_ca_file"));
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) args.SetSslTargetNameOverride(options.tls_server_name);
    if (!options.auth_token.empty()) {
      credentials = grpc::CompositeChannelCredentials(
          credentials, grpc::AccessTokenCredentials(options.auth_token));
    }
  }
  return grpc::CreateCustomChannel(address, credentials, args);
}

Status FromGrpcCallStatus(const grpc::Status& status, std::string_view what,
                          const ChannelOptions& options) {
  Status out = FromGrpcStatus(status, what);
  if (out.ok()) return out;
  const std::string& message = status.error_message();
  if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
      message.find("larger than max") != std::string::npos) {
    return Status(out.code(), StrCat(out.message(),
                                     " (a message over the limit: this client's "
                                     "max_message_bytes is ",
                                     options.max_message_bytes, "; the server has its own)"));
  }
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    if (!options.tls() && message.find("Socket closed") != std::string::npos) {
      return Status(out.code(), StrCat(out.message(),
                                       " (the server closed the connection: it stopped, or "
                                       "it serves TLS and this plaintext client needs its CA, "
                                       "tls_ca_file)"));
    }
    if (options.tls() && message.find("andshake") != std::string::npos) {
      return Status(out.code(),
                    StrCat(out.message(),
                           " (TLS handshake failed: the server serves plaintext, "
                           "or its certificate is not signed by the CA in '",
                           options.tls_ca_file, "' or does not name the address dialled)"));
    }
  }
  return out;
}

}  // namespace weir
