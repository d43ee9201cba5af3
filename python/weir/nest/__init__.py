"""weir.nest: tf.nest (tf1api) — nested structures of lists, tuples,
namedtuples and dicts (a Mapping's values in sorted key order); everything
else (None, strings, numpy arrays, Tensors, sets) is a leaf."""
import collections as _collections
import collections.abc as _abc

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


def is_nested(seq):
    """True for a list, tuple (namedtuple) or Mapping."""
    return isinstance(seq, (list, tuple, _abc.Mapping))


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError as e:
        raise TypeError("nest only supports dicts with sortable keys.") from e


def _children(seq):
    if isinstance(seq, _abc.Mapping):
        return [seq[k] for k in _sorted_keys(seq)]
    return list(seq)


def flatten(structure, expand_composites=False):
    """The leaves of `structure`, depth first (a leaf gives [leaf])."""
    del expand_composites
    if not is_nested(structure):
        return [structure]
    out = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if is_nested(item):
            stack.extend(reversed(_children(item)))
        else:
            out.append(item)
    return out


def _rebuild(instance, values):
    if isinstance(instance, _abc.Mapping):
        by_key = dict(zip(_sorted_keys(instance), values))
        if isinstance(instance, _collections.defaultdict):
            result = type(instance)(instance.default_factory)
            for k in instance:
                result[k] = by_key[k]
            return result
        return type(instance)((k, by_key[k]) for k in instance)
    if isinstance(instance, tuple) and hasattr(instance, "_fields"):
        return type(instance)(*values)
    if isinstance(instance, tuple):
        return tuple(values)
    return list(values) if type(instance) is list else type(instance)(values)


def _pack(structure, flat, index):
    if not is_nested(structure):
        return flat[index], index + 1
    values = []
    for child in _children(structure):
        value, index = _pack(child, flat, index)
        values.append(value)
    return _rebuild(structure, values), index


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`flat_sequence` (a list) arranged as `structure`."""
    del expand_composites
    if not is_nested(flat_sequence):
        raise TypeError("Attempted to pack value:\n  %r\ninto a structure, but found incompatible "
                        "type `%s` instead." % (flat_sequence, type(flat_sequence)))
    flat = list(flat_sequence)
    n = len(flatten(structure))
    if len(flat) != n:
        raise ValueError("Could not pack sequence. Structure had %d atoms, but flat_sequence had "
                         "%d items.  Structure: %r, flat_sequence: %r."
                         % (n, len(flat), structure, flat_sequence))
    return _pack(structure, flat, 0)[0]


def _same_type(a, b):
    if isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping):
        return True
    if hasattr(a, "_fields") or hasattr(b, "_fields"):
        return type(a) is type(b)
    return type(a) is type(b)


def _assert_same(a, b, check_types, path):
    if is_nested(a) != is_nested(b):
        raise ValueError("The two structures don't have the same nested structure.\n\nFirst "
                         "structure: %r\n\nSecond structure: %r\n\nAt %s one is a leaf and the "
                         "other is not." % (a, b, path or "the top"))
    if not is_nested(a):
        return
    if check_types and not _same_type(a, b):
        raise TypeError("The two structures don't have the same sequence type. First structure "
                        "has type %s, while second structure has type %s (at %s)."
                        % (type(a).__name__, type(b).__name__, path or "the top"))
    if isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping):
        if _sorted_keys(a) != _sorted_keys(b):
            raise ValueError("The two dictionaries don't have the same set of keys. First "
                             "structure has keys %s, while second structure has keys %s."
                             % (_sorted_keys(a), _sorted_keys(b)))
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError("The two structures don't have the same nested structure: %d elements "
                         "vs %d (at %s).\n\nFirst structure: %r\n\nSecond structure: %r"
                         % (len(ca), len(cb), path or "the top", a, b))
    for k, (x, y) in enumerate(zip(ca, cb)):
        _assert_same(x, y, check_types, "%s[%d]" % (path, k))


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError unless the two have the same nesting and lengths (and
    dict keys); TypeError for different sequence types when check_types."""
    del expand_composites
    _assert_same(nest1, nest2, check_types, "")


def map_structure(func, *structure, **kwargs):
    """func applied to the leaves of the structures (same structure), packed
    as the first."""
    if not callable(func):
        raise TypeError("func must be callable, got: %s" % func)
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError("Only valid keyword arguments are `check_types` and "
                         "`expand_composites`, not: `%s`" % "`, `".join(kwargs))
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
