"""weir.metrics: TF1's streaming metrics (tf.compat.v1.metrics).

Contract (tf.compat.v1.metrics): each metric keeps its running state in
variables of the LOCAL_VARIABLES and METRIC_VARIABLES collections (so
wr.local_variables_initializer() resets it) and returns (value, update_op):
running update_op folds one batch into the state and returns the metric over
everything seen so far; value reads the metric without changing the state.
`weights` (broadcastable to the per-element values) weigh each element;
metrics_collections / updates_collections name the collections that value and
update_op are added to. Names follow TF's: accuracy's state is
"accuracy/total" and "accuracy/count", a second accuracy's "accuracy_1/...".

    acc, acc_update = wr.metrics.accuracy(labels, predictions)
    sess.run(wr.local_variables_initializer())
    for batch in batches:
        sess.run(acc_update, feed(batch))
    print(sess.run(acc))
"""
from weir.metrics import base, classes, means, thresholds
from weir.metrics.base import *  # noqa: F401,F403
from weir.metrics.classes import *  # noqa: F401,F403
from weir.metrics.means import *  # noqa: F401,F403
from weir.metrics.thresholds import *  # noqa: F401,F403

__all__ = base.__all__ + means.__all__ + thresholds.__all__ + classes.__all__
