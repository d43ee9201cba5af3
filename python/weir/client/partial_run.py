"""Session.partial_run_setup / partial_run (TF1's partial runs), over
ordinary runs.

A partial run is one step fed and fetched in pieces: partial_run_setup names
every fetch and feed up front; each partial_run call feeds some of the
feeds and fetches what they (with the earlier feeds) make computable. Weir
runs each call as a Session.run that also fetches the "frontier": every
tensor computable now that a later fetch needs through a node not yet
computable. Later calls feed those values back, so each node of the step
runs once (a random op's value is shared by an early and a late fetch, as
TF's one step gives) and nothing is recomputed.

As TF's: a feed may be given once and must be one of the setup's feeds; a
fetch must be one of the setup's fetches, given once, and computable from
the feeds given so far (InvalidArgumentError otherwise).
"""
import itertools
import threading

from weir.framework import errors
from weir.framework import ops

__all__ = []

_handles = itertools.count()


def _flatten(x):
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _flatten(v)]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _flatten(item)]
    return [x]


class PartialRunState(object):
    def __init__(self, session, fetches, feeds):
        from weir.client import session as session_lib
        graph = session.graph
        self.lock = threading.Lock()
        self.fetches = {}
        for f in _flatten(fetches):
            element = session_lib._resolve_fetch(graph, f)
            self.fetches[element.name] = element
        self.feeds = {}
        for f in _flatten(feeds or []):
            element = session_lib._resolve_feed_key(graph, f)
            self.feeds[element.name] = element
        self.fed = set()       # names of the setup feeds given so far
        self.fetched = set()   # names of the setup fetches returned so far
        self.known = {}        # tensor name -> (Tensor, value): fed or computed in an earlier call

    def _available(self, op, memo):
        """Whether `op` can run now: none of its inputs leads to a feed not yet given."""
        name = op.name
        if name in memo:
            return memo[name]
        memo[name] = True  # a loop's back edge (NextIteration) does not block
        ok = True
        for t in op.inputs:
            if t.name in self.known:
                continue
            if t.name in self.feeds:  # a feed not given yet
                ok = False
                break
            if not self._available(t.op, memo):
                ok = False
                break
        if ok:
            for c in op.control_inputs:
                if not self._available(c, memo):
                    ok = False
                    break
        memo[name] = ok
        return ok

    def _frontier(self, pending, memo):
        """Tensors computable now that the pending fetches need through a
        node that is not computable yet."""
        frontier, seen = {}, set()
        stack = [e.op if isinstance(e, ops.Tensor) else e for e in pending]
        while stack:
            op = stack.pop()
            if op.name in seen:
                continue
            seen.add(op.name)
            if self._available(op, memo):
                continue
            for t in op.inputs:
                if t.name in self.known or t.name in self.feeds:
                    continue
                if self._available(t.op, memo):
                    frontier[t.name] = t
                else:
                    stack.append(t.op)
            for c in op.control_inputs:
                if not self._available(c, memo):
                    stack.append(c)
        return list(frontier.values())


def setup(session, fetches, feeds=None):
    """A handle for partial_run (see the module doc)."""
    state = PartialRunState(session, fetches, feeds)
    handle = "weir_partial_run_%d" % next(_handles)
    session._partial_runs[handle] = state
    return handle


def run(session, handle, fetches, feed_dict=None):
    from weir.client import session as session_lib
    state = session._partial_runs.get(handle)
    if state is None:
        raise errors.InvalidArgumentError(None, None, "Must run 'setup' before performing partial "
                                          "runs (unknown handle %r)" % (handle,))
    graph = session.graph
    with state.lock:
        for key, value in (feed_dict or {}).items():
            t = session_lib._resolve_feed_key(graph, key)
            if t.name not in state.feeds:
                raise errors.InvalidArgumentError(None, None, "Input to feed not specified in "
                                                  "partial_run_setup: %s" % t.name)
            if t.name in state.fed:
                raise errors.InvalidArgumentError(None, None, "Input %s has already been fed." % t.name)
            state.fed.add(t.name)
            state.known[t.name] = (t, value)
        requested = []
        memo = {}
        for f in _flatten(fetches):
            element = session_lib._resolve_fetch(graph, f)
            if element.name not in state.fetches:
                raise errors.InvalidArgumentError(None, None, "Fetch %s was not specified in "
                                                  "partial_run_setup." % element.name)
            if element.name in state.fetched:
                raise errors.InvalidArgumentError(None, None, "Fetch %s has already been fetched."
                                                  % element.name)
            op = element.op if isinstance(element, ops.Tensor) else element
            if element.name not in state.known and not state._available(op, memo):
                raise errors.InvalidArgumentError(None, None, "Fetch %s needs feeds that were not given "
                                                  "yet in this partial run" % element.name)
            requested.append(element)
        for element in requested:
            state.fetched.add(element.name)
        pending = [e for name, e in state.fetches.items() if name not in state.fetched]
        frontier = state._frontier(pending, memo)
        feeds = {t: value for t, value in state.known.values()}
        values, frontier_values = session.run([fetches, frontier], feed_dict=feeds)
        for t, value in zip(frontier, frontier_values):
            state.known[t.name] = (t, value)
        for element, value in zip(requested, _flatten(values)):  # later fetches reuse these values
            if isinstance(element, ops.Tensor):
                state.known[element.name] = (element, value)
        if len(state.fetched) == len(state.fetches):
            session._partial_runs.pop(handle, None)
        return values
