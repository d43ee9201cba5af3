"""weir.config.threading: the thread-count settings, recorded and read back
(0 means "the system picks"). Sessions take their threads from their
ConfigProto, not from here."""
_threads = {"intra": 0, "inter": 0}


def _count(num_threads):
    num_threads = int(num_threads)
    if num_threads < 0:
        raise ValueError("the number of threads must be >= 0, got %d" % num_threads)
    return num_threads


def get_intra_op_parallelism_threads():
    return _threads["intra"]


def set_intra_op_parallelism_threads(num_threads):
    _threads["intra"] = _count(num_threads)


def get_inter_op_parallelism_threads():
    return _threads["inter"]


def set_inter_op_parallelism_threads(num_threads):
    _threads["inter"] = _count(num_threads)
