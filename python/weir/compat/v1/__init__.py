"""weir.compat.v1: tf.compat.v1 — weir's whole API (weir is TF1's graph API
already), so a script can say `import weir.compat.v1 as tf` or use
`wr.compat.v1.X`. disable_eager_execution / disable_v2_behavior are no-ops,
enable_eager_execution raises NotImplementedError (weir has graph mode only).
Names are looked up in `weir` on use (PEP 562), so this module adds nothing to
keep in sync."""


def __getattr__(name):
    import weir
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(weir, name)
    except AttributeError:
        raise AttributeError("module 'weir.compat.v1' has no attribute %r" % name) from None


def __dir__():
    import weir
    return sorted(dir(weir))
