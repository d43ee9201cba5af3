"""replica_device_setter: TF1's device function for parameter-server training.

Inside `with wr.device(wr.train.replica_device_setter(...))`, variable ops go to the ps tasks
(round-robin over them in creation order, by default) and every other op to the worker device;
a device set by an inner `wr.device` scope fills the fields the chosen device leaves open, and
a job named there that is not the ps job keeps a variable off the round-robin.
"""
from weir.distribute.cluster_spec import ClusterSpec
from weir.framework.ops import DeviceSpec

__all__ = ["replica_device_setter"]

# The ops that hold state a ps task keeps: variables (resource and reference) and mutable tables.
STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp",
                   "MutableHashTable", "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2")


class _RoundRobinStrategy:
    """The ps task of each variable op: 0, 1, ..., num_tasks - 1, 0, ... in creation order."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        """The device of `op`, an op about to be created (its .device: what the scopes inside
        this one chose)."""
        current = DeviceSpec.from_string(op.device or "")
        if not self._merge_devices and op.device:
            return op.device
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            chosen = DeviceSpec.from_string(self._ps_device)
            # A variable pinned to another job by an inner scope stays out of the rotation.
            if chosen.job and (not current.job or current.job == chosen.job):
                chosen.task = self._ps_strategy(op)
            return chosen.make_merged_spec(current).to_string()
        return DeviceSpec.from_string(self._worker_device or "").make_merged_spec(
            current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `wr.device` that puts variables on ps tasks (tf.train's).

    ps_tasks: how many ps tasks (taken from `cluster`'s "ps" job when `cluster` is given);
      0 and no cluster (or a cluster without ps) returns None, which `wr.device` treats as
      no device: everything runs where it would without the setter.
    ps_device / worker_device: the devices the two kinds of op get ("" for none).
    merge_devices: when True, fields set by inner `wr.device` scopes are kept (the setter fills
      the rest); when False, an op that has any device from a scope keeps it unchanged.
    cluster: a ClusterSpec, or anything ClusterSpec accepts (a dict of job -> addresses).
    ps_ops: op types placed on ps (default: variables and mutable hash tables).
    ps_strategy: op -> ps task index (default: round-robin in creation order).
    """
    if cluster is not None:
        if not isinstance(cluster, ClusterSpec):
            cluster = ClusterSpec(cluster)
        ps_tasks = cluster.num_tasks("ps") if "ps" in cluster.jobs else 0
    if ps_tasks == 0:
        return None
    if ps_tasks < 0:
        raise ValueError("replica_device_setter: ps_tasks must not be negative, got %d" % ps_tasks)
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("replica_device_setter: ps_strategy must be callable, got %r"
                        % (ps_strategy,))
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    frozenset(ps_ops), ps_strategy)
    return chooser.device_function
