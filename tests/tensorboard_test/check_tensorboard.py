"""TensorBoard's own event reader loads the event file Weir writes.

Runs write_events.cc's program into a fresh log directory, loads it with
tensorboard.backend.event_processing.event_accumulator, and checks the file
name, every scalar's steps and values, the histogram's statistics and
buckets, and the graph's node names against values computed here. Exits 1
on the first mismatch; a missing tensorboard package is a failure too
(scripts/install_deps.sh installs it).

    python3 check_tensorboard.py PATH/TO/tensorboard_write_events
"""

import os
import re
import socket
import subprocess
import sys
import tempfile

import numpy as np
from tensorboard.backend.event_processing import event_accumulator


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory(prefix="tensorboard_test.") as logdir:
        written = subprocess.run([sys.argv[1], logdir], check=True, capture_output=True,
                                 text=True).stdout.strip()
        name = os.path.basename(written)
        check(os.path.dirname(written) == logdir, f"{written} is not in {logdir}")
        check(re.fullmatch(r"events\.out\.tfevents\.\d{10}\." + re.escape(socket.gethostname()),
                           name), f"event file name {name}")

        # 0 keeps every event (the default keeps one histogram per tag).
        accumulator = event_accumulator.EventAccumulator(
            logdir, size_guidance={event_accumulator.SCALARS: 0,
                                   event_accumulator.HISTOGRAMS: 0})
        accumulator.Reload()
        tags = accumulator.Tags()
        expected_scalars = ["loss", "accuracy/top1", "accuracy/top5", "examples_per_second"]
        check(sorted(tags["scalars"]) == sorted(expected_scalars), f"scalar tags {tags}")
        check(tags["histograms"] == ["weights"], f"histogram tags {tags}")
        check(tags["graph"], f"no graph in {tags}")

        steps = np.arange(1, 6)
        x = np.float32(0.5) * steps.astype(np.float32)
        expected = {
            "loss": x * x,
            "accuracy/top1": np.float32(0.5) * x,
            "accuracy/top5": np.float32(0.25) * x,
            "examples_per_second": (100.0 * steps).astype(np.float32),
        }
        for tag, values in expected.items():
            events = accumulator.Scalars(tag)
            check([e.step for e in events] == list(steps), f"{tag} steps {events}")
            check([np.float32(e.value) for e in events] == list(values),
                  f"{tag} values {[e.value for e in events]} != {list(values)}")
            check(all(e.wall_time > 1.5e9 for e in events), f"{tag} wall times {events}")

        histograms = accumulator.Histograms("weights")
        check([h.step for h in histograms] == list(steps), f"histogram steps {histograms}")
        for h, xi in zip(histograms, x):
            weights = xi * np.array([-1, 0, 1, 2, 3], np.float32)
            v = h.histogram_value
            check(v.num == 5 and v.min == weights.min() and v.max == weights.max(),
                  f"histogram at step {h.step}: {v}")
            check(v.sum == sum(float(w) for w in weights), f"histogram sum {v}")
            check(v.sum_squares == sum(float(w) ** 2 for w in weights), f"sum_squares {v}")
            check(sum(v.bucket) == 5 and len(v.bucket) == len(v.bucket_limit),
                  f"histogram buckets {v}")
            # Each value is counted in the first bucket whose limit is above it.
            for w in weights:
                index = next(i for i, limit in enumerate(v.bucket_limit) if float(w) < limit)
                check(v.bucket[index] >= 1, f"value {w} in an empty bucket: {v}")

        graph = accumulator.Graph()
        names = {node.name for node in graph.node}
        for node in ["x", "loss", "accuracy", "weights", "summaries/loss", "summaries/accuracy",
                     "summaries/weights", "summaries/merged"]:
            check(node in names, f"node {node} not in the graph's {sorted(names)}")
        ops = {node.name: node.op for node in graph.node}
        check(ops["summaries/merged"] == "MergeSummary", f"ops {ops}")
        check(ops["summaries/weights"] == "HistogramSummary", f"ops {ops}")
    print(f"OK: TensorBoard read {len(expected)} scalar series, 1 histogram series and the "
          f"graph ({len(names)} nodes)")


if __name__ == "__main__":
    main()
