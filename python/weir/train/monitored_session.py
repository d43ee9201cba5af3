"""MonitoredSession and MonitoredTrainingSession: TF1's training loop.

    with wr.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                           checkpoint_dir=d, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)

A MonitoredSession, when made: calls every hook's begin(), has its session
creator make a session (ChiefSessionCreator: restore the newest checkpoint or
initialize; WorkerSessionCreator: wait until the chief did), finalizes the
graph (until close()), starts the graph's queue runners with a Coordinator,
and calls every hook's after_create_session(). Each run() merges the hooks'
fetches, feeds and options (SessionRunArgs) into the call and gives each hook
its share of the results; a hook's request_stop() makes should_stop() true.

Recovery: when run() fails with AbortedError or UnavailableError (a ps or
worker task died or restarted), the session is closed and a new one made by
the creator (so the chief restores the newest checkpoint, and the other
workers wait for it), the hooks' after_create_session() runs again, and the
run is tried again. Making the session is retried on those errors too.

close() (or leaving the `with` block) calls the hooks' end() — unless an
exception other than OutOfRangeError/StopIteration ends the block — stops
the queue runners (waiting stop_grace_period_secs at most) and closes the
session. An OutOfRangeError (an input pipeline ran out) inside the `with`
block ends it cleanly, as in TF.
"""
import inspect
import logging
import sys
import time

from weir.client import session as session_lib
from weir.framework import errors
from weir.framework import ops
from weir.ops import variables
from weir.train import basic_session_run_hooks
from weir.train import coordinator
from weir.train import queue_runner
from weir.train import saver as saver_lib
from weir.train.session_manager import SessionManager
from weir.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

__all__ = ["Scaffold", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator",
           "MonitoredSession", "SingularMonitoredSession", "MonitoredTrainingSession"]

_log = logging.getLogger("weir.train")

# The errors a monitored session recovers from: a task of the cluster went away.
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)

USE_DEFAULT = object()


class Scaffold(object):
    """The ops and the saver a monitored session needs to make a session
    ready; finalize() fills the ones not given from the graph's collections
    (INIT_OP, READY_OP, ...) or with the defaults, and finalizes the graph.

    Defaults: init_op initializes the global variables; ready_op reports the
    uninitialized global and local variables; ready_for_local_init_op the
    uninitialized global ones; local_init_op initializes the local variables;
    summary_op is merge_all() (None without summaries); saver is the SAVERS
    collection's, or a new Saver(sharded=True, allow_empty=True) added to it.
    init_fn(scaffold, session) runs after init_op.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            pick = lambda value, field: value if value is not None else getattr(  # noqa: E731
                copy_from_scaffold, field)
            init_op = pick(init_op, "init_op")
            init_feed_dict = pick(init_feed_dict, "_init_feed_dict")
            init_fn = pick(init_fn, "_user_init_fn")
            ready_op = pick(ready_op, "ready_op")
            ready_for_local_init_op = pick(ready_for_local_init_op, "ready_for_local_init_op")
            local_init_op = pick(local_init_op, "local_init_op")
            local_init_feed_dict = pick(local_init_feed_dict, "_local_init_feed_dict")
            summary_op = pick(summary_op, "summary_op")
            saver = pick(saver, "saver")
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Fills the missing ops and the saver, then finalizes the graph."""
        graph = ops.get_default_graph()
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", ops.GraphKeys.INIT_OP, variables.global_variables_initializer)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", ops.GraphKeys.READY_OP, variables.report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", ops.GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", ops.GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            from weir.ops import summary_ops
            self._summary_op = Scaffold.get_or_default(
                "summary_op", ops.GraphKeys.SUMMARY_OP, summary_ops.merge_all)
        if self._saver is None:
            self._saver = _get_saver_or_default()
        if isinstance(self._saver, saver_lib.Saver):
            self._saver.build()
        graph.finalize()
        _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The only item of the collection, else default_constructor()'s
        result (added to the collection when not None)."""
        found = ops.get_collection(collection_key)
        if found:
            if len(found) > 1:
                raise RuntimeError("More than one item in the collection \"%s\". Please indicate "
                                   "which one to use by passing it to the tf.Scaffold "
                                   "constructor as: tf.Scaffold(%s=item to use)"
                                   % (collection_key, arg_name))
            return found[0]
        op = default_constructor()
        if op is not None:
            ops.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initializes the local variables (Weir has no lookup tables or
        other local resources to add)."""
        return variables.local_variables_initializer()


def _get_saver_or_default():
    savers = ops.get_collection(ops.GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection %s. Please indicate which one "
                               "to use by passing it to the constructor." % ops.GraphKeys.SAVERS)
        return savers[0]
    saver = saver_lib.Saver(sharded=True, allow_empty=True)
    ops.add_to_collection(ops.GraphKeys.SAVERS, saver)
    return saver


class SessionCreator(object):
    """Makes a session for a monitored session (create_session())."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for %s." % self)


class _ScaffoldSessionCreator(SessionCreator):
    """A creator whose sessions come from a SessionManager built (once, on
    first use) from the scaffold's local init and ready ops."""

    def __init__(self, scaffold, master, config):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=ops.get_default_graph())
        return self._session_manager


class ChiefSessionCreator(_ScaffoldSessionCreator):
    """Restores the newest checkpoint of checkpoint_dir (or the file
    checkpoint_filename_with_path) or, without one, runs the scaffold's init
    ops; then its local_init_op."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        super(ChiefSessionCreator, self).__init__(scaffold, master, config)
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(_ScaffoldSessionCreator):
    """Waits (max_wait_secs at most) until the chief made the model ready,
    then runs the scaffold's local_init_op."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        super(WorkerSessionCreator, self).__init__(scaffold, master, config)
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)


class _CoordinatedSessionCreator(SessionCreator):
    """Wraps a creator: the session with its queue runners started and the
    hooks told (after_create_session); remembers the raw session."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.tf_sess = None
        self.coord = None

    def create_session(self):
        self.tf_sess = self._session_creator.create_session()
        self.coord = coordinator.Coordinator()
        graph = ops.get_default_graph()
        if graph.get_collection(ops.GraphKeys.QUEUE_RUNNERS):
            queue_runner.start_queue_runners(sess=self.tf_sess, coord=self.coord)
        graph.finalize()
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


class _WrappedSession(object):
    """A session wrapper: run and should_stop go to the wrapped one."""

    def __init__(self, sess):
        self._sess = sess

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def _check_stop(self):
        return False

    def should_stop(self):
        if self._check_stop():
            return True
        if self._sess is not None:
            return _wrapped_should_stop(self._sess)
        return True

    def close(self):
        if self._sess is not None:
            try:
                self._sess.close()
            except errors.OpError as e:
                _log.warning("An error occurred when closing the session: %s: %s",
                             type(e).__name__, e)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        run_with_hooks = run_with_hooks or self.run
        return step_fn(_StepContext(raw_session, run_with_hooks))


def _wrapped_should_stop(sess):
    should_stop = getattr(sess, "should_stop", None)
    return bool(should_stop()) if should_stop is not None else False


class _RecoverableSession(_WrappedSession):
    """Makes a new session with the creator when a run fails with a
    preemption error (AbortedError, UnavailableError)."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        pause = 0.05
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                _log.info("An error was raised while a session was being created (%s: %s); "
                          "trying again in %.2f s.", type(e).__name__, _first_line(e), pause)
                # A restarted task takes a moment to be seen again: back off
                # (Weir's addition; at most 2 s between tries).
                time.sleep(pause)
                pause = min(2 * pause, 2.0)

    def _check_stop(self):
        try:
            if self._sess:
                return self._sess._check_stop()
            return True
        except _PREEMPTION_ERRORS as e:
            _log.info("An error was raised while considering whether the session is complete "
                      "(%s: %s); a new session will be made.", type(e).__name__, _first_line(e))
            self.close()
            self._sess = self._create_session()
            return False

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                      run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as e:
                _log.info("An error was raised (%s: %s): a task of the cluster may have been "
                          "restarted. The session will be closed and a new one made.",
                          type(e).__name__, _first_line(e))
                self.close()
                self._sess = None

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                return self._sess.run_step_fn(step_fn, self._sess_creator.tf_sess,
                                              run_with_hooks=self.run)
            except _PREEMPTION_ERRORS as e:
                _log.info("An error was raised in step_fn (%s: %s): a new session will be made.",
                          type(e).__name__, _first_line(e))
                self.close()
                self._sess = None


def _first_line(e):
    text = str(e)
    return text.splitlines()[0] if text else ""


class _CoordinatedSession(_WrappedSession):
    """A session with a Coordinator: should_stop() follows it, close()
    stops and joins its threads (the queue runners), and an error a thread
    gave the coordinator is raised from run()."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self):
        # A thread's error (a queue runner's) surfaces here.
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception:  # closing after a failure: the first error is the one to see
                pass

    def _call_with_root_cause(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception:
            # A thread's preemption error is the root cause of a run's other
            # error (e.g. a queue closed under it): raise that instead.
            original = sys.exc_info()
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:
                pass
            raise original[1].with_traceback(original[2])

    def run(self, *args, **kwargs):
        return self._call_with_root_cause(self._sess.run, *args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        return self._call_with_root_cause(self._sess.run_step_fn, step_fn, raw_session, run_with_hooks)


def _merge_run_options(options, incoming):
    """Folds a hook's RunOptions into the call's: the higher trace level,
    the shorter nonzero timeout."""
    options.trace_level = max(options.trace_level or 0, incoming.trace_level or 0)
    timeouts = [t for t in (options.timeout_in_ms, incoming.timeout_in_ms) if t]
    options.timeout_in_ms = min(timeouts) if timeouts else 0


def _feed_keys(feed_dict):
    return set(feed_dict.keys())


class _HookedSession(_WrappedSession):
    """Calls the hooks around each run."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self):
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict),
                                        session=self._sess)
        options = options or session_lib.RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata or session_lib.RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(results=outputs.get(hook),
                                                         options=options,
                                                         run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict, options):
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        merged = dict(user_feed_dict)
        merged.update(hook_feeds)
        return merged


def _raise_if_feeds_intersect(feeds1, feeds2, message):
    common = _feed_keys(feeds1) & _feed_keys(feeds2)
    if common:
        raise RuntimeError(message + " Conflict(s): " + str(sorted(str(k) for k in common)))


class _StepContext(object):
    """What run_step_fn's step_fn gets: the raw session, run_with_hooks()
    and request_stop()."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        raise _StopRequested()


class _StopRequested(StopIteration):
    """step_context.request_stop(): ends the step function; the monitored
    session then stops."""


class _MonitoredSession(object):
    """What MonitoredSession and SingularMonitoredSession share."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = ops.get_default_graph().finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator=session_creator or ChiefSessionCreator(), hooks=self._hooks,
            stop_grace_period_secs=stop_grace_period_secs)
        self._stop_requested_in_step_fn = False
        try:
            if should_recover:
                self._sess = _RecoverableSession(self._coordinated_creator)
            else:
                self._sess = self._coordinated_creator.create_session()
        except BaseException:
            # No session: the graph is the caller's to change again (Weir's
            # addition; TF's stays finalized).
            if not self._graph_was_finalized:
                ops.get_default_graph()._unsafe_unfinalize()
            raise

    @property
    def graph(self):
        """The graph this session runs."""
        if self._tf_sess() is None:
            return None
        return self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Session.run's arguments and result, with the hooks called around it."""
        if self._sess is None:
            raise RuntimeError("Session is already closed.")
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Calls step_fn(step_context); its step_context.session is the raw
        session and step_context.run_with_hooks() runs with the hooks;
        step_context.request_stop() ends it and stops the monitored session.
        Returns what step_fn returns (None after a stop request)."""
        params = [p for p in inspect.signature(step_fn).parameters]
        if params not in (["step_context"], ["self", "step_context"]):
            raise ValueError("`step_fn` may either have one `step_context` argument, or "
                             "`self` and `step_context` arguments if it's an instance method. "
                             "Got %s instead." % params)
        try:
            return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)
        except _StopRequested:
            self._stop_requested_in_step_fn = True
            return None

    def should_stop(self):
        return self._sess is None or self._stop_requested_in_step_fn or self._sess.should_stop()

    def close(self):
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type is not None and issubclass(exception_type,
                                                     (errors.OutOfRangeError, StopIteration)):
            exception_type = None
        self._close_internal(exception_type)
        # The input ran out: a clean end of the `with` block.
        return exception_type is None

    def _close_internal(self, exception_type=None):
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    ops.get_default_graph()._unsafe_unfinalize()

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that calls hooks, recovers from a lost task (AbortedError,
    UnavailableError: a new session from session_creator, default
    ChiefSessionCreator()), runs the queue runners and closes cleanly."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession on a ChiefSessionCreator that does not recover;
    raw_session() is the session underneath."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        return self._tf_sess()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession for training (TF1's tf.train.MonitoredTrainingSession).

    The chief (is_chief) restores the newest checkpoint of checkpoint_dir or
    initializes the model, and runs chief_only_hooks and, with a
    checkpoint_dir, a CheckpointSaverHook (every 600 s by default, or
    save_checkpoint_steps), a StepCounterHook (every log_step_count_steps)
    and a SummarySaverHook (every 100 steps by default) writing to summary_dir
    (default checkpoint_dir). Other workers wait (max_wait_secs at most) for
    the chief's model and run only `hooks`.
    """
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)

    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                  master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(basic_session_run_hooks.StepCounterHook(
                output_dir=summary_dir, every_n_steps=log_step_count_steps))
        if ((save_summaries_steps and save_summaries_steps > 0) or
                (save_summaries_secs and save_summaries_secs > 0)):
            all_hooks.append(basic_session_run_hooks.SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps,
                save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir:
        if ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                (save_checkpoint_steps and save_checkpoint_steps > 0)):
            all_hooks.append(basic_session_run_hooks.CheckpointSaverHook(
                checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs,
                scaffold=scaffold, save_graph_def=save_graph_def))
    if hooks:
        all_hooks.extend(hooks)
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
