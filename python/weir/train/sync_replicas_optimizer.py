"""SyncReplicasOptimizer (TF1's tf.train.SyncReplicasOptimizer): synchronous
data-parallel training with backup workers (OSDI 2016 §4.4), written as graph
code over ConditionalAccumulators and a token queue.

Each replica's train op applies its gradients to one accumulator per
variable (on the variable's device), tagged with the replica's local_step,
then takes a token from the sync token queue and makes the token its new
local_step. The chief's queue runner takes the mean of replicas_to_aggregate
fresh gradients from every accumulator (blocking until they came), applies
them with the wrapped optimizer (which advances global_step), and puts
max(total_num_replicas, replicas_to_aggregate) tokens holding the new
global_step into the queue. A take advances the accumulator's step, so the
gradients that the slowest replicas send for a step already taken are stale
and dropped: with total_num_replicas > replicas_to_aggregate the extra
replicas are backups, and a dead or slow replica does not hold up a step.

make_session_run_hook(is_chief) gives the SessionRunHook that initializes
the local step (the chief also the accumulators' steps), fills in the first
tokens and starts the chief queue runner in after_create_session.
"""
from weir.framework import dtypes
from weir.framework import ops
from weir.framework.sparse_tensor import IndexedSlices
from weir.ops import accumulator_ops
from weir.ops import array_ops
from weir.ops import control_flow_ops
from weir.ops import data_flow_ops
from weir.ops import variables
from weir.train import optimizer
from weir.train import queue_runner
from weir.train import session_run_hook

__all__ = ["SyncReplicasOptimizer"]


def _read(var):
    """A new read of `var`, ordered by the caller's control dependencies and
    placed with the variable (whatever device scope the caller is in)."""
    with ops.device(None), ops.device(var.device):
        return var.read_value()


class SyncReplicasOptimizer(optimizer.Optimizer):
    """Aggregates the gradients of replicas_to_aggregate replicas per step
    and applies them once with `opt`."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None, variable_averages=None,
                 variables_to_average=None, use_locking=False, name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if replicas_to_aggregate < 1:
            raise ValueError("replicas_to_aggregate must be >= 1, got %d" % replicas_to_aggregate)
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas)
        self._tokens_per_step = max(self._total_num_replicas, self._replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []
        self._local_step = None
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's compute_gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The replica's train op: apply the gradients to the accumulators,
        then wait for a token and make it the local step. Builds the chief's
        update (take, apply with the wrapped optimizer, refill the tokens) and
        init ops on the way. ValueError without grads_and_vars or global_step."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        train_ops = []
        aggregated_grads_and_vars = []

        # The local step lives on this replica's device, not the ps (the
        # anchor takes the device the caller's device scope gives to ops).
        local_anchor = control_flow_ops.no_op()
        with ops.device(None), ops.device(local_anchor.device):
            self._local_step = variables.Variable(
                initial_value=0, trainable=False, collections=[ops.GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype, name="sync_rep_local_step")
        self.local_step_init_op = self._local_step.assign(_read(global_step))
        chief_init_ops = [self.local_step_init_op]
        # Outside the caller's device scope: Weir's placer keeps the
        # initialization checks with their variables (on the ps), and a
        # request for the worker's device would contradict that.
        with ops.device(None):
            self.ready_for_local_init_op = variables.report_uninitialized_variables(
                variables.global_variables())

        with ops.name_scope(None, self._name):
            for grad, var in grads_and_vars:
                if grad is None:
                    aggregated_grads_and_vars.append((None, var))
                    continue
                with ops.device(var.device):
                    if isinstance(grad, IndexedSlices):
                        # TF's: an IndexedSlices goes through a sparse accumulator.
                        accumulator = accumulator_ops.SparseConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(), shared_name=var.name + "/grad_accum")
                        train_ops.append(accumulator.apply_indexed_slices_grad(
                            grad, local_step=self._local_step))
                        aggregated_grads_and_vars.append(
                            (accumulator.take_indexed_slices_grad(self._replicas_to_aggregate),
                             var))
                        self._accumulator_list.append((accumulator, var.device))
                        continue
                    grad = ops.convert_to_tensor(grad)
                    accumulator = accumulator_ops.ConditionalAccumulator(
                        grad.dtype, shape=var.get_shape(),
                        shared_name=var.name + "/grad_accum")
                    train_ops.append(accumulator.apply_grad(grad, local_step=self._local_step))
                    aggregated_grads_and_vars.append(
                        (accumulator.take_grad(self._replicas_to_aggregate), var))
                    self._accumulator_list.append((accumulator, var.device))

            # The token queue and the chief's ops on it sit with global_step.
            with ops.device(global_step.device), ops.name_scope(None):
                self._sync_token_queue = data_flow_ops.FIFOQueue(
                    -1, global_step.dtype.base_dtype, shapes=(), name="sync_token_q",
                    shared_name="sync_token_q")
                self._dummy_queue = data_flow_ops.FIFOQueue(
                    1, dtypes.int32, shapes=(), name="dummy_queue", shared_name="dummy_queue")

            with ops.device(global_step.device), ops.name_scope(None):
                with ops.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
            with ops.device(None), ops.device(self._local_step.device):
                train_op = self._local_step.assign(token)

            with ops.device(global_step.device), ops.name_scope(None):
                with ops.control_dependencies([self._opt.apply_gradients(
                        aggregated_grads_and_vars, global_step)]):
                    # Read after the update: the tokens carry the new step.
                    tokens = array_ops.fill([self._tokens_per_step], _read(global_step))
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))

                if self._variable_averages is not None:
                    with ops.control_dependencies([sync_op]):
                        sync_op = self._variable_averages.apply(self._variables_to_average)

                self._chief_queue_runner = queue_runner.QueueRunner(self._dummy_queue, [sync_op])

            for accumulator, device in self._accumulator_list:
                with ops.device(device):
                    chief_init_ops.append(accumulator.set_global_step(_read(global_step),
                                                                      name="SetGlobalStep"))
            self.chief_init_op = control_flow_ops.group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self):
        """The QueueRunner the chief runs: it takes, applies and refills the
        tokens, step after step. ValueError before apply_gradients."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens=-1):
        """The op that puts num_tokens tokens (default replicas_to_aggregate)
        into the queue, for the chief to run once at the start; ValueError
        when fewer than replicas_to_aggregate - total_num_replicas."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d (needed)"
                             % (num_tokens, tokens_needed))
        if num_tokens > 0:
            with ops.device(self._global_step.device), ops.name_scope(None):
                tokens = array_ops.fill([num_tokens], _read(self._global_step))
                return self._sync_token_queue.enqueue_many((tokens,))
        return control_flow_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The SessionRunHook that runs the local (chief: chief) init, the
        init tokens and the chief queue runner when the session is made."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(session_run_hook.SessionRunHook):

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        if not self._sync_optimizer._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using "
                             "the hook.")
        if self._is_chief:
            self._local_init_op = self._sync_optimizer.chief_init_op
            self._q_runner = self._sync_optimizer.get_chief_queue_runner()
            self._init_tokens_op = self._sync_optimizer.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = self._sync_optimizer.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None
        self._ready_for_local_init_op = self._sync_optimizer.ready_for_local_init_op

    def after_create_session(self, session, coord):
        """Runs the local init (the variables must be initialized), the init
        tokens (chief) and starts the chief queue runner's thread."""
        uninitialized = session.run(self._ready_for_local_init_op)
        if len(uninitialized):
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                "Init op: %s, uninitialized variables: %s"
                % (self._local_init_op.name, [n.decode() if isinstance(n, bytes) else n
                                              for n in uninitialized]))
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
