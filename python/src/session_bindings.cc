// _C.Session: an in-process weir Session driven from Python.
//
// Feeds come in as numpy arrays and are used without a copy where their
// memory allows (tensor_conversion.cc); fetches go out as numpy arrays over
// weir's buffers. The GIL is released while a step runs, while a session
// closes and while it is destroyed (a step's teardown may drop the last
// reference to a fed array, which takes the GIL on a worker thread).
//
// run(..., want_metadata=True) returns {"chrome_trace": str (Chrome trace
// event JSON), "step_stats": [{"node_name", "op", "device", "thread_id",
// "start_micros", "end_micros", "bytes_allocated", "frame_name",
// "iteration"}]}; the stats are empty unless options asked for a trace
// (trace_level > 0).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>

#include "bindings.h"
#include "common.h"
#include "weir/graph/graph_def_io.h"
#include "weir/runtime/session.h"

namespace weir::python {
namespace {

// A config count as an int, or an InvalidArgumentError naming the key (a
// bare nb::cast<int> of 2**40 is std::bad_cast); Session::New checks ranges.
int ConfigCount(nb::handle value, const std::string& key) {
  if (!nb::isinstance<nb::int_>(value) || nb::isinstance<nb::bool_>(value)) {
    ThrowInvalidArgument("Session config '" + key + "' must be an int, got " +
                         nb::cast<std::string>(nb::str(nb::type_name(value.type()))));
  }
  long long count = 0;
  if (!nb::try_cast<long long>(value, count) || count < INT32_MIN || count > INT32_MAX) {
    ThrowInvalidArgument("Session config '" + key + "' is out of range: " +
                         nb::cast<std::string>(nb::str(value)));
  }
  return static_cast<int>(count);
}

class PySession {
 public:
  PySession(nb::bytes graph_def, nb::dict config) {
    SessionOptions options;
    for (auto [key, value] : config) {
      std::string k = nb::cast<std::string>(key);
      if (k == "devices") {
        options.num_cpu_devices = ConfigCount(value, k);
      } else if (k == "intra_op_threads") {
        options.intra_op_threads = ConfigCount(value, k);
      } else if (k == "inter_op_threads") {
        options.inter_op_threads = ConfigCount(value, k);
      } else if (k == "target") {
        // "grpc://host:port": Session::New finds the factory the module
        // registered (module.cc), or says this build has none (the wheel).
        options.target = nb::cast<std::string>(value);
      } else if (k == "tls_ca_file") {  // the rest: SessionOptions::remote
        options.remote.tls_ca_file = nb::cast<std::string>(value);
      } else if (k == "tls_server_name") {
        options.remote.tls_server_name = nb::cast<std::string>(value);
      } else if (k == "auth_token_file") {
        options.remote.auth_token_file = nb::cast<std::string>(value);
      } else if (k == "max_message_bytes") {
        options.remote.max_message_bytes = ConfigCount(value, k);
      } else if (k == "connect_timeout_ms") {
        options.remote.connect_timeout_ms = ConfigCount(value, k);
      } else {
        ThrowInvalidArgument("Session config has no key '" + k +
                             "' (devices, intra_op_threads, inter_op_threads, target, "
                             "tls_ca_file, tls_server_name, auth_token_file, max_message_bytes, "
                             "connect_timeout_ms)");
      }
    }
    // A grpc:// session may wait for its master (remote.connect_timeout_ms):
    // other Python threads run meanwhile.
    StatusOr<std::unique_ptr<Session>> session = [&] {
      nb::gil_scoped_release release;
      return Session::New(options);
    }();
    session_ = Check(std::move(session));
    if (graph_def.size() > 0) Extend(graph_def);
  }

  ~PySession() {
    if (IsFinalizing()) {
      session_.reset();
      return;
    }
    nb::gil_scoped_release release;
    session_.reset();
  }

  void Extend(nb::bytes graph_def) {
    GraphDef def = Check(ParseGraphDef(std::string_view(graph_def.c_str(), graph_def.size())));
    Status status;
    {
      nb::gil_scoped_release release;
      status = created_ ? session_->Extend(def) : session_->Create(def);
    }
    Check(status);
    created_ = true;
  }

  nb::tuple Run(nb::sequence feeds, const std::vector<std::string>& fetches,
                const std::vector<std::string>& targets, nb::object options, bool want_metadata) {
    std::vector<std::pair<std::string, Tensor>> inputs;
    inputs.reserve(nb::len(feeds));
    for (nb::handle feed : feeds) {
      PyObject* item = feed.ptr();
      const bool is_pair = (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2) ||
                           (PyList_Check(item) && PyList_GET_SIZE(item) == 2);
      if (!is_pair) ThrowInvalidArgument("run: each feed must be a (name, value) pair");
      nb::handle first(PyTuple_Check(item) ? PyTuple_GET_ITEM(item, 0) : PyList_GET_ITEM(item, 0));
      nb::handle second(PyTuple_Check(item) ? PyTuple_GET_ITEM(item, 1) : PyList_GET_ITEM(item, 1));
      std::string name = nb::cast<std::string>(first);
      Tensor value = TensorFromPython(second, name);
      inputs.emplace_back(std::move(name), std::move(value));
    }
    RunOptions run_options = RunOptionsFrom(options);
    RunMetadata metadata;
    std::vector<Tensor> outputs;
    Status status;
    {
      nb::gil_scoped_release release;
      status = session_->Run(inputs, fetches, targets, &outputs, run_options,
                             want_metadata ? &metadata : nullptr);
    }
    Check(status);
    nb::list values;
    for (size_t i = 0; i < outputs.size(); ++i) values.append(TensorToNumpy(outputs[i], fetches[i]));
    return nb::make_tuple(values, want_metadata ? MetadataToPython(metadata) : nb::none());
  }

  int64_t MakeCallable(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                       const std::vector<std::string>& targets) {
    CallableOptions options{feeds, fetches, targets};
    StatusOr<CallableHandle> handle = [&] {
      nb::gil_scoped_release release;
      return session_->MakeCallable(options);
    }();
    int64_t h = Check(std::move(handle));
    callables_[h] = options;
    return h;
  }

  nb::list RunCallable(int64_t handle, nb::sequence feed_values) {
    auto it = callables_.find(handle);
    if (it == callables_.end()) {
      ThrowInvalidArgument("no callable with handle " + std::to_string(handle) +
                           " (released, or from another session)");
    }
    const CallableOptions& options = it->second;
    const size_t n = nb::len(feed_values);
    if (n != options.feeds.size()) {
      ThrowInvalidArgument(StrCat("the callable takes ", options.feeds.size(), " feeds but ", n,
                                  " were given"));
    }
    std::vector<Tensor> inputs;
    inputs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      inputs.push_back(TensorFromPython(feed_values[i], options.feeds[i]));
    }
    std::vector<Tensor> outputs;
    outputs.reserve(options.fetches.size());
    Status status;
    {
      nb::gil_scoped_release release;
      status = session_->RunCallable(handle, inputs, &outputs);
    }
    Check(status);
    nb::list values;
    for (size_t i = 0; i < outputs.size(); ++i) {
      values.append(TensorToNumpy(outputs[i], options.fetches[i]));
    }
    return values;
  }

  void ReleaseCallable(int64_t handle) {
    Check(session_->ReleaseCallable(handle));
    callables_.erase(handle);
  }

  std::vector<std::string> ListDevices() const {
    std::vector<std::string> names;
    for (const DeviceInfo& d : session_->ListDevices()) names.push_back(d.name);
    return names;
  }

  void Close() {
    Status status;
    {
      nb::gil_scoped_release release;
      status = session_->Close();
    }
    Check(status);
  }

 private:
  static RunOptions RunOptionsFrom(nb::handle options) {
    RunOptions run_options;
    if (options.is_none()) return run_options;
    if (!PyDict_Check(options.ptr())) ThrowInvalidArgument("run: options must be a dict or None");
    nb::dict d = nb::borrow<nb::dict>(options);
    for (auto [key, value] : d) {
      std::string k = nb::cast<std::string>(key);
      if (k == "trace_level") {
        run_options.trace = nb::cast<int64_t>(value) > 0;
      } else if (k == "timeout_in_ms") {
        run_options.timeout_ms = nb::cast<int64_t>(value);
        if (run_options.timeout_ms < 0) ThrowInvalidArgument("timeout_in_ms must be >= 0");
      } else {
        ThrowInvalidArgument("run options have no key '" + k + "' (trace_level, timeout_in_ms)");
      }
    }
    return run_options;
  }

  static nb::object MetadataToPython(const RunMetadata& metadata) {
    nb::dict out;
    out["chrome_trace"] = metadata.ChromeTrace();
    nb::list stats;
    for (const NodeExecStats& s : metadata.step_stats.nodes) {
      nb::dict d;
      d["node_name"] = s.node_name;
      d["op"] = s.op;
      d["device"] = s.device;
      d["thread_id"] = s.thread_id;
      d["start_micros"] = s.start_micros;
      d["end_micros"] = s.end_micros;
      d["bytes_allocated"] = s.bytes_allocated;
      d["frame_name"] = s.frame_name;
      d["iteration"] = s.iteration;
      stats.append(d);
    }
    out["step_stats"] = stats;
    return out;
  }

  std::unique_ptr<Session> session_;
  bool created_ = false;
  std::unordered_map<int64_t, CallableOptions> callables_;
};

}  // namespace

void DefineSession(nb::module_& m) {
  nb::class_<PySession>(m, "Session", "An in-process weir Session.")
      .def(nb::init<nb::bytes, nb::dict>(), nb::arg("graph_def") = nb::bytes("", 0),
           nb::arg("config") = nb::dict())
      .def("extend", &PySession::Extend, nb::arg("graph_def"))
      .def("run", &PySession::Run, nb::arg("feeds"), nb::arg("fetches"), nb::arg("targets"),
           nb::arg("options") = nb::none(), nb::arg("want_metadata") = false)
      .def("make_callable", &PySession::MakeCallable, nb::arg("feeds"), nb::arg("fetches"),
           nb::arg("targets"))
      .def("run_callable", &PySession::RunCallable, nb::arg("handle"), nb::arg("feed_values"))
      .def("release_callable", &PySession::ReleaseCallable, nb::arg("handle"))
      .def("list_devices", &PySession::ListDevices)
      .def("close", &PySession::Close);
}

}  // namespace weir::python
