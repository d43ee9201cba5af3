"""tf.train.Supervisor (TF1's older training-loop helper, used by the PTB
language-model tutorial and scripts of its time), over SessionManager,
Coordinator and LooperThread.

    sv = wr.train.Supervisor(logdir="/tmp/model")
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)

managed_session() restores the newest checkpoint of logdir or runs init_op
(global_variables_initializer by default) and local_init_op, starts the
queue runners and, on the chief with a logdir, two service threads: a
checkpoint every save_model_secs (to <logdir>/model.ckpt, with the global
step) and the summary_op's value every save_summaries_secs (to an event file
in logdir). Leaving the block stops and joins the threads (an
OutOfRangeError raised in it counts as a normal end, as TF's) and closes
the session. The graph is finalized when the Supervisor is built.
Not supported: is_chief=False's waiting for a chief (it only restores or
waits for a ready model as SessionManager does), `session_manager=`
arguments other than a SessionManager, `recovery_wait_secs` for workers.
"""
import contextlib
import os

from weir.framework import errors
from weir.framework import ops
from weir.ops import control_flow_ops
from weir.ops import variables
from weir.train import coordinator
from weir.train import queue_runner
from weir.train import saver as saver_lib
from weir.train import session_manager as session_manager_lib
from weir.train import training_util

__all__ = ["Supervisor"]


class _UseDefault(object):
    pass


USE_DEFAULT = _UseDefault()


class Supervisor(object):
    """A session's initialization, recovery, checkpoints and summaries (TF1)."""

    USE_DEFAULT = USE_DEFAULT

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None, local_init_op=USE_DEFAULT,
                 logdir=None, summary_op=USE_DEFAULT, saver=USE_DEFAULT, global_step=USE_DEFAULT,
                 save_summaries_secs=120, save_model_secs=600, recovery_wait_secs=30,
                 stop_grace_secs=120, checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        self._graph = graph if graph is not None else ops.get_default_graph()
        with self._graph.as_default():
            self._is_chief = is_chief
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            self._stop_grace_secs = stop_grace_secs
            self._init_feed_dict = init_feed_dict
            self._init_fn = init_fn
            self._global_step = (training_util.get_global_step(self._graph)
                                 if global_step is USE_DEFAULT else global_step)
            self._init_op = (variables.global_variables_initializer() if init_op is USE_DEFAULT
                             else init_op)
            if local_init_op is USE_DEFAULT:
                local_init_op = control_flow_ops.group(variables.local_variables_initializer(),
                                                       *ops.get_collection(ops.GraphKeys.TABLE_INITIALIZERS))
            self._local_init_op = local_init_op
            self._ready_op = (variables.report_uninitialized_variables() if ready_op is USE_DEFAULT
                              else ready_op)
            if ready_for_local_init_op is USE_DEFAULT:
                ready_for_local_init_op = None
            self._summary_op = self._default_summary_op() if summary_op is USE_DEFAULT else summary_op
            if saver is USE_DEFAULT:
                saver = (ops.get_collection(ops.GraphKeys.SAVERS) or [None])[0] or saver_lib.Saver()
            self._saver = saver
            self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
            self._session_manager = session_manager or session_manager_lib.SessionManager(
                local_init_op=self._local_init_op, ready_op=self._ready_op,
                ready_for_local_init_op=ready_for_local_init_op, graph=self._graph,
                recovery_wait_secs=recovery_wait_secs, local_init_run_options=local_init_run_options)
            self._summary_writer = None
            if is_chief and logdir and summary_writer is USE_DEFAULT:
                from weir.summary.writer import FileWriter
                self._summary_writer = FileWriter(logdir, graph=self._graph)
            elif summary_writer is not USE_DEFAULT:
                self._summary_writer = summary_writer
        self._coord = coordinator.Coordinator()
        self._started_threads = []
        self._graph.finalize()

    def _default_summary_op(self):
        from weir.ops import summary_ops
        return summary_ops.merge_all()

    # --- properties (TF's) -------------------------------------------------------------

    is_chief = property(lambda self: self._is_chief)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    session_manager = property(lambda self: self._session_manager)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # --- sessions ---------------------------------------------------------------------

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """A session restored from logdir's newest checkpoint or initialized
        (the chief), with the services and queue runners started."""
        if self._coord.should_stop():
            self._coord.clear_stop()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            if start_standard_services:
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def start_standard_services(self, sess):
        """The checkpoint and summary threads (chief with a logdir)."""
        if not self._is_chief or not self._logdir:
            return []
        threads = []
        if self._summary_writer is not None and self._global_step is not None:
            current = training_util.global_step(sess, self._global_step)
            from weir.core import protos
            self._summary_writer.add_session_log(protos.SessionLog(status=protos.SessionLog.START),
                                                 current)
        if self._save_model_secs and self._saver is not None:
            threads.append(self.loop(self._save_model_secs, self._save_checkpoint, args=(sess,)))
        if self._save_summaries_secs and self._summary_op is not None and self._summary_writer is not None:
            threads.append(self.loop(self._save_summaries_secs, self.summary_computed_now, args=(sess,)))
        return threads

    def _save_checkpoint(self, sess):
        self._saver.save(sess, self._save_path, global_step=self._global_step)

    def summary_computed_now(self, sess):
        fetches = [self._summary_op] + ([self._global_step] if self._global_step is not None else [])
        values = sess.run(fetches)
        step = int(values[1]) if len(values) > 1 else None
        self._summary_writer.add_summary(values[0], step)

    def start_queue_runners(self, sess, queue_runners=None):
        threads = queue_runner.start_queue_runners(sess=sess, coord=self._coord, start=True) \
            if queue_runners is None else [t for qr in queue_runners
                                           for t in qr.create_threads(sess, coord=self._coord,
                                                                      daemon=True, start=True)]
        self._started_threads.extend(threads)
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """A LooperThread calling target every timer_interval_secs until stop."""
        looper = coordinator.LooperThread(self._coord, timer_interval_secs, target=target, args=args,
                                          kwargs=kwargs)
        looper.start()
        self._started_threads.append(looper)
        return looper

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops and joins the threads; closes the summary writer."""
        self._coord.request_stop()
        try:
            self._coord.join(list(self._started_threads) + list(threads or []),
                             stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A session for the `with` block (see the module doc)."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # the block's error ends the threads; OutOfRange is a normal end
            self.request_stop(e if not isinstance(e, errors.OutOfRangeError) else None)
            if not isinstance(e, errors.OutOfRangeError):
                raise
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    sess.close()
