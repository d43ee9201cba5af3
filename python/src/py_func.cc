// PyFunc, PyFuncStateless and EagerPyFunc (TF's declarations): a node that
// calls a Python function (wr.py_func / wr.numpy_function). They live in the
// extension, not in src/weir/ops, because only a process running Python can
// compute them; graphs holding them run in this process only.
//
// The kernel takes the GIL (a step runs with it released: session_bindings.cc)
// and calls the dispatcher that weir.ops.script_ops installs with
// _C.set_py_func_dispatcher: dispatcher(token: bytes, args: list of ndarrays)
// returns (0, [values]) or (error code, message) for an exception the
// function raised. Each value becomes output i of Tout[i]'s dtype exactly (a
// value of another dtype is an InvalidArgument, as TF's "i-th value returned
// by pyfunc is double, but expects float"); the number of values must be
// len(Tout). No gradient (TF1's py_func has none).
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "common.h"
#include "weir/base/str_util.h"
#include "weir/framework/kernel_registry.h"
#include "weir/framework/op_def.h"
#include "weir/framework/op_kernel.h"
#include "weir/ops/gradients/gradient_registry.h"

namespace weir::python {
namespace {

// The dispatcher (a strong reference), released by set_py_func_dispatcher(None)
// at exit, before the interpreter tears down.
PyObject* dispatcher = nullptr;

class PyFuncOp final : public OpKernel {
 public:
  explicit PyFuncOp(OpKernelConstruction* context) : OpKernel(context) {
    context->SetStatus(context->GetAttr("token", &token_));
    context->SetStatus(context->GetAttr("Tout", &output_types_));
  }

  void Compute(OpKernelContext* context) override {
    OP_REQUIRES(context, !IsFinalizing(),
                errors::Cancelled("PyFunc: the Python interpreter is exiting"));
    nb::gil_scoped_acquire gil;
    OP_REQUIRES(
        context, dispatcher != nullptr,
        errors::FailedPrecondition("PyFunc: no Python function dispatcher (import weir first, "
                                   "and run no step after the interpreter's exit)"));
    try {
      nb::list args;
      for (int i = 0; i < context->num_inputs(); ++i) {
        // A copy: the function may keep or change its arrays.
        nb::object array = TensorToNumpy(context->input(i), "input " + std::to_string(i));
        args.append(array.attr("copy")());
      }
      nb::object result = nb::borrow(dispatcher)(nb::bytes(token_.data(), token_.size()), args);
      nb::tuple pair = nb::cast<nb::tuple>(result);
      int code = nb::cast<int>(pair[0]);
      if (code < 0 || code > static_cast<int>(kLastCode)) {
        code = static_cast<int>(Code::kUnknown);
      }
      if (code != 0) {
        // The executor's error names the node; the message is the function's error.
        context->SetStatus(Status(static_cast<Code>(code), nb::cast<std::string>(pair[1])));
        return;
      }
      nb::list values = nb::cast<nb::list>(pair[1]);
      const int expected = static_cast<int>(output_types_.size());
      OP_REQUIRES(context, static_cast<int>(values.size()) == expected,
                  errors::InvalidArgument("the Python function (", token_, ") returned ",
                                          values.size(), " values, but Tout has ", expected));
      for (int i = 0; i < expected; ++i) {
        std::string what = StrCat(i, "-th value returned by ", token_);
        // An object array (a dict, a list of mixed things) is text only for
        // a string output; say what it is for the others.
        nb::object kind = nb::getattr(nb::getattr(values[i], "dtype"), "kind");
        OP_REQUIRES(context, output_types_[i] == DT_STRING || nb::cast<std::string>(kind) != "O",
                    errors::InvalidArgument(what, ": expects ", DTypeName(output_types_[i]),
                                            " but the value is an array of Python objects"));
        context->set_output(i, TensorFromPython(values[i], what, output_types_[i],
                                                /*allow_borrow=*/false));
      }
    } catch (nb::python_error& e) {
      // A conversion in here failed (ThrowStatus raised the status's class):
      // its message, without the class name the Python error's text leads with.
      context->SetStatus(errors::InvalidArgument(nb::cast<std::string>(nb::str(e.value()))));
    } catch (const std::exception& e) {
      context->SetStatus(errors::Internal("PyFunc: ", e.what()));
    }
  }

 private:
  std::string token_;
  std::vector<DType> output_types_;
};

OpDefBuilder PyFuncDeclaration(const char* name) {
  return std::move(
      OpDefBuilder(name).Input("input: Tin").Output("output: Tout").Attr("token: string"));
}

void RegisterPyFuncOps() {
  OpRegistry* ops = OpRegistry::Global();
  ops->Register(PyFuncDeclaration("PyFunc")
                    .Attr("Tin: list(type) >= 0")
                    .Attr("Tout: list(type) >= 0")
                    .SetIsStateful()
                    .Doc("Calls the Python function registered under `token` on the inputs "
                         "as numpy arrays (wr.py_func)."));
  ops->Register(PyFuncDeclaration("PyFuncStateless")
                    .Attr("Tin: list(type) >= 0")
                    .Attr("Tout: list(type) >= 0")
                    .Doc("PyFunc of a function without side effects (wr.py_func with "
                         "stateful=False)."));
  ops->Register(PyFuncDeclaration("EagerPyFunc")
                    .Attr("is_async: bool = false")
                    .Attr("Tin: list(type) >= 0")
                    .Attr("Tout: list(type) >= 0")
                    .SetIsStateful()
                    .Doc("TF's eager_py_func node; in weir's graph mode, a PyFunc."));
  for (const char* op : {"PyFunc", "PyFuncStateless", "EagerPyFunc"}) {
    KernelRegistry::Global()->Register(KernelBuilder(op), MakeKernel<PyFuncOp>);
    GradientRegistry::Global()->RegisterNoGradient(op);
  }
}

}  // namespace

void DefinePyFunc(nb::module_& m) {
  RegisterPyFuncOps();
  m.def(
      "set_py_func_dispatcher",
      [](nb::object fn) {
        if (!fn.is_none() && !PyCallable_Check(fn.ptr())) {
          ThrowInvalidArgument("the dispatcher must be callable or None");
        }
        PyObject* old = dispatcher;
        dispatcher = fn.is_none() ? nullptr : fn.release().ptr();
        Py_XDECREF(old);
      },
      nb::arg("fn").none(),
      "Installs dispatcher(token, args) -> (code, values or message) for PyFunc kernels "
      "(None removes it; weir.ops.script_ops does so at exit).");
}

}  // namespace weir::python
