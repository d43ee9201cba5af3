"""weir.config: the part of tf.config that TF1 scripts call (tf1api). Weir
runs on the CPU only, so the device queries list one CPU device and GPU loops
(`for gpu in tf.config.experimental.list_physical_devices("GPU")`) see none.

The settings are recorded and read back, as TF's are, but nothing else in
weir reads them: a Session's threads come from its ConfigProto
(intra_op_parallelism_threads), not from config.threading; soft placement,
the JIT and eager functions have no effect on weir's graphs."""
import collections

__all__ = [
    "PhysicalDevice", "LogicalDevice", "LogicalDeviceConfiguration", "list_physical_devices",
    "list_logical_devices", "get_visible_devices", "set_visible_devices",
    "get_logical_device_configuration", "set_logical_device_configuration",
    "get_soft_device_placement", "set_soft_device_placement", "functions_run_eagerly",
    "run_functions_eagerly", "experimental_functions_run_eagerly",
    "experimental_run_functions_eagerly", "experimental", "threading", "optimizer",
]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDeviceConfiguration = collections.namedtuple(
    "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority",
                                   "experimental_device_ordinal"])
LogicalDeviceConfiguration.__new__.__defaults__ = (None, None, 0)

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_state = {"visible": [_CPU], "soft_placement": False, "run_eagerly": False,
          "logical_config": {}}


def _check_type(device_type):
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError("device_type must be a string or None, got %r" % (device_type,))


def list_physical_devices(device_type=None):
    """The physical devices of `device_type` ("CPU", "GPU", ...; all when
    None): weir has one CPU."""
    _check_type(device_type)
    return [d for d in [_CPU] if device_type is None or d.device_type == device_type.upper()]


def list_logical_devices(device_type=None):
    _check_type(device_type)
    return [LogicalDevice("/device:CPU:0", "CPU")
            for d in _state["visible"] if device_type is None or d.device_type ==
            device_type.upper()]


def get_visible_devices(device_type=None):
    _check_type(device_type)
    return [d for d in _state["visible"]
            if device_type is None or d.device_type == device_type.upper()]


def set_visible_devices(devices, device_type=None):
    """Only weir's CPU may be visible: any other device is a ValueError, and
    hiding the CPU is too (weir has nothing else to run on)."""
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for d in devices:
        if d not in list_physical_devices():
            raise ValueError("Unrecognized device: %r" % (d,))
    if device_type in (None, "CPU") and _CPU not in devices:
        raise ValueError("weir runs on the CPU only: it cannot be hidden")
    _state["visible"] = [_CPU]


def get_logical_device_configuration(device):
    if device not in list_physical_devices():
        raise ValueError("Unrecognized device: %r" % (device,))
    return _state["logical_config"].get(device.name)


def set_logical_device_configuration(device, logical_devices):
    """weir does not split its CPU into logical devices: a list of more than
    one configuration is a ValueError."""
    if device not in list_physical_devices():
        raise ValueError("Unrecognized device: %r" % (device,))
    if logical_devices is not None and len(logical_devices) > 1:
        raise ValueError("weir cannot split the CPU into %d logical devices"
                         % len(logical_devices))
    _state["logical_config"][device.name] = logical_devices


def get_soft_device_placement():
    return _state["soft_placement"]


def set_soft_device_placement(enabled):
    _state["soft_placement"] = bool(enabled)


def functions_run_eagerly():
    return _state["run_eagerly"]


def run_functions_eagerly(run_eagerly):
    """weir has no eager execution: True is NotImplementedError."""
    if run_eagerly:
        raise NotImplementedError("weir runs graphs only: run_functions_eagerly(True) is not "
                                  "supported")
    _state["run_eagerly"] = False


experimental_functions_run_eagerly = functions_run_eagerly
experimental_run_functions_eagerly = run_functions_eagerly

from weir.config import experimental, optimizer, threading  # noqa: E402,F401
