"""weir.train: optimizers, learning-rate schedules, the global step, Saver and
the input-pipeline runners (TensorFlow 1's tf.train)."""
from weir.train.optimizer import *  # noqa: F401,F403
from weir.train.gradient_descent import *  # noqa: F401,F403
from weir.train.momentum import *  # noqa: F401,F403
from weir.train.adagrad import *  # noqa: F401,F403
from weir.train.adadelta import *  # noqa: F401,F403
from weir.train.ftrl import *  # noqa: F401,F403
from weir.train.proximal import *  # noqa: F401,F403
from weir.train.rmsprop import *  # noqa: F401,F403
from weir.train.adam import *  # noqa: F401,F403
from weir.train.learning_rate_decay import *  # noqa: F401,F403
from weir.train.training_util import *  # noqa: F401,F403
from weir.train.saver import *  # noqa: F401,F403
from weir.train.checkpoint_management import *  # noqa: F401,F403
from weir.train.checkpoint_utils import *  # noqa: F401,F403
from weir.train.coordinator import *  # noqa: F401,F403
from weir.train.queue_runner import *  # noqa: F401,F403
from weir.train.input import *  # noqa: F401,F403
from weir.train.device_setter import *  # noqa: F401,F403
from weir.train.session_run_hook import *  # noqa: F401,F403
from weir.train.basic_session_run_hooks import *  # noqa: F401,F403
from weir.train.session_manager import *  # noqa: F401,F403
from weir.train.monitored_session import *  # noqa: F401,F403
from weir.train.supervisor import *  # noqa: F401,F403
from weir.train.sync_replicas_optimizer import *  # noqa: F401,F403
from weir.train.moving_averages import *  # noqa: F401,F403
from weir.framework.graph_io import write_graph  # noqa: F401  (tf.train.write_graph)
from weir.summary.writer import summary_iterator  # noqa: F401  (tf.train.summary_iterator)
from weir.distribute import ClusterSpec, Server  # noqa: F401  (tf.train.ClusterSpec, Server)


def __getattr__(name):
    # tf.train.Example and its family: proto classes, loaded with protobuf
    # only when asked for (weir.train.input).
    from weir.train import input as _input
    if name in _input.EXAMPLE_PROTOS:
        return _input.proto_class(name)
    if name in ("ClusterDef", "JobDef", "SaverDef", "ServerDef"):  # tf1api
        from weir.core import protos
        return getattr(protos, name)
    raise AttributeError("module 'weir.train' has no attribute %r" % name)


from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    cosine_decay_restarts, linear_cosine_decay, noisy_linear_cosine_decay,
    piecewise_constant_decay)
from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    basic_train_loop, checkpoints_iterator, match_filenames_once, maybe_batch_join,
    maybe_shuffle_batch_join)
from weir.ops.tf1_modules import VocabInfo, warm_start  # noqa: F401,E402  (tf1api)
