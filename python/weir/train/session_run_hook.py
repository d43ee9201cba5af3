"""SessionRunHook and its companions (TF1's tf.train.SessionRunHook).

A hook watches the run calls of a monitored session: begin() once before the
graph is finalized, after_create_session() each time a session is (re)created,
before_run() before every run call (it may ask for more fetches, feeds and
options with a SessionRunArgs), after_run() after it (with the values of what
it asked for), and end() when the session closes normally. A hook stops the
loop by calling run_context.request_stop().
"""
import collections

__all__ = ["SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues"]


class SessionRunHook(object):
    """A hook's callbacks; each does nothing unless overridden."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):  # pylint: disable=unused-argument
        pass

    def before_run(self, run_context):  # pylint: disable=unused-argument
        return None

    def after_run(self, run_context, run_values):  # pylint: disable=unused-argument
        pass

    def end(self, session):  # pylint: disable=unused-argument
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run call: fetches (any structure Session.run takes), feeds, RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super(SessionRunArgs, cls).__new__(cls, fetches, feed_dict, options)


class SessionRunContext(object):
    """The run call being made, seen by before_run() and after_run()."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


SessionRunValues = collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])
SessionRunValues.__doc__ = "What a hook asked for, after the run: results has the shape of its fetches."
