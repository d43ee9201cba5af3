// _C.DistributedServer: a weir::Server (src/weir/distributed) for
// weir.distribute.Server, in builds with the distributed runtime (gRPC);
// _C.HAS_DISTRIBUTED says which. The cluster comes as TF_CONFIG JSON text
// (cluster and task), the options as a dict: host, cpu_devices,
// intra_op_threads, tls_cert_file, tls_key_file, tls_ca_file, auth_token,
// max_message_bytes. The GIL is released while the server starts, joins
// and stops.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "common.h"

#ifdef WEIR_WITH_DISTRIBUTED
#include <chrono>
#include <memory>

#include "weir/distributed/bulk_transfer.h"
#include "weir/distributed/server.h"
#include "weir/distributed/worker_client.h"
#endif

namespace weir::python {

#ifdef WEIR_WITH_DISTRIBUTED
namespace {

int64_t OptionInt(nb::handle value, const std::string& key) {
  long long number = 0;
  if (nb::isinstance<nb::bool_>(value) || !nb::try_cast<long long>(value, number)) {
    ThrowInvalidArgument("Server option '" + key + "' must be an int, got " +
                         nb::cast<std::string>(nb::str(value)));
  }
  return number;
}

int OptionCount(nb::handle value, const std::string& key) {
  int64_t number = OptionInt(value, key);
  if (number < INT32_MIN || number > INT32_MAX) {
    ThrowInvalidArgument("Server option '" + key + "' is out of range: " + std::to_string(number));
  }
  return static_cast<int>(number);
}

class PyServer {
 public:
  PyServer(const std::string& tf_config, nb::dict options) {
    ServerOptions server_options;
    for (auto [key, value] : options) {
      std::string k = nb::cast<std::string>(key);
      if (k == "host") {
        server_options.host = nb::cast<std::string>(value);
      } else if (k == "cpu_devices") {
        server_options.num_cpu_devices = OptionCount(value, k);
      } else if (k == "intra_op_threads") {
        server_options.intra_op_threads = OptionCount(value, k);
      } else if (k == "tls_cert_file") {
        server_options.security.tls_cert_file = nb::cast<std::string>(value);
      } else if (k == "tls_key_file") {
        server_options.security.tls_key_file = nb::cast<std::string>(value);
      } else if (k == "tls_ca_file") {
        server_options.security.tls_ca_file = nb::cast<std::string>(value);
      } else if (k == "auth_token") {
        server_options.security.auth_token = nb::cast<std::string>(value);
      } else if (k == "max_message_bytes") {
        server_options.security.max_message_bytes = OptionInt(value, k);
      } else if (k == "session_lease_ms") {
        server_options.session_lease_ms = OptionInt(value, k);
      } else if (k == "bulk_transfer") {
        server_options.bulk_transfer = nb::cast<bool>(value);
      } else if (k == "bulk_transfer_min_bytes") {
        server_options.bulk_transfer_min_bytes = OptionInt(value, k);
      } else if (k == "client_session_lease_ms") {
        server_options.client_session_lease_ms = OptionInt(value, k);
      } else {
        ThrowInvalidArgument("unknown Server option '" + k + "'");
      }
    }
    ClusterConfig config = Check(ParseTfConfig(tf_config));
    server_ = Check(Server::Create(config, server_options));
  }

  void Start() {
    Status status;
    {
      nb::gil_scoped_release release;
      status = server_->Start();
    }
    // A second start is a no-op, as TensorFlow's.
    if (!status.ok() && status.code() != Code::kFailedPrecondition) ThrowStatus(status);
  }
  void Stop() {
    nb::gil_scoped_release release;
    server_->Stop();
  }
  void Join() {
    nb::gil_scoped_release release;
    server_->Join();
  }
  std::string BoundAddress() const { return server_->bound_address(); }
  // The bulk-transfer listener's port; 0 when off (the option, TLS, or not started).
  int BulkTransferPort() const {
    BulkSender* bulk = server_->bulk_sender();
    return bulk != nullptr ? bulk->port() : 0;
  }
  std::vector<std::string> DeviceNames() const {
    std::vector<std::string> names;
    for (const DeviceAttributes& device : server_->device_attributes()) {
      names.push_back(device.name);
    }
    return names;
  }

 private:
  std::unique_ptr<Server> server_;
};

// The device names GetStatus reports from the task at `address` (tests, tools).
std::vector<std::string> GetStatus(const std::string& address, double timeout_seconds,
                                   const std::string& tls_ca_file, const std::string& auth_token) {
  ChannelOptions options;
  options.tls_ca_file = tls_ca_file;
  options.auth_token = auth_token;
  auto client = Check(WorkerClient::Create(address, options));
  StatusOr<std::vector<DeviceAttributes>> devices = errors::Internal("GetStatus did not run");
  {
    nb::gil_scoped_release release;
    devices = client->GetStatus(std::chrono::milliseconds(
        static_cast<int64_t>(std::max(0.0, std::min(timeout_seconds, 1e6)) * 1000)));
  }
  std::vector<std::string> names;
  for (const DeviceAttributes& device : Check(std::move(devices))) names.push_back(device.name);
  return names;
}

}  // namespace
#endif  // WEIR_WITH_DISTRIBUTED

void DefineServer(nb::module_& m) {
#ifdef WEIR_WITH_DISTRIBUTED
  m.attr("HAS_DISTRIBUTED") = true;
  nb::class_<PyServer>(m, "DistributedServer")
      .def(nb::init<const std::string&, nb::dict>(), nb::arg("tf_config"), nb::arg("options"))
      .def("start", &PyServer::Start)
      .def("stop", &PyServer::Stop)
      .def("join", &PyServer::Join)
      .def("bound_address", &PyServer::BoundAddress)
      .def("bulk_transfer_port", &PyServer::BulkTransferPort)
      .def("device_names", &PyServer::DeviceNames);
  m.def("distributed_get_status", &GetStatus, nb::arg("address"), nb::arg("timeout_seconds"),
        nb::arg("tls_ca_file") = "", nb::arg("auth_token") = "");
#else
  m.attr("HAS_DISTRIBUTED") = false;
#endif
}

}  // namespace weir::python
