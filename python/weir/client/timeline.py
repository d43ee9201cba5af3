"""Chrome traces of traced steps (TensorFlow's tensorflow.python.client.timeline).

    options = wr.RunOptions(trace_level=wr.RunOptions.FULL_TRACE)
    metadata = wr.RunMetadata()
    sess.run(train_op, options=options, run_metadata=metadata)
    trace = timeline.Timeline(metadata.step_stats, sess.graph)
    open("step.json", "w").write(trace.generate_chrome_trace_format())

The JSON is Chrome trace-event format (chrome://tracing, Perfetto): one
process per device, one thread row per executor thread, one complete ("X")
event per node named by its op with the node name in its args; with a graph
and show_dataflow, a flow arrow from each producer to each traced consumer;
with show_memory, a counter of the bytes each device's nodes allocated.
`step_stats` is a RunMetadata.step_stats (or any iterable of per-node
objects or dicts with node_name, op, device, thread_id, start_micros,
end_micros, bytes_allocated).
"""
import json

__all__ = ["Timeline"]


def _field(stats, name, default=None):
    if isinstance(stats, dict):
        return stats.get(name, default)
    return getattr(stats, name, default)


class Timeline:
    """A step's statistics, convertible to Chrome trace JSON."""

    def __init__(self, step_stats, graph=None):
        self._stats = list(step_stats)
        self._graph = graph

    def _producers(self, node_name):
        # The producer node names of a node's data inputs, from the graph.
        graph = self._graph
        c_graph = graph._c_graph
        node_id = c_graph.find_node(node_name)
        if node_id < 0:
            return []
        return [c_graph.node_name(src) for src, _ in c_graph.node_inputs(node_id)]

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The trace as a JSON string {"traceEvents": [...]}."""
        events = []
        pids = {}
        tids = set()
        ends = {}  # node name -> (pid, tid, end_micros) of its latest run
        for stats in self._stats:
            device = _field(stats, "device", "") or "unknown device"
            pid = pids.get(device)
            if pid is None:
                pid = pids[device] = len(pids)
                events.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                               "args": {"name": device}})
            tid = int(_field(stats, "thread_id", 0) or 0)
            if (pid, tid) not in tids:
                tids.add((pid, tid))
                events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                               "args": {"name": "thread %d" % tid}})
            start = int(_field(stats, "start_micros", 0) or 0)
            end = int(_field(stats, "end_micros", start) or start)
            name = _field(stats, "node_name", "")
            op = _field(stats, "op", "") or name
            args = {"name": name, "op": op}
            frame = _field(stats, "frame_name", "")
            if frame:
                args["frame"] = frame
                args["iteration"] = int(_field(stats, "iteration", 0) or 0)
            events.append({"name": op, "cat": "Op", "ph": "X", "pid": pid, "tid": tid, "ts": start,
                           "dur": max(end - start, 0), "args": args})
            ends[name] = (pid, tid, end)
            if show_memory:
                events.append({"name": "bytes allocated", "ph": "C", "pid": pid, "ts": start,
                               "args": {name: int(_field(stats, "bytes_allocated", 0) or 0)}})
        if show_dataflow and self._graph is not None:
            flow_id = 0
            for stats in self._stats:
                name = _field(stats, "node_name", "")
                device = _field(stats, "device", "") or "unknown device"
                pid = pids[device]
                tid = int(_field(stats, "thread_id", 0) or 0)
                start = int(_field(stats, "start_micros", 0) or 0)
                for producer in self._producers(name):
                    source = ends.get(producer)
                    if source is None:
                        continue
                    src_pid, src_tid, src_end = source
                    events.append({"name": "dataflow", "cat": "DataFlow", "ph": "s", "id": flow_id,
                                   "pid": src_pid, "tid": src_tid, "ts": src_end})
                    events.append({"name": "dataflow", "cat": "DataFlow", "ph": "f", "bp": "e",
                                   "id": flow_id, "pid": pid, "tid": tid, "ts": start})
                    flow_id += 1
        return json.dumps({"traceEvents": events}, separators=(",", ":"))
