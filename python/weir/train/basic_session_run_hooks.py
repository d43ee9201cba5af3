"""The standard SessionRunHooks of TF1's tf.train, for monitored sessions.

StopAtStepHook        stops at a global step (num_steps from the first session, or last_step)
CheckpointSaverHook   saves a checkpoint when the session is created, every N steps or seconds,
                      and at the end; CheckpointSaverListener sees each save
StepCounterHook       logs (and writes as a summary) global steps per second
LoggingTensorHook     logs tensors' values every N runs or seconds, and/or at the end
NanTensorHook         fails (NanLossDuringTrainingError) or stops when the loss is NaN
SummarySaverHook      writes the summary op's results every N steps or seconds
GlobalStepWaiterHook  holds a worker until the global step reaches a value
FinalOpsHook          runs ops when the session ends; their values are kept
FeedFnHook            adds feed_fn()'s feeds to every run
ProfilerHook          traces a run every N steps or seconds: <output_dir>/timeline-<step>.json
SecondOrStepTimer     "every N seconds or every N steps", the hooks' shared trigger

The hooks that read the global step read it through one cached tensor (the
global step's value + 0, in the "global_step_read_op_cache" collection), fetched
with every run: it holds the step before that run's update, so hooks add one.
Logging goes to the Python logger "weir.train".
"""
import logging
import os
import time

import numpy as np

from weir.framework import errors
from weir.framework import ops
from weir.train import training_util
from weir.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["SecondOrStepTimer", "StopAtStepHook", "CheckpointSaverListener", "CheckpointSaverHook",
           "StepCounterHook", "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook",
           "SummarySaverHook", "GlobalStepWaiterHook", "FinalOpsHook", "FeedFnHook",
           "ProfilerHook"]

_log = logging.getLogger("weir.train")

GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def _get_or_create_global_step_read(graph=None):
    """A tensor reading the global step (cached in GLOBAL_STEP_READ_KEY), or
    None when the graph has no global step."""
    graph = graph if graph is not None else ops.get_default_graph()
    cached = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    step = training_util.get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), ops.name_scope(None), ops.name_scope(step.op.name + "/"):
        value = step.value() if hasattr(step, "value") else step
        read = value + 0
    graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read


def _global_step_read_or_raise(hook_name):
    read = _get_or_create_global_step_read()
    if read is None:
        raise RuntimeError("Global step should be created to use %s." % hook_name)
    return read


def _as_graph_element(obj):
    """The Tensor (or Operation) `obj` names in the default graph."""
    graph = ops.get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError("Passed %s should have graph attribute that is equal to current "
                             "graph %s." % (obj, graph))
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError("Name %s is ambiguous, as this `Operation` has multiple outputs (at least 2)."
                     % obj)


_atexit_registered = []


def _summary_writer(output_dir):
    from weir.summary import FileWriterCache
    if not _atexit_registered:
        # The cached writers outlive the hooks: flush and close them before
        # the interpreter tears the bindings down.
        import atexit
        atexit.register(FileWriterCache.clear)
        _atexit_registered.append(True)
    return FileWriterCache.get(output_dir)


class SecondOrStepTimer(object):
    """Triggers at most once per step: every `every_secs` seconds or every
    `every_steps` steps (exactly one of them)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_steps and every_secs should be provided.")
        if every_steps is not None and every_steps <= 0:
            raise ValueError("every_steps must be positive, got %r" % (every_steps,))
        if every_secs is not None and every_secs < 0:
            raise ValueError("every_secs must be non-negative, got %r" % (every_secs,))
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        """True at the first step, then when enough steps or seconds passed
        since the last trigger (never twice at one step)."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_triggered_time + self._every_secs
        return step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at `step`; returns (seconds, steps) since the
        previous one, (None, None) for the first."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches last_step (or the step of
    the first session plus num_steps)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        if num_steps is not None and num_steps <= 0:
            raise ValueError("num_steps must be positive, got %r" % (num_steps,))
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _global_step_read_or_raise("StopAtStepHook")

    def after_create_session(self, session, coord):
        # num_steps counts from the first session's step; a recreated session
        # (recovery) keeps the target.
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if run_values.results + 1 >= self._last_step:
            # The read preceded this run's update: check the step now.
            if int(run_context.session.run(self._global_step_tensor)) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener(object):
    """Callbacks around CheckpointSaverHook's saves; after_save returning
    True requests a stop."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves `<checkpoint_dir>/<checkpoint_basename>-<global step>` when the
    session is created, every save_steps steps or save_secs seconds, and at
    the end (unless that step was just saved)."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._saver = saver
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def
        self._steps_per_run = 1
        self._summary_writer = None

    def begin(self):
        self._summary_writer = _summary_writer(self._checkpoint_dir)
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            graph = ops.get_default_graph()
            _write_graph_pbtxt(graph, self._checkpoint_dir)
            self._summary_writer.add_graph(graph)
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(run_values.results + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = ops.get_collection(ops.GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError("No items in collection %s. Please add a saver to the collection "
                               "or provide a saver or scaffold." % ops.GraphKeys.SAVERS)
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection %s. Please indicate which one "
                               "to use by passing it to the constructor." % ops.GraphKeys.SAVERS)
        self._saver = savers[0]
        return self._saver

    def _save(self, session, step):
        """Saves at `step`; True when a listener asks to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        from weir.core import protos
        self._summary_writer.add_session_log(
            protos.SessionLog(status=protos.SessionLog.CHECKPOINT,
                              checkpoint_path=self._save_path), step)
        stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be stopped: %s",
                          listener)
                stop = True
        return stop


def _write_graph_pbtxt(graph, directory):
    """<directory>/graph.pbtxt: the GraphDef in protobuf text format (as TF's
    CheckpointSaverHook writes it), atomically."""
    from google.protobuf import text_format
    from weir.core import protos
    graph_def = protos.GraphDef.FromString(graph._c_graph.to_graph_def())
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "graph.pbtxt")
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text_format.MessageToString(graph_def))
    os.replace(tmp, path)


class StepCounterHook(SessionRunHook):
    """Logs "global_step/sec: N" every N steps or seconds, and writes it as a
    summary when it has an output_dir or a summary_writer."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._steps_per_run = 1

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _summary_writer(self._output_dir)
        self._global_step_tensor = _global_step_read_or_raise("StepCounterHook")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if not self._timer.should_trigger_for_step(run_values.results + self._steps_per_run):
            return
        global_step = int(run_context.session.run(self._global_step_tensor))
        if not self._timer.should_trigger_for_step(global_step):
            return
        elapsed_secs, elapsed_steps = self._timer.update_last_triggered_step(global_step)
        if elapsed_secs is None or elapsed_secs <= 0:
            return
        steps_per_sec = elapsed_steps / elapsed_secs
        if self._summary_writer is not None:
            from weir.core import protos
            summary = protos.Summary(value=[protos.Summary.Value(tag=self._summary_tag,
                                                                 simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a dict tag -> tensor or name, or a list
    of them, tagged by themselves) every every_n_iter runs or every_n_secs
    seconds, and/or at the end. formatter(dict tag -> value) gives the line."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors.keys())
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._timer = (_NeverTriggerTimer() if only_at_end else
                       SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter))
        self._log_at_end = at_end
        self._formatter = formatter

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(tensor)
                                 for tag, tensor in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        if self._should_trigger:
            return SessionRunArgs(self._current_tensors)
        return None

    def _log_tensors(self, tensor_values):
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter:
            _log.info("%s", self._formatter(tensor_values))
            return
        with np.printoptions(suppress=True):
            line = ", ".join("%s = %s" % (tag, tensor_values[tag]) for tag in self._tag_order)
        if elapsed_secs is not None:
            _log.info("%s (%.3f sec)", line, elapsed_secs)
        else:
            _log.info("%s", line)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class _NeverTriggerTimer(SecondOrStepTimer):
    def __init__(self):
        self.reset()

    def should_trigger_for_step(self, step):
        return False


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fetches loss_tensor with every run; NaN raises NanLossDuringTrainingError
    (or, with fail_on_nan_loss=False, logs and requests a stop)."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.any(np.isnan(run_values.results)):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error(message)
                raise NanLossDuringTrainingError
            _log.warning(message)
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Runs the summary op (summary_op, or the scaffold's) every save_steps
    steps or save_secs seconds and writes its results to output_dir (or
    summary_writer), tagged with the global step."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _summary_writer(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _global_step_read_or_raise("SummarySaverHook")

    def _get_summary_op(self):
        summary_op = self._summary_op if self._summary_op is not None else (
            self._scaffold.summary_op)
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None or
                                 self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step_tensor}
        if self._request_summary and self._get_summary_op() is not None:
            requests["summary"] = self._get_summary_op()
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            from weir.core import protos
            self._summary_writer.add_session_log(
                protos.SessionLog(status=protos.SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()


class GlobalStepWaiterHook(SessionRunHook):
    """Holds the first run until the global step reaches wait_until_step
    (polling every 0.5 s): lets the chief get ahead before a worker starts."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _global_step_read_or_raise("GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged = 0
        while True:
            current = int(run_context.session.run(self._global_step_tensor))
            if current >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current - last_logged > 1000:
                _log.info("Waiting for global step %d before starting training. Current step is "
                          "%d.", self._wait_until_step, current)
                last_logged = current
            time.sleep(0.5)


class FinalOpsHook(SessionRunHook):
    """Runs final_ops when the session ends normally; final_ops_values holds
    their values (None before)."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            _log.warning("FinalOpsHook's ops ran out of input (OutOfRangeError or "
                         "StopIteration): final ops should read state (e.g. metric values), "
                         "not pull more input.")
            raise


class FeedFnHook(SessionRunHook):
    """Feeds feed_fn()'s dict in every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class ProfilerHook(SessionRunHook):
    """Traces one run every save_steps steps or save_secs seconds (not the
    first) and writes its Chrome trace (chrome://tracing, Perfetto) to
    <output_dir>/timeline-<global step>.json. (TF's also adds the run's
    metadata to the event file; Weir's FileWriter has no add_run_metadata.)"""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._global_step_tensor = _global_step_read_or_raise("ProfilerHook")

    def before_run(self, run_context):
        from weir.client import session as session_lib
        self._request_trace = (self._next_step is not None and
                               self._timer.should_trigger_for_step(self._next_step))
        options = (session_lib.RunOptions(trace_level=session_lib.RunOptions.FULL_TRACE)
                   if self._request_trace else None)
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results["global_step"])
        if self._next_step is None:
            # The first run is not traced: it compiles the graph.
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_trace:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, run_values.run_metadata)
        self._next_step = global_step + 1

    def _save(self, step, run_metadata):
        from weir.client import timeline
        path = self._output_file.format(step)
        _log.info("Saving timeline for %d into '%s'.", step, path)
        if self._output_dir:
            os.makedirs(self._output_dir, exist_ok=True)
        trace = timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        with open(path, "w") as f:
            f.write(trace)
