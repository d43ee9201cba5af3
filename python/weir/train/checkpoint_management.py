"""The "checkpoint" state file and checkpoint files on disk (TF1's tf.train helpers).

A directory's state file (default name "checkpoint") is TensorFlow's
CheckpointState in protobuf text format:

    model_checkpoint_path: "model.ckpt-2"
    all_model_checkpoint_paths: "model.ckpt-1"
    all_model_checkpoint_paths: "model.ckpt-2"
    all_model_checkpoint_timestamps: 1700000000.5
    ...

It is replaced atomically (written to a temporary file in the same directory,
then renamed), so a reader sees the old state or the new one, never a part.
Relative paths in it are relative to the directory; get_checkpoint_state gives
them joined to it. A V2 checkpoint `prefix` is the files `prefix.index` and
`prefix.data-?????-of-?????` (as SaveV2 writes them).
"""
import glob
import logging
import os
import time

__all__ = ["CheckpointState", "get_checkpoint_state", "update_checkpoint_state",
           "latest_checkpoint", "checkpoint_exists", "remove_checkpoint",
           "get_checkpoint_mtimes", "generate_checkpoint_state_proto"]

_log = logging.getLogger("weir.train")


class CheckpointState:
    """TF's CheckpointState message, as a plain object (same field names)."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=None,
                 all_model_checkpoint_timestamps=None, last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps or [])
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self):
        return _to_text(self)

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and _to_text(self) == _to_text(other)


def _escape(text):
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append("\\%03o" % byte)
    return "".join(out)


def _unescape(text):
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39, "a": 7, "b": 8, "f": 12,
              "v": 11, "?": 63}
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 == len(text):
            out.extend(ch.encode("utf-8"))
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt in "01234567":
            j = i + 1
            while j < len(text) and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1:j], 8) & 0xFF)
            i = j
        elif nxt == "x":
            j = i + 2
            while j < len(text) and j < i + 4 and text[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(text[i + 2:j], 16))
            i = j
        else:
            out.extend(nxt.encode("utf-8"))
            i += 2
    return out.decode("utf-8", errors="surrogateescape")


def _to_text(state):
    lines = ['model_checkpoint_path: "%s"' % _escape(state.model_checkpoint_path)]
    lines += ['all_model_checkpoint_paths: "%s"' % _escape(p)
              for p in state.all_model_checkpoint_paths]
    lines += ["all_model_checkpoint_timestamps: %r" % float(t)
              for t in state.all_model_checkpoint_timestamps]
    if state.last_preserved_timestamp:
        lines.append("last_preserved_timestamp: %r" % float(state.last_preserved_timestamp))
    return "\n".join(lines) + "\n"


def _parse_text(text, filename):
    state = CheckpointState()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        value = value.strip()
        if not sep:
            raise ValueError("%s: not a CheckpointState text line: %r" % (filename, raw))
        key = key.strip()
        if key in ("model_checkpoint_path", "all_model_checkpoint_paths"):
            if len(value) < 2 or value[0] not in "\"'" or value[-1] != value[0]:
                raise ValueError("%s: %s needs a quoted string: %r" % (filename, key, raw))
            path = _unescape(value[1:-1])
            if key == "model_checkpoint_path":
                state.model_checkpoint_path = path
            else:
                state.all_model_checkpoint_paths.append(path)
        elif key == "all_model_checkpoint_timestamps":
            state.all_model_checkpoint_timestamps.append(float(value))
        elif key == "last_preserved_timestamp":
            state.last_preserved_timestamp = float(value)
        else:
            raise ValueError("%s: unknown CheckpointState field %r" % (filename, key))
    return state


def _state_path(checkpoint_dir, latest_filename):
    return os.path.join(checkpoint_dir, latest_filename or "checkpoint")


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None):
    """The CheckpointState to record; paths relative to a relative save_dir are
    stored relative to it (as TF does)."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if (all_model_checkpoint_timestamps is not None
            and len(all_model_checkpoint_timestamps) != len(paths)):
        raise ValueError("Checkpoint timestamps, if provided, must match checkpoint paths "
                         "(got paths %r and timestamps %r)"
                         % (paths, all_model_checkpoint_timestamps))
    if not os.path.isabs(save_dir):
        def rel(p):
            return p if os.path.isabs(p) else os.path.relpath(p, save_dir)
        model_checkpoint_path = rel(model_checkpoint_path)
        paths = [rel(p) for p in paths]
    return CheckpointState(model_checkpoint_path, paths, all_model_checkpoint_timestamps,
                           last_preserved_timestamp or 0.0)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None):
    """Atomically writes `<save_dir>/<latest_filename or 'checkpoint'>`."""
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                            all_model_checkpoint_paths,
                                            all_model_checkpoint_timestamps,
                                            last_preserved_timestamp)
    path = _state_path(save_dir, latest_filename)
    if os.path.abspath(path) == os.path.abspath(model_checkpoint_path):
        raise RuntimeError("Save path '%s' conflicts with path used for checkpoint state.  "
                           "Please use a different save path." % model_checkpoint_path)
    tmp = "%s.tmp%d.%d" % (path, os.getpid(), time.monotonic_ns())
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(_to_text(state))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's CheckpointState (paths joined to checkpoint_dir when
    relative), or None when there is no state file."""
    path = _state_path(checkpoint_dir, latest_filename)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        state = _parse_text(text, path)
    except ValueError as e:
        _log.warning("%s: %s", path, e)
        return None
    if not state.model_checkpoint_path:
        raise ValueError("Invalid checkpoint state loaded from " + checkpoint_dir)

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
    state.model_checkpoint_path = absolute(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [absolute(p) for p in state.all_model_checkpoint_paths]
    return state


def checkpoint_exists(checkpoint_prefix):
    """Whether a V2 checkpoint (`prefix.index`) or a V1 file/pattern exists."""
    if os.path.exists(checkpoint_prefix + ".index"):
        return True
    if glob.glob(checkpoint_prefix):
        return True
    return False


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint's prefix, or None. When the newest one recorded is
    gone, the newest earlier one that still exists is returned, with a warning."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not state.model_checkpoint_path:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    for prefix in reversed(state.all_model_checkpoint_paths):
        if prefix != state.model_checkpoint_path and checkpoint_exists(prefix):
            _log.warning("Couldn't match files for checkpoint %s; using the earlier %s",
                         state.model_checkpoint_path, prefix)
            return prefix
    _log.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def _checkpoint_files(prefix, meta_graph_suffix="meta"):
    files = glob.glob(glob.escape(prefix) + ".data-?????-of-?????")
    files += [f for f in (prefix + ".index", prefix + "." + meta_graph_suffix)
              if os.path.exists(f)]
    return files


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=2, meta_graph_suffix="meta"):
    """Deletes the files of the checkpoint `checkpoint_prefix` (and its .meta)."""
    for f in _checkpoint_files(checkpoint_prefix, meta_graph_suffix):
        try:
            os.remove(f)
        except OSError as e:
            _log.warning("Ignoring: %s", e)
    if checkpoint_format_version == 1 and os.path.exists(checkpoint_prefix):
        os.remove(checkpoint_prefix)


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification time of each checkpoint's index file (skipping missing ones)."""
    result = []
    for prefix in checkpoint_prefixes:
        for f in (prefix + ".index", prefix):
            if os.path.exists(f):
                result.append(os.path.getmtime(f))
                break
    return result
