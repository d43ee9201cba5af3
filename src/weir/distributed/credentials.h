// Transport security and limits of the distributed runtime's gRPC channels:
// TLS (a server key and certificate; clients verify the server with a CA),
// a shared token every call must carry, and the largest message a side
// sends or accepts. All optional; the defaults are plaintext, no token and
// kDefaultMaxMessageBytes.
//
// The token is a bearer secret: it is only ever sent over TLS (gRPC itself
// refuses to attach call credentials to a plaintext channel), so a token
// without TLS is an InvalidArgument on both sides rather than a secret sent
// in clear.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "weir/base/status.h"

namespace weir {

constexpr int64_t kMaxMessageBytesLimit = (int64_t{1} << 31) - 1;
// The default is that ceiling, as in TensorFlow's gRPC runtime. A task that
// faces untrusted networks sets a lower limit; a message over it is refused.
// RecvTensor splits values into messages under both sides' limits
// (wire_tensor.h); other messages (a RunGraph's feeds) are not split.
constexpr int64_t kDefaultMaxMessageBytes = kMaxMessageBytesLimit;

// What a server needs to accept calls (ServerOptions::security).
struct ServerSecurity {
  // PEM files of this task's certificate (chain) and private key: both set
  // turns TLS on; exactly one is an error.
  std::string tls_cert_file;
  std::string tls_key_file;
  // PEM bundle of the CA(s) this task trusts when it calls other tasks
  // (PeerChannelOptions); empty with TLS on: the certificate file's chain.
  std::string tls_ca_file;
  // Non-empty: every call must carry this token (needs TLS), else it is
  // refused with "Unauthenticated". Printable ASCII, no spaces.
  std::string auth_token;
  // The largest message the server accepts or sends, in bytes.
  int64_t max_message_bytes = kDefaultMaxMessageBytes;

  bool tls() const { return !tls_cert_file.empty() || !tls_key_file.empty(); }
  // InvalidArgument naming the field at fault (a missing file is caught
  // when the server reads it).
  Status Validate() const;
};

// What a client needs to call a task (WorkerClient, the master's channels).
struct ChannelOptions {
  // PEM bundle of the CA(s) that signed the servers' certificates: non-empty
  // turns TLS on. The server's certificate must name the host the client
  // dials (a DNS or IP subject alternative name) unless tls_server_name
  // says which name to check instead.
  std::string tls_ca_file;
  std::string tls_server_name;
  // Sent with every call when non-empty (needs TLS).
  std::string auth_token;
  // The largest message the client sends or accepts, in bytes.
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
  // 0: none. Otherwise, while calls are in flight, the channel pings the
  // server after this long without a frame and fails the calls with
  // Unavailable when a ping is not answered within this long either (a
  // server whose host was cut off): the bound on calls that may rightly
  // wait long, like an untimed step. At least 2000 ms (servers refuse
  // pings more often than every 1000 ms).
  std::chrono::milliseconds keepalive{0};
  // Non-zero (plaintext channels only): RecvTensor accepts values of at
  // least this many bytes over the sender's bulk-transfer channel
  // (bulk_transfer.h); 0: the gRPC stream only. Servers set it for their
  // peers from ServerOptions::bulk_transfer.
  int64_t bulk_min_bytes = 0;

  bool tls() const { return !tls_ca_file.empty(); }
  Status Validate() const;
};

// The options a task uses to call the other tasks of its cluster: its CA
// (or its own certificate chain), its token and its message limit.
ChannelOptions PeerChannelOptions(const ServerSecurity& security);

// A token from a file (so it never appears on a command line): the file's
// text less surrounding whitespace. InvalidArgument naming the file if it is
// missing, empty, longer than 4096 bytes, or holds anything but printable
// ASCII without spaces.
StatusOr<std::string> ReadAuthTokenFile(const std::string& path);

}  // namespace weir
