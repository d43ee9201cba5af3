"""The wire messages (package weir.wire: GraphDef, NodeDef, AttrValue,
TensorProto, TensorShapeProto, VersionDef, Example, Event, ...) as protobuf
message classes, built from the descriptor set weir_protos.binpb beside this
file with whatever protobuf runtime is installed (no generated _pb2 code).

Loaded lazily: `import weir` does not import protobuf; the first
`protos.GraphDef` (any message name) does. `protos.DataType` is the enum's
descriptor wrapper (`protos.DataType.Value("DT_FLOAT") == 1`).
"""
import os
import threading

__all__ = []  # the message classes are reached as weir.core.protos.<Name>

_lock = threading.Lock()
_classes = None
_pool = None


def descriptor_set_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "weir_protos.binpb")


def _load():
    global _classes, _pool
    with _lock:
        if _classes is not None:
            return _classes
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
        from google.protobuf.internal import enum_type_wrapper

        path = descriptor_set_path()
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ImportError(f"weir's descriptor set {path} is missing (build the weir_python "
                              f"target): {e}") from None
        file_set = descriptor_pb2.FileDescriptorSet.FromString(data)
        pool = descriptor_pool.DescriptorPool()
        for file_proto in file_set.file:
            pool.Add(file_proto)
        classes = {}
        for file_proto in file_set.file:
            if file_proto.package != "weir.wire":
                continue
            file_desc = pool.FindFileByName(file_proto.name)
            for name, desc in file_desc.message_types_by_name.items():
                classes[name] = message_factory.GetMessageClass(desc)
            for name, desc in file_desc.enum_types_by_name.items():
                wrapper = enum_type_wrapper.EnumTypeWrapper(desc)
                classes[name] = wrapper
                for value in desc.values:  # module-level enum constants, as _pb2 modules have
                    classes.setdefault(value.name, value.number)
        _pool = pool
        _classes = classes
        return classes


def message_names():
    """The names of every message (and enum) class this module provides."""
    return sorted(_load())


def pool():
    """The descriptor pool holding weir.wire (for text_format's Any resolution etc.)."""
    _load()
    return _pool


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    classes = _load()
    try:
        return classes[name]
    except KeyError:
        raise AttributeError(f"weir.core.protos has no message {name!r} (known: "
                             f"{', '.join(sorted(k for k in classes if not k.isupper()))})") from None


def __dir__():
    return sorted(set(globals()) | set(_load()))
