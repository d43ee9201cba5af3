// TLS, the auth token and message limits, with in-process servers on
// loopback and certificates made by openssl at test time.
#include "weir/distributed/credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "weir/distributed/server.h"
#include "weir/distributed/tls_test_util.h"
#include "weir/distributed/worker_client.h"

namespace weir {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

class CredentialsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto made = MakeTestCertificates();
    ASSERT_TRUE(made.ok()) << made.status();
    certs_ = new TestCertificates(*made);
  }
  static void TearDownTestSuite() {
    if (certs_ != nullptr) std::filesystem::remove_all(certs_->dir);
    delete certs_;
    certs_ = nullptr;
  }

  // A started server of one task on a free loopback port.
  std::unique_ptr<Server> StartServer(const ServerSecurity& security, int devices = 1) {
    auto config = ClusterConfigFromFlags("worker=localhost:0", "worker", 0);
    EXPECT_TRUE(config.ok());
    ServerOptions options;
    options.num_cpu_devices = devices;
    options.intra_op_threads = 1;
    options.security = security;
    auto server = Server::Create(*config, options);
    EXPECT_TRUE(server.ok()) << server.status();
    if (!server.ok()) return nullptr;
    Status started = (*server)->Start();
    EXPECT_TRUE(started.ok()) << started;
    return std::move(*server);
  }

  ServerSecurity Tls(const std::string& token = "") {
    ServerSecurity security;
    security.tls_cert_file = certs_->server_cert;
    security.tls_key_file = certs_->server_key;
    security.auth_token = token;
    return security;
  }

  // GetStatus from `address` with `options` (a short deadline: every
  // failure here is fast, none may hang).
  Status Call(const std::string& address, const ChannelOptions& options) {
    auto client = WorkerClient::Create(address, options);
    if (!client.ok()) return client.status();
    return (*client)->GetStatus(5s).status();
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::string path = certs_->dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  static TestCertificates* certs_;
};

TestCertificates* CredentialsTest::certs_ = nullptr;

TEST_F(CredentialsTest, TlsClientWithTheCaIsServed) {
  auto server = StartServer(Tls());
  ASSERT_NE(server, nullptr);
  ChannelOptions options;
  options.tls_ca_file = certs_->ca_cert;
  auto client = WorkerClient::Create(server->bound_address(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  auto devices = (*client)->GetStatus(5s);
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ((*devices)[0].name, "/job:worker/replica:0/task:0/device:CPU:0");
  // "localhost" is named by the certificate too.
  std::string port = server->bound_address().substr(server->bound_address().rfind(':'));
  EXPECT_TRUE(Call("localhost" + port, options).ok());
}

TEST_F(CredentialsTest, PlaintextClientOfATlsServerFailsClearly) {
  auto server = StartServer(Tls());
  ASSERT_NE(server, nullptr);
  Status status = Call(server->bound_address(), ChannelOptions());
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("GetStatus to " + server->bound_address()));
  EXPECT_THAT(status.message(), HasSubstr("it serves TLS and this plaintext client needs its CA"))
      << status;
}

TEST_F(CredentialsTest, TlsClientOfAPlaintextServerFailsClearly) {
  auto server = StartServer(ServerSecurity());
  ASSERT_NE(server, nullptr);
  ChannelOptions options;
  options.tls_ca_file = certs_->ca_cert;
  Status status = Call(server->bound_address(), options);
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("TLS handshake failed")) << status;
}

TEST_F(CredentialsTest, ClientThatDoesNotTrustTheCaFails) {
  auto server = StartServer(Tls());
  ASSERT_NE(server, nullptr);
  ChannelOptions options;
  options.tls_ca_file = certs_->other_ca_cert;
  Status status = Call(server->bound_address(), options);
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("TLS handshake failed")) << status;
  EXPECT_THAT(status.message(), HasSubstr(certs_->other_ca_cert));
  // The right CA but a name the certificate does not hold.
  options.tls_ca_file = certs_->ca_cert;
  options.tls_server_name = "not-the-server.example";
  status = Call(server->bound_address(), options);
  EXPECT_EQ(status.code(), Code::kUnavailable) << status;
}

TEST_F(CredentialsTest, TokenIsRequiredAndChecked) {
  auto server = StartServer(Tls("s3cret-token"));
  ASSERT_NE(server, nullptr);
  ChannelOptions options;
  options.tls_ca_file = certs_->ca_cert;
  // gRPC's UNAUTHENTICATED is Weir's (and TF's) Unauthenticated, code 16;
  // the message says what was wrong.
  Status none = Call(server->bound_address(), options);
  EXPECT_EQ(none.code(), Code::kUnauthenticated) << none;
  EXPECT_TRUE(errors::IsUnauthenticated(none)) << none;
  EXPECT_THAT(none.message(), HasSubstr("the call carries no auth token"));
  EXPECT_THAT(none.ToString(), ::testing::StartsWith("Unauthenticated: "));
  options.auth_token = "wrong-token";
  Status wrong = Call(server->bound_address(), options);
  EXPECT_EQ(wrong.code(), Code::kUnauthenticated) << wrong;
  EXPECT_THAT(wrong.message(), HasSubstr("the call's auth token is wrong"));
  options.auth_token = "s3cret-token-and-more";  // a prefix match is not a match
  EXPECT_EQ(Call(server->bound_address(), options).code(), Code::kUnauthenticated);
  options.auth_token = "s3cret-token";
  Status right = Call(server->bound_address(), options);
  EXPECT_TRUE(right.ok()) << right;
}

TEST_F(CredentialsTest, BadOptionsAreInvalidArguments) {
  ServerSecurity security;
  security.tls_cert_file = certs_->server_cert;  // no key
  EXPECT_THAT(security.Validate().message(), HasSubstr("only the certificate was given"));
  security = ServerSecurity();
  security.auth_token = "token";  // no TLS
  EXPECT_THAT(security.Validate().message(), HasSubstr("an auth token needs TLS"));
  security = Tls("has space");
  EXPECT_EQ(security.Validate().code(), Code::kInvalidArgument);
  security = Tls();
  security.max_message_bytes = 0;
  EXPECT_THAT(security.Validate().message(), HasSubstr("max_message_bytes 0"));
  security.max_message_bytes = int64_t{1} << 31;
  EXPECT_EQ(security.Validate().code(), Code::kInvalidArgument);

  // Files are read when the server is created, and named when bad.
  auto config = ClusterConfigFromFlags("worker=localhost:0", "worker", 0);
  ASSERT_TRUE(config.ok());
  ServerOptions options;
  options.security = Tls();
  options.security.tls_key_file = certs_->dir + "/missing.key";
  auto missing = Server::Create(*config, options);
  EXPECT_EQ(missing.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("tls_key_file '" + certs_->dir + "/missing.key"));
  EXPECT_THAT(missing.status().message(), HasSubstr("/job:worker/replica:0/task:0"));
  options.security.tls_key_file = WriteFile("not_pem.key", "hello");
  EXPECT_THAT(Server::Create(*config, options).status().message(), HasSubstr("is not a PEM file"));

  ChannelOptions channel;
  channel.auth_token = "token";
  EXPECT_THAT(WorkerClient::Create("127.0.0.1:1", channel).status().message(),
              HasSubstr("an auth token needs TLS"));
  channel = ChannelOptions();
  channel.tls_ca_file = certs_->dir + "/nothing.pem";
  auto client = WorkerClient::Create("127.0.0.1:1", channel);
  EXPECT_EQ(client.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(client.status().message(), HasSubstr("client of 127.0.0.1:1: tls_ca_file"));
  channel = ChannelOptions();
  channel.tls_server_name = "x";
  EXPECT_EQ(channel.Validate().code(), Code::kInvalidArgument);
  channel = ChannelOptions();
  channel.keepalive = std::chrono::milliseconds(500);
  EXPECT_EQ(channel.Validate().code(), Code::kInvalidArgument);
  EXPECT_THAT(channel.Validate().message(), HasSubstr("keepalive of 500 ms"));
  channel.keepalive = std::chrono::milliseconds(2000);
  EXPECT_TRUE(channel.Validate().ok());
}

TEST_F(CredentialsTest, ReadAuthTokenFile) {
  auto token = ReadAuthTokenFile(WriteFile("token", "  abc-123_XYZ\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "abc-123_XYZ");
  EXPECT_THAT(ReadAuthTokenFile(WriteFile("empty", "\n \n")).status().message(),
              HasSubstr("is empty"));
  EXPECT_EQ(ReadAuthTokenFile(WriteFile("spaced", "two words")).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ReadAuthTokenFile(WriteFile("long", std::string(5000, 'a'))).status().code(),
            Code::kInvalidArgument);
  EXPECT_THAT(ReadAuthTokenFile(certs_->dir + "/none").status().message(),
              HasSubstr("cannot be read"));
}

TEST_F(CredentialsTest, PeerChannelOptionsFollowTheServers) {
  ServerSecurity security = Tls("tok");
  ChannelOptions peer = PeerChannelOptions(security);
  EXPECT_EQ(peer.tls_ca_file, certs_->server_cert);  // the chain, when no CA is given
  EXPECT_EQ(peer.auth_token, "tok");
  security.tls_ca_file = certs_->ca_cert;
  security.max_message_bytes = 1000;
  peer = PeerChannelOptions(security);
  EXPECT_EQ(peer.tls_ca_file, certs_->ca_cert);
  EXPECT_EQ(peer.max_message_bytes, 1000);
  EXPECT_FALSE(PeerChannelOptions(ServerSecurity()).tls());
}

TEST_F(CredentialsTest, OversizeMessagesAreRefusedSayingSo) {
  // GetStatus's response for 4 devices is a few hundred bytes.
  auto server = StartServer(ServerSecurity(), 4);
  ASSERT_NE(server, nullptr);
  ChannelOptions small;
  small.max_message_bytes = 64;
  Status refused = Call(server->bound_address(), small);
  EXPECT_EQ(refused.code(), Code::kResourceExhausted) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("larger than max"));
  EXPECT_THAT(refused.message(), HasSubstr("max_message_bytes is 64"));
  EXPECT_TRUE(Call(server->bound_address(), ChannelOptions()).ok());

  // The server's own limit: it refuses to send the response.
  ServerSecurity limited;
  limited.max_message_bytes = 64;
  auto small_server = StartServer(limited, 4);
  ASSERT_NE(small_server, nullptr);
  Status unsent = Call(small_server->bound_address(), ChannelOptions());
  EXPECT_EQ(unsent.code(), Code::kResourceExhausted) << unsent;
  EXPECT_THAT(unsent.message(), AnyOf(HasSubstr("larger than max"), HasSubstr("too large")));
}

}  // namespace
}  // namespace weir
