"""weir.config.experimental: tf.config.experimental's device calls (one CPU)."""
from weir.config import (  # noqa: F401
    get_visible_devices, list_logical_devices, list_physical_devices, set_visible_devices)
from weir.config import get_logical_device_configuration as get_virtual_device_configuration  # noqa: F401,E501
from weir.config import set_logical_device_configuration as set_virtual_device_configuration  # noqa: F401,E501

_sync = [True]
_tf32 = [True]


def _require_gpu(device):
    from weir.config import PhysicalDevice
    if not isinstance(device, PhysicalDevice) or device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")


def set_memory_growth(device, enable):
    """weir has no GPUs: every device here is a ValueError, as TF says for a
    CPU."""
    _require_gpu(device)


def get_memory_growth(device):
    _require_gpu(device)
    return False


def get_synchronous_execution():
    return _sync[0]


def set_synchronous_execution(enable):
    _sync[0] = bool(enable)


def tensor_float_32_execution_enabled():
    return _tf32[0]


def enable_tensor_float_32_execution(enabled):
    _tf32[0] = bool(enabled)


def get_device_details(device):
    """{} for weir's CPU (TF gives details for GPUs only)."""
    from weir.config import list_physical_devices
    if device not in list_physical_devices():
        raise ValueError("Unrecognized device: %r" % (device,))
    return {}
