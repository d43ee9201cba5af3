"""weir.config.optimizer: the graph-optimizer options, recorded and read back
(weir's own graph passes do not read them; the JIT is not available)."""
_options = {}
_jit = [False]


def get_experimental_options():
    return dict(_options)


def set_experimental_options(options):
    _options.update(dict(options))


def get_jit():
    return "autoclustering" if _jit[0] else ""


def set_jit(enabled):
    """weir has no XLA JIT: enabling it is NotImplementedError."""
    if enabled:
        raise NotImplementedError("weir has no XLA JIT: config.optimizer.set_jit is not "
                                  "supported")
    _jit[0] = False
