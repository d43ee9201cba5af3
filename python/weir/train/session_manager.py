"""SessionManager (TF1's tf.train.SessionManager): makes a session whose
model is ready, by restoring a checkpoint, by initializing, or by waiting
for another task (the chief) to do either.

    sm = wr.train.SessionManager(ready_op=wr.report_uninitialized_variables())
    sess = sm.prepare_session(master, init_op=init, saver=saver, checkpoint_dir=d)   # chief
    sess = sm.wait_for_session(master, max_wait_secs=600)                            # others

"Ready" means ready_op's result is empty (ready_op lists the uninitialized
variables' names: report_uninitialized_variables). local_init_op (the local
variables' initializers) runs once ready_for_local_init_op is empty (the
global variables are initialized), in every session made.

Weir's differences: wait_for_session polls with backoff (0.1 s, doubling, at
most 1 s or recovery_wait_secs) rather than every recovery_wait_secs (30 s),
so a worker starts within about a second of the chief; its DeadlineExceededError names
the variables still uninitialized. A session on a grpc:// master is made
only once the master sees a device of every job the graph's nodes name
(a master whose channel to a restarted task is still backing off makes
sessions without it): the session is made again until it does, for 30 s at
most, then InvalidArgumentError naming the jobs missing.
"""
import logging
import time

from weir.client import session as session_lib
from weir.framework import errors
from weir.framework import ops
from weir.train import checkpoint_management

__all__ = ["SessionManager"]

_log = logging.getLogger("weir.train")


def _jobs_named(graph):
    """The "/job:NAME/" prefixes of the devices the graph's nodes request."""
    jobs = set()
    for op in graph.get_operations():
        device = op.device
        if device and "/job:" in device:
            try:
                job = ops.DeviceSpec.from_string(device).job
            except ValueError:
                continue
            if job:
                jobs.add("/job:%s/" % job)
    return sorted(jobs)


# How long a grpc:// master may take to see a device of every job the graph
# names (a restarted task is seen again within a second or two).
_DEVICE_WAIT_SECS = 30.0


def _new_session(master, graph, config):
    """A Session on master. On a grpc:// master, made again (with backoff)
    until the master lists a device of every job the graph names; after
    _DEVICE_WAIT_SECS, InvalidArgumentError naming the jobs missing (a job
    the cluster lacks, or a task that stays down)."""
    deadline = time.monotonic() + _DEVICE_WAIT_SECS
    pause = 0.05
    while True:
        sess = session_lib.Session(master, graph=graph, config=config)
        if not master:
            return sess
        try:
            names = [d.name for d in sess.list_devices()]
        except Exception:
            _close_quietly(sess)
            raise
        missing = [job for job in _jobs_named(graph)
                   if not any(n.startswith(job) for n in names)]
        if not missing:
            return sess
        _close_quietly(sess)
        if time.monotonic() + pause > deadline:
            raise errors.InvalidArgumentError(
                None, None, "the master %s sees no device of %s after %g s (its devices: %s): "
                "is the job in the cluster, and its task running?"
                % (master, ", ".join(missing), _DEVICE_WAIT_SECS, ", ".join(sorted(names))))
        _log.info("The master %s sees no device of %s yet; trying again in %.2f s", master,
                  ", ".join(missing), pause)
        time.sleep(pause)
        pause = min(2 * pause, 1.0)


def _close_quietly(sess):
    try:
        sess.close()
    except Exception as e:  # the master may be the task that died
        _log.warning("Error closing a session: %s: %s", type(e).__name__, e)


def _names(value):
    return ", ".join(v.decode() if isinstance(v, bytes) else str(v)
                     for v in list(getattr(value, "flat", value)))


class SessionManager(object):
    """Restores, initializes or waits for a model; see the module's doc."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else ops.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             "local_init_op , ready_for_local_init_op [%s]"
                             % ready_for_local_init_op)

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        """(a new session, whether a checkpoint was restored into it)."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = _new_session(master, self._graph, config)
        try:
            if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
                return sess, False
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            waited = 0.0
            ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            while not ckpt or not ckpt.model_checkpoint_path:
                if not wait_for_checkpoint or waited >= max_wait_secs:
                    return sess, False
                _log.info("Waiting for a checkpoint in %s", checkpoint_dir)
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
            saver.restore(sess, ckpt.model_checkpoint_path)
            saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
            _log.info("Restored %s", ckpt.model_checkpoint_path)
            return sess, True
        except BaseException:
            _close_quietly(sess)
            raise

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None,
                        init_feed_dict=None, init_fn=None, checkpoint_filename_with_path=None):
        """A session with the model restored from the newest checkpoint of
        checkpoint_dir (or checkpoint_filename_with_path) or, without one,
        initialized by init_op and init_fn; then local_init_op. RuntimeError
        when the model is still not ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                       "local_init_op was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ok, message = self._try_run_local_init_op(sess)
            if not ok:
                raise RuntimeError("Init operations did not make model ready for local_init. "
                                   "Init op: %s, init fn: %s, error: %s"
                                   % (_op_name(init_op), init_fn, message))
            ready, message = self._model_ready(sess)
            if not ready:
                raise RuntimeError("Init operations did not make model ready. Init op: %s, "
                                   "init fn: %s, local_init_op: %s, error: %s"
                                   % (_op_name(init_op), init_fn, _op_name(self._local_init_op),
                                      message))
        except BaseException:
            _close_quietly(sess)
            raise
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, checkpoint_filename_with_path=None):
        """(session, True) when a checkpoint made the model ready, else
        (session, False): the caller initializes it."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        if not restored:
            return sess, False
        ok, message = self._try_run_local_init_op(sess)
        if not ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s",
                      checkpoint_dir or checkpoint_filename_with_path, message)
            return sess, False
        ready, message = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s",
                      checkpoint_dir or checkpoint_filename_with_path, message)
            return sess, False
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """A session once the model is ready (another task initialized or
        restored it; local_init_op run here). DeadlineExceededError after
        max_wait_secs, naming what is still not ready."""
        start = time.monotonic()
        pause = 0.1
        while True:
            message = None
            try:
                sess = _new_session(master, self._graph, config)
            except (errors.UnavailableError, errors.AbortedError) as e:
                sess, message = None, "no session: %s" % e
            if sess is not None:
                ok, message = self._try_run_local_init_op(sess)
                if ok:
                    ready, message = self._model_ready(sess)
                    if ready:
                        return sess
                _close_quietly(sess)
            elapsed = time.monotonic() - start
            if elapsed + pause > max_wait_secs:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %g secs: %s"
                    % (max_wait_secs, message))
            _log.info("Waiting for model to be ready: %s", message)
            time.sleep(pause)
            pause = min(pause * 2, 1.0, max(self._recovery_wait_secs, 0.1))

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _try_run_local_init_op(self, sess):
        """(True, None) after running local_init_op (or when there is none);
        (False, why) when the globals it needs are not initialized yet."""
        if self._local_init_op is None:
            return True, None
        ready, message = _ready(self._ready_for_local_init_op, sess,
                                "Model not ready for local init")
        if not ready:
            return False, message
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        return True, None


def _op_name(op):
    return getattr(op, "name", op)


def _ready(op, sess, what):
    """(True, None) if op is None or gives an empty list, else (False, a
    message naming the uninitialized variables)."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e).lower():
            raise
        return False, str(e)
    if value is None or getattr(value, "size", len(value) if hasattr(value, "__len__") else 0) == 0:
        return True, None
    return False, "%s: variables not initialized: %s" % (what, _names(value))
