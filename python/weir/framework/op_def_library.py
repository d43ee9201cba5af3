"""apply_op: adds one node from an op's declaration and Python arguments, as
TensorFlow's op_def_library does.

Keywords are the op's input-arg names and attr names. Type attrs (T, N, type
lists) are inferred from the Tensor inputs first; then Python values (scalars,
lists, numpy arrays) become Consts of the dtype the op needs (a type attr's
default when nothing fixes it; else TF's inference: float -> float32, int ->
int32 or int64). The node is named by the name scope `name` (default: the op
name) opens, so converted inputs are named "<op>/<arg>" as in TF. Returns a
Tensor for one output, a list for one list output, a namedtuple of the
output args for several, the Operation for none.
"""
import collections
import keyword

from weir.framework import dtypes
from weir.framework import ops
from weir.framework import tensor_shape

__all__ = ["apply_op"]

_output_tuples = {}
_attr_defs = {}  # op name -> {attr name: attr dict}


def _op_def(op_type_name):
    return ops._op_def_cached(op_type_name)


def _flatten(values):
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flatten(v))
        else:
            out.append(v)
    return out


def _is_tensor_like(value):
    """A Tensor, or a value a registered conversion function handles (a
    Variable): converted first, so that its dtype can fix type attrs."""
    if isinstance(value, ops.Tensor):
        return True
    for base_type, _ in ops._conversion_functions():
        if isinstance(value, base_type):
            return True
    return False


_allowed_cache = {}  # id(attr_def) -> (attr_def, list of DType or None)


def _allowed(attr_def):
    """The allowed dtypes of a type attr (None: any), computed once per attr."""
    cached = _allowed_cache.get(id(attr_def))
    if cached is not None and cached[0] is attr_def:
        return cached[1]
    allowed = attr_def.get("allowed_values")
    result = None
    if allowed:
        try:
            result = [dtypes.as_dtype(a) for a in allowed]
        except TypeError:
            result = None
    _allowed_cache[id(attr_def)] = (attr_def, result)
    return result


def _check_allowed_type(op_type, arg_name, attr_def, dtype):
    if attr_def is None:
        return
    allowed = _allowed(attr_def)
    if allowed is not None and dtype.base_dtype not in allowed:
        raise TypeError(f"Value passed to parameter '{arg_name}' has DataType {dtype.name} not in "
                        f"list of allowed values: {', '.join(a.name for a in allowed)} (op "
                        f"{op_type}, attr {attr_def['name']})")


def _convert(value, dtype, arg_name, op_type, preferred=None, expected_from=None):
    """convert_to_tensor with apply_op's error messages."""
    if isinstance(value, ops.Tensor):
        if dtype is not None and value.dtype.base_dtype != dtype:
            if expected_from:
                raise TypeError(f"Input '{arg_name}' of '{op_type}' Op has type "
                                f"{value.dtype.base_dtype.name} that does not match type "
                                f"{dtype.name} of argument '{expected_from}'.")
            raise TypeError(f"Input '{arg_name}' of '{op_type}' Op has type "
                            f"{value.dtype.base_dtype.name} that does not match expected type of "
                            f"{dtype.name}.")
        return value
    try:
        return ops.convert_to_tensor(value, dtype=dtype, name=arg_name, preferred_dtype=preferred)
    except (TypeError, ValueError) as e:
        if dtype is not None:
            raise TypeError(f"Expected {dtype.name} passed to parameter '{arg_name}' of op "
                            f"'{op_type}', got {value!r} of type '{type(value).__name__}' "
                            f"instead. Error: {e}") from None
        raise


def _attr_value(op_type, attr_def, value):
    """A Python attr value in the form _C.Graph.add_node takes."""
    kind = attr_def["type"]
    name = attr_def["name"]
    if isinstance(value, ops.Tensor):
        raise TypeError(f"Attr '{name}' of '{op_type}' Op expects a Python value, not the Tensor "
                        f"{value.name} (attrs are fixed when the graph is built)")
    if kind.startswith("list("):
        if not isinstance(value, (list, tuple)):
            if kind == "list(shape)" and isinstance(value, tensor_shape.TensorShape):
                raise TypeError(f"Expected list for attr {name} of '{op_type}' Op, got {value!r}")
            raise TypeError(f"Expected list for attr {name} of '{op_type}' Op, got {value!r} of "
                            f"type '{type(value).__name__}'")
        inner = dict(attr_def, type=kind[5:-1])
        return [_attr_value(op_type, inner, v) for v in value]
    if kind == "type":
        try:
            return dtypes.as_dtype(value).base_dtype.as_datatype_enum
        except TypeError:
            raise TypeError(f"Expected DataType for argument '{name}' of '{op_type}' Op, not "
                            f"{value!r}.") from None
    if kind == "shape":
        if hasattr(value, "unknown_rank") and hasattr(value, "dim"):
            value = tensor_shape.TensorShape(value)
        try:
            return tensor_shape.as_shape(value)._as_c_shape()
        except (TypeError, ValueError) as e:
            raise TypeError(f"Error converting attr {name!r} of '{op_type}' Op to a shape: "
                            f"{e}") from None
    if kind == "int":
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise TypeError(f"Expected int for argument '{name}' of '{op_type}' Op, not "
                            f"{value!r}.")
        return int(value.__index__())
    if kind == "float":
        if isinstance(value, (str, bytes)) or isinstance(value, bool):
            raise TypeError(f"Expected float for argument '{name}' of '{op_type}' Op, not "
                            f"{value!r}.")
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TypeError(f"Expected float for argument '{name}' of '{op_type}' Op, not "
                            f"{value!r}.") from None
    if kind == "bool":
        if not isinstance(value, bool):
            if hasattr(value, "dtype") and getattr(value, "shape", None) == () \
                    and str(value.dtype) == "bool":
                return bool(value)
            raise TypeError(f"Expected bool for argument '{name}' of '{op_type}' Op, not "
                            f"{value!r}.")
        return value
    if kind == "string":
        if isinstance(value, bytes):
            try:
                return value.decode("utf-8")
            except UnicodeDecodeError:
                return value
        if not isinstance(value, str):
            raise TypeError(f"Expected string for argument '{name}' of '{op_type}' Op, not "
                            f"{value!r}.")
        return value
    if kind == "tensor":
        from weir.framework import tensor_util
        if hasattr(value, "tensor_content") and hasattr(value, "dtype"):
            return tensor_util.make_ndarray(value)
        return tensor_util.to_numpy(value)
    if kind == "func":
        if isinstance(value, str):
            return value
        fn_name = getattr(value, "name", None)
        if isinstance(fn_name, str):
            return fn_name
        raise TypeError(f"Expected a function name for argument '{name}' of '{op_type}' Op, not "
                        f"{value!r}.")
    return value


def _output_structure(op_type, op_def, op):
    out_args = op_def["outputs"]
    outputs = op.outputs
    if not out_args:
        return op
    if len(out_args) == 1:
        arg = out_args[0]
        if arg["number_attr"] or arg["type_list_attr"]:
            return list(outputs)
        return outputs[0]
    values = []
    pos = 0
    for arg in out_args:
        if arg["number_attr"]:
            n = int(op._get_attr_python(arg["number_attr"]))
            values.append(list(outputs[pos:pos + n]))
            pos += n
        elif arg["type_list_attr"]:
            n = len(op._get_attr_python(arg["type_list_attr"]))
            values.append(list(outputs[pos:pos + n]))
            pos += n
        else:
            values.append(outputs[pos])
            pos += 1
    cls = _output_tuples.get(op_type)
    if cls is None:
        cls = collections.namedtuple(op_type, [a["name"] for a in out_args], rename=True)
        _output_tuples[op_type] = cls
    return cls(*values)


def apply_op(op_type_name, name=None, **keywords):
    """Adds a node of op `op_type_name` (see the module docstring)."""
    op_def = _op_def(op_type_name)
    attr_defs = _attr_defs.get(op_type_name)
    if attr_defs is None:
        attr_defs = {a["name"]: a for a in op_def["attrs"]}
        _attr_defs[op_type_name] = attr_defs
    input_args = op_def["inputs"]
    # Internal attrs ("_class", "_fetch_at_step_end"...) are no OpDef's: kept as given.
    internal = {k: keywords.pop(k) for k in list(keywords) if k.startswith("_")}
    g = ops._get_graph_from_inputs(_flatten(keywords.values()))

    with g.as_default(), g.name_scope(name or op_type_name) as scope:
        # Explicit attrs first: they fix types the inputs must then have.
        attrs = {}
        for attr_name, attr_def in attr_defs.items():
            if attr_name in keywords:
                value = keywords.pop(attr_name)
                if value is None:
                    continue
                attrs[attr_name] = _attr_value(op_type_name, attr_def, value)
        values = {}
        for arg in input_args:
            arg_name = arg["name"]
            if arg_name not in keywords:
                raise TypeError(f"{op_type_name}: missing input argument '{arg_name}' (the op "
                                f"takes {', '.join(a['name'] for a in input_args)})")
            values[arg_name] = keywords.pop(arg_name)
        if keywords:
            raise TypeError(f"{op_type_name} got unexpected keyword arguments: "
                            f"{', '.join(sorted(keywords))}")

        # Pass 1: tensor-like inputs give the type attrs their types.
        inferred = {}     # type attr -> (DType, arg name that fixed it)
        converted = {}    # arg name -> Tensor or list of Tensors (or raw values)
        for arg in input_args:
            arg_name = arg["name"]
            value = values[arg_name]
            is_list = bool(arg["number_attr"] or arg["type_list_attr"])
            if is_list:
                if not isinstance(value, (list, tuple)):
                    raise TypeError(f"Expected list for '{arg_name}' argument to "
                                    f"'{op_type_name}' Op, not {value!r}.")
                items = list(value)
                for i, item in enumerate(items):
                    if _is_tensor_like(item):
                        items[i] = ops.convert_to_tensor(item, name=f"{arg_name}_{i}")
                converted[arg_name] = items
                if arg["type_attr"] and arg["type_attr"] not in attrs \
                        and arg["type_attr"] not in inferred:
                    for item in items:
                        if isinstance(item, ops.Tensor):
                            inferred[arg["type_attr"]] = (item.dtype.base_dtype, arg_name)
                            break
            else:
                if arg["type"] == dtypes.resource.as_datatype_enum \
                        and not isinstance(value, ops.Tensor) \
                        and isinstance(getattr(value, "handle", None), ops.Tensor):
                    value = value.handle  # a Variable where its resource is wanted
                elif _is_tensor_like(value):
                    want = None
                    if arg["type"]:
                        want = dtypes.as_dtype(arg["type"])
                    elif arg["type_attr"] in attrs:
                        want = dtypes.as_dtype(attrs[arg["type_attr"]])
                    value = ops.convert_to_tensor(value, dtype=want, name=arg_name) \
                        if not isinstance(value, ops.Tensor) else value
                converted[arg_name] = value
                if isinstance(value, ops.Tensor) and arg["type_attr"] \
                        and arg["type_attr"] not in attrs and arg["type_attr"] not in inferred:
                    inferred[arg["type_attr"]] = (value.dtype.base_dtype, arg_name)

        # Pass 2: convert the rest with the types now known; check all.
        inputs = []
        for arg in input_args:
            arg_name = arg["name"]
            value = converted[arg_name]
            type_attr = arg["type_attr"]
            fixed = dtypes.as_dtype(arg["type"]) if arg["type"] else None
            if arg["number_attr"] or arg["type_list_attr"]:
                if arg["type_list_attr"]:
                    list_attr = arg["type_list_attr"]
                    want_types = attrs.get(list_attr)
                    if want_types is not None and len(want_types) != len(value):
                        raise ValueError(f"List argument '{arg_name}' to '{op_type_name}' Op has "
                                         f"{len(value)} elements, attr {list_attr} lists "
                                         f"{len(want_types)} types")
                    tensors = []
                    for i, item in enumerate(value):
                        want = dtypes.as_dtype(want_types[i]) if want_types is not None else None
                        tensors.append(_convert(item, want, f"{arg_name}_{i}", op_type_name))
                    if want_types is None:
                        attrs[list_attr] = [t.dtype.base_dtype.as_datatype_enum for t in tensors]
                    value = tensors
                else:
                    number_attr = arg["number_attr"]
                    want = fixed
                    expected_from = None
                    preferred = None
                    if want is None:
                        if type_attr in attrs:
                            want = dtypes.as_dtype(attrs[type_attr])
                        elif type_attr in inferred:
                            want, expected_from = inferred[type_attr]
                        else:
                            default = attr_defs.get(type_attr, {})
                            if default.get("has_default") and default.get("default") is not None:
                                preferred = dtypes.as_dtype(default["default"])
                    tensors = []
                    for i, item in enumerate(value):
                        t = _convert(item, want, f"{arg_name}_{i}" if len(value) > 1 else arg_name,
                                     op_type_name, preferred=preferred,
                                     expected_from=expected_from)
                        if want is None:
                            want = t.dtype.base_dtype
                            expected_from = arg_name
                        tensors.append(t)
                    attr_def = attr_defs.get(number_attr)
                    if attr_def is not None and attr_def.get("has_minimum") \
                            and len(tensors) < attr_def.get("minimum", 0):
                        raise ValueError(f"List argument '{arg_name}' to '{op_type_name}' Op with "
                                         f"length {len(tensors)} shorter than minimum length "
                                         f"{attr_def['minimum']}.")
                    if number_attr in attrs and attrs[number_attr] != len(tensors):
                        raise ValueError(f"List argument '{arg_name}' to '{op_type_name}' Op has "
                                         f"length {len(tensors)}, but attr {number_attr} is "
                                         f"{attrs[number_attr]}")
                    attrs[number_attr] = len(tensors)
                    if type_attr and type_attr not in attrs:
                        if want is None:
                            raise TypeError(f"Don't know how to infer type variable from empty "
                                            f"input list passed to input '{arg_name}' of "
                                            f"'{op_type_name}' Op.")
                        _check_allowed_type(op_type_name, arg_name, attr_defs.get(type_attr),
                                            want)
                        attrs[type_attr] = want.as_datatype_enum
                        inferred.setdefault(type_attr, (want, arg_name))
                    value = tensors
                inputs.append([t._as_endpoint() for t in value])
                continue
            if fixed is not None:
                t = _convert(value, fixed, arg_name, op_type_name)
            elif type_attr in inferred:
                want, from_arg = inferred[type_attr]
                t = _convert(value, want, arg_name, op_type_name,
                             expected_from=from_arg if from_arg != arg_name else None)
            elif type_attr in attrs:
                t = _convert(value, dtypes.as_dtype(attrs[type_attr]), arg_name, op_type_name)
            else:
                default = attr_defs.get(type_attr, {})
                preferred = None
                if default.get("has_default") and default.get("default") is not None:
                    preferred = dtypes.as_dtype(default["default"])
                t = _convert(value, None, arg_name, op_type_name, preferred=preferred)
                inferred[type_attr] = (t.dtype.base_dtype, arg_name)
            if type_attr and type_attr not in attrs:
                _check_allowed_type(op_type_name, arg_name, attr_defs.get(type_attr),
                                    t.dtype.base_dtype)
                attrs[type_attr] = t.dtype.base_dtype.as_datatype_enum
            inputs.append(t._as_endpoint())

        if g._container and "container" in attr_defs and "container" not in attrs:
            attrs["container"] = g._container
        attrs.update(internal)
        op = g._create_op_internal(op_type_name, inputs, attrs, scope[:-1])
    return _output_structure(op_type_name, op_def, op)


def python_name(name):
    """A parameter name that is not a Python keyword (TF appends "_")."""
    return name + "_" if keyword.iskeyword(name) else name
