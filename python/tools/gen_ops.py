"""Writes weir/ops/gen_ops.py and gen_ops.pyi: one Python function per op in
weir's registry (ops whose names start with "_" are internal and skipped).

    python3 gen_ops.py --extension build/py/python/weir/_C...so --out-dir <dir>

Loads the extension file directly (it must not import the weir package).
Each function is TF's snake_case name of the op; its parameters are the input
args, then the attrs that are not inferred from inputs (those without a
default first, in declaration order, then those with one, their defaults as
Python literals), then name=None; its body is one apply_op call. Output is
deterministic: ops in name order, no timestamps.
"""
import argparse
import importlib.machinery
import importlib.util
import keyword
import math
import os
import sys

# DataType enum -> weir.framework.dtypes attribute name.
DTYPE_NAMES = {
    1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string",
    8: "complex64", 9: "int64", 10: "bool", 11: "qint8", 12: "quint8", 13: "qint32",
    14: "bfloat16", 15: "qint16", 16: "quint16", 17: "uint16", 18: "complex128", 19: "float16",
    20: "resource", 21: "variant", 22: "uint32", 23: "uint64",
}


def load_extension(path):
    loader = importlib.machinery.ExtensionFileLoader("weir._C", path)
    spec = importlib.util.spec_from_file_location("weir._C", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def snake_case(op_name):
    """TF's function name of an op: "MatMul" -> "mat_mul", "Conv2D" ->
    "conv2d", "BiasAdd" -> "bias_add", "L2Loss" -> "l2_loss", "InTopKV2" ->
    "in_top_kv2", "LSTMBlockCell" -> "lstm_block_cell"."""
    out = []
    n = len(op_name)
    for i, c in enumerate(op_name):
        if c.isupper() and i > 0:
            prev = op_name[i - 1]
            nxt = op_name[i + 1] if i + 1 < n else ""
            if prev.islower() or ((prev.isupper() or prev.isdigit()) and nxt.islower()):
                out.append("_")
        out.append(c.lower())
    name = "".join(out)
    return name + "_" if keyword.iskeyword(name) else name


def param_name(name):
    return name + "_" if keyword.iskeyword(name) else name


def inferred_attrs(op_def):
    """Attrs set from the inputs: type attrs of inputs, list lengths, type lists."""
    names = set()
    for arg in op_def["inputs"]:
        for key in ("type_attr", "number_attr", "type_list_attr"):
            if arg[key]:
                names.add(arg[key])
    return names


def py_literal(value, attr_type):
    """The attr default as Python source text."""
    if value is None:
        return "None"
    if attr_type == "type":
        return f"_dtypes.{DTYPE_NAMES.get(int(value), 'float32')}" if int(value) in DTYPE_NAMES \
            else repr(int(value))
    if attr_type.startswith("list("):
        inner = attr_type[5:-1]
        return "[" + ", ".join(py_literal(v, inner) for v in value) + "]"
    if attr_type == "string":
        if isinstance(value, bytes):
            try:
                return repr(value.decode("utf-8"))
            except UnicodeDecodeError:
                return repr(value)
        return repr(value)
    if attr_type == "float":
        f = float(value)
        if math.isnan(f):
            return 'float("nan")'
        if math.isinf(f):
            return 'float("inf")' if f > 0 else 'float("-inf")'
        return repr(f)
    if attr_type == "bool":
        return repr(bool(value))
    if attr_type == "int":
        return repr(int(value))
    if attr_type == "shape":
        return repr(None if value is None else [None if d is None else int(d) for d in value])
    if attr_type == "tensor":
        return "None"  # the op's own default applies when None is passed
    if attr_type == "func":
        return repr(value)
    return repr(value)


def function_params(op_def):
    """[(python_name, op_arg_or_attr_name, default_source or None, kind, spec)]"""
    skip = inferred_attrs(op_def)
    params = []
    for arg in op_def["inputs"]:
        params.append((param_name(arg["name"]), arg["name"], None, "input", arg))
    required = [a for a in op_def["attrs"] if a["name"] not in skip and not a["has_default"]]
    optional = [a for a in op_def["attrs"] if a["name"] not in skip and a["has_default"]]
    for attr in required:
        params.append((param_name(attr["name"]), attr["name"], None, "attr", attr))
    for attr in optional:
        params.append((param_name(attr["name"]), attr["name"], py_literal(attr["default"],
                                                                          attr["type"]),
                       "attr", attr))
    return params


def _type_names(values):
    return ", ".join(f"`{DTYPE_NAMES.get(int(v), v)}`" for v in values)


def _input_doc(op_def, arg, attrs_by_name, first_use):
    if arg["type"]:
        type_text = f"of type `{DTYPE_NAMES.get(arg['type'], arg['type'])}`"
    elif arg["type_attr"]:
        attr = attrs_by_name.get(arg["type_attr"], {})
        if arg["type_attr"] in first_use and first_use[arg["type_attr"]] != arg["name"]:
            type_text = f"Must have the same type as `{first_use[arg['type_attr']]}`"
        elif attr.get("allowed_values"):
            type_text = f"Must be one of the following types: {_type_names(attr['allowed_values'])}"
        else:
            type_text = ""
    else:
        type_text = ""
    if arg["number_attr"]:
        lead = f"A list of `{arg['number_attr']}` `Tensor` objects with the same type"
        return f"{lead}{' ' + type_text if type_text.startswith('of') else ''}." + (
            f" {type_text}." if type_text and not type_text.startswith("of") else "")
    if arg["type_list_attr"]:
        return f"A list of `Tensor` objects (types given by `{arg['type_list_attr']}`)."
    if type_text.startswith("of"):
        return f"A `Tensor` {type_text}."
    return "A `Tensor`." + (f" {type_text}." if type_text else "")


_ATTR_TYPE_TEXT = {"type": "`weir.DType`", "int": "`int`", "float": "`float`", "bool": "`bool`",
                   "string": "`string`", "shape": "`weir.TensorShape` or list of `ints`",
                   "tensor": "`weir.TensorProto` or numpy array", "func": "function name"}


def _attr_doc(attr):
    kind = attr["type"]
    if kind.startswith("list("):
        text = f"list of {_ATTR_TYPE_TEXT.get(kind[5:-1], kind[5:-1])}s"
        article = "A"
    else:
        text = _ATTR_TYPE_TEXT.get(kind, kind)
        article = "An" if text.strip("`")[0] in "aeiou" else "A"
    if attr["has_default"]:
        shown = py_literal(attr["default"], kind).replace("_dtypes.", "weir.")
        s = f"An optional {text}. Defaults to `{shown}`."
    else:
        s = f"{article} {text}."
    if attr.get("allowed_values"):
        if kind in ("type", "list(type)"):
            s += f" From: {_type_names(attr['allowed_values'])}."
        else:
            s += " From: " + ", ".join(
                repr(v.decode() if isinstance(v, bytes) else v) for v in attr["allowed_values"]) + "."
    if attr.get("has_minimum"):
        s += f" Minimum {'length ' if kind.startswith('list(') else ''}{attr['minimum']}."
    return s


def _output_doc(op_def, arg):
    if arg["type"]:
        t = f"of type `{DTYPE_NAMES.get(arg['type'], arg['type'])}`"
    elif arg["type_attr"]:
        same = next((a["name"] for a in op_def["inputs"] if a["type_attr"] == arg["type_attr"]),
                    None)
        t = f"Has the same type as `{same}`" if same else f"Of type `{arg['type_attr']}`"
    else:
        t = ""
    if arg["number_attr"]:
        lead = f"A list of `{arg['number_attr']}` `Tensor` objects"
        if t.startswith("Has the same type as "):
            return f"{lead} with the same type as {t[len('Has the same type as '):]}."
        return lead + (f" {t[0].lower() + t[1:]}." if t else ".")
    if arg["type_list_attr"]:
        return f"A list of `Tensor` objects of types `{arg['type_list_attr']}`."
    return "A `Tensor`" + (f" {t}." if t.startswith("of") else f". {t}." if t else ".")


def _wrap(text, indent):
    lines = []
    for paragraph in text.strip().split("\n"):
        lines.append((indent + paragraph).rstrip())
    return "\n".join(lines)


def docstring(op_def, params):
    attrs_by_name = {a["name"]: a for a in op_def["attrs"]}
    first_use = {}
    for arg in op_def["inputs"]:
        if arg["type_attr"]:
            first_use.setdefault(arg["type_attr"], arg["name"])
    parts = [op_def["summary"].strip() or f"The {op_def['name']} op."]
    if op_def["description"].strip():
        parts.append(op_def["description"].strip())
    args = ["Args:"]
    for pname, real, _default, kind, spec in params:
        text = _input_doc(op_def, spec, attrs_by_name, first_use) if kind == "input" \
            else _attr_doc(spec)
        args.append(f"  {pname}: {text}")
    args.append("  name: A name for the operation (optional).")
    parts.append("\n".join(args))
    outs = op_def["outputs"]
    if not outs:
        parts.append("Returns:\n  The created Operation.")
    elif len(outs) == 1:
        parts.append("Returns:\n  " + _output_doc(op_def, outs[0]))
    else:
        lines = ["Returns:", "  A tuple of `Tensor` objects (" + ", ".join(o["name"] for o in outs)
                 + ")."]
        for o in outs:
            lines.append(f"    {o['name']}: {_output_doc(op_def, o)}")
        parts.append("\n".join(lines))
    text = "\n\n".join(parts)
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def generate_py(op_defs):
    out = ['"""Op functions generated from weir\'s op registry by python/tools/gen_ops.py',
           "(do not edit). One function per op, TF's snake_case names; each calls",
           'weir.framework.op_def_library.apply_op."""',
           "from weir.framework import dtypes as _dtypes",
           "from weir.framework.op_def_library import apply_op as _apply_op",
           ""]
    names = []
    mapping = []
    seen = {}
    for op_def in op_defs:
        op_name = op_def["name"]
        fn = snake_case(op_name)
        if fn in seen:
            raise SystemExit(f"gen_ops: ops {seen[fn]} and {op_name} both map to {fn}")
        seen[fn] = op_name
        params = function_params(op_def)
        pnames = [p[0] for p in params]
        if "name" in pnames:
            raise SystemExit(f"gen_ops: op {op_name} has an arg or attr called 'name'")
        sig = []
        for pname, _real, default, _kind, _spec in params:
            sig.append(pname if default is None else f"{pname}={default}")
        sig.append("name=None")
        plain = [f"{real}={pname}" for pname, real, *_ in params if pname == real]
        special = [f"{real!r}: {pname}" for pname, real, *_ in params if pname != real]
        call = [repr(op_name), "name=name"] + plain
        if special:
            call.append("**{" + ", ".join(special) + "}")
        out.append("")
        out.append(f"def {fn}({', '.join(sig)}):")
        out.append('    """' + _wrap(docstring(op_def, params), "    ").lstrip())
        out.append('    """')
        out.append(f"    return _apply_op({', '.join(call)})")
        out.append("")
        names.append(fn)
        mapping.append((op_name, fn))
    out.append("")
    out.append("# Op name -> function (weir.raw_ops is built from it).")
    out.append("_OP_FUNCTIONS = {")
    for op_name, fn in mapping:
        out.append(f"    {op_name!r}: {fn},")
    out.append("}")
    out.append("")
    out.append("__all__ = [")
    for n in names:
        out.append(f"    {n!r},")
    out.append("]")
    out.append("")
    return "\n".join(out)


_PYI_ATTR_TYPES = {"type": "_DTypeLike", "int": "int", "float": "float", "bool": "bool",
                   "string": "str | bytes", "shape": "_ShapeLike", "tensor": "Any",
                   "func": "str"}


def _pyi_attr_type(kind):
    if kind.startswith("list("):
        return f"Sequence[{_pyi_attr_type(kind[5:-1])}]"
    return _PYI_ATTR_TYPES.get(kind, "Any")


def _pyi_output_type(arg):
    return "list[Tensor]" if arg["number_attr"] or arg["type_list_attr"] else "Tensor"


def generate_pyi(op_defs):
    out = ['"""Type stubs of weir.ops.gen_ops (generated by python/tools/gen_ops.py)."""',
           "from typing import Any, NamedTuple, Sequence",
           "",
           "from weir.framework.dtypes import DType",
           "from weir.framework.ops import Operation, Tensor",
           "from weir.framework.tensor_shape import TensorShape",
           "",
           "_TensorLike = Tensor | Any",
           "_DTypeLike = DType | int | str | type",
           "_ShapeLike = TensorShape | Sequence[int | None] | None",
           ""]
    names = []
    for op_def in op_defs:
        fn = snake_case(op_def["name"])
        params = function_params(op_def)
        sig = []
        for pname, _real, default, kind, spec in params:
            if kind == "input":
                t = "Sequence[_TensorLike]" if spec["number_attr"] or spec["type_list_attr"] \
                    else "_TensorLike"
                sig.append(f"{pname}: {t}")
            else:
                t = _pyi_attr_type(spec["type"])
                if default is None and not spec["has_default"]:
                    sig.append(f"{pname}: {t}")
                else:
                    sig.append(f"{pname}: {t} | None = ...")
        sig.append("name: str | None = ...")
        outs = op_def["outputs"]
        if not outs:
            ret = "Operation"
        elif len(outs) == 1:
            ret = _pyi_output_type(outs[0])
        else:
            ret = f"_{op_def['name']}Output"
            out.append(f"class {ret}(NamedTuple):")
            for i, o in enumerate(outs):
                field = o["name"] if o["name"].isidentifier() and not keyword.iskeyword(
                    o["name"]) and not o["name"].startswith("_") else f"_{i}"
                out.append(f"    {field}: {_pyi_output_type(o)}")
            out.append("")
        out.append(f"def {fn}({', '.join(sig)}) -> {ret}: ...")
        names.append(fn)
    out.append("")
    out.append("_OP_FUNCTIONS: dict[str, Any]")
    out.append("__all__: list[str]")
    out.append("")
    return "\n".join(out)


def public_op_defs(module):
    return sorted((d for d in module.op_defs() if not d["name"].startswith("_")),
                  key=lambda d: d["name"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extension", required=True, help="path of the built weir._C extension")
    parser.add_argument("--out-dir", required=True, help="where gen_ops.py and gen_ops.pyi go")
    args = parser.parse_args(argv)
    module = load_extension(args.extension)
    op_defs = public_op_defs(module)
    os.makedirs(args.out_dir, exist_ok=True)
    for filename, text in (("gen_ops.py", generate_py(op_defs)),
                           ("gen_ops.pyi", generate_pyi(op_defs))):
        path = os.path.join(args.out_dir, filename)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)  # readers never see half a file
    return 0


if __name__ == "__main__":
    sys.exit(main())
