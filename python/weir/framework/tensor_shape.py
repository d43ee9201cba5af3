"""Static shapes (TF1's tf.TensorShape / tf.Dimension): a shape of unknown
rank, or a list of dimensions each known (an int >= 0) or unknown (None).
Printing follows TF1: "(?, 3)", "<unknown>". `as_list()` gives ints and None.
"""
__all__ = ["TensorShape", "Dimension", "unknown_shape", "as_shape", "scalar", "dimension_value",
           "as_dimension"]


class Dimension:
    """One dimension: `.value` is an int >= 0, or None when unknown."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if value is None or isinstance(value, Dimension) and value._value is None:
            self._value = None
            return
        if isinstance(value, Dimension):
            value = value._value
        if isinstance(value, (str, bytes, float)) and not (isinstance(value, float)
                                                             and value.is_integer()):
            raise TypeError(f"Dimension value must be integer or None, got {value!r}")
        try:
            self._value = int(value.__index__()) if hasattr(value, "__index__") else int(value)
        except (TypeError, AttributeError):
            raise TypeError(f"Dimension value must be integer or None, got {value!r}") from None
        if self._value < 0:
            if self._value == -1:  # TF's "unknown" in shape protos and shape tensors
                self._value = None
            else:
                raise ValueError(f"Dimension {self._value} must be >= 0")

    @property
    def value(self):
        return self._value

    def __repr__(self):
        return f"Dimension({self._value})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return self._value == other._value

    def __ne__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return self._value != other._value

    def __hash__(self):
        return hash(self._value)

    def __bool__(self):
        return bool(self._value)

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other):
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return Dimension(self._value if self._value is not None else other._value)

    def _arith(self, other, fn):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other._value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return as_dimension(other)._arith(self, lambda a, b: a - b)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return as_dimension(other)._arith(self, lambda a, b: a // b)

    def __mod__(self, other):
        return self._arith(other, lambda a, b: a % b)

    def _compare(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other._value is None:
            return None
        return fn(self._value, other._value)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __reduce__(self):
        return Dimension, (self._value,)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dimension):
    """The int (or None) of a Dimension or a plain value."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


class TensorShape:
    """A possibly partial shape. `TensorShape(None)` has unknown rank."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif _is_shape_proto(dims):
            if dims.unknown_rank:
                self._dims = None
            else:
                self._dims = tuple(Dimension(None if d.size == -1 else d.size) for d in dims.dim)
        elif isinstance(dims, (str, bytes)):
            raise TypeError(f"A shape must be a list of dimensions or None, got {dims!r}")
        else:
            try:
                it = iter(dims)
            except TypeError:
                # A single dimension makes a rank-1 shape, as in TF.
                self._dims = (as_dimension(dims),)
            else:
                self._dims = tuple(as_dimension(d) for d in it)

    # --- queries ---------------------------------------------------------
    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    @property
    def rank(self):
        return self.ndims

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def is_fully_defined(self):
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d.value
        return n

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is not None:
            if isinstance(key, slice):
                return TensorShape(self._dims[key])
            return self._dims[key]
        if isinstance(key, slice):
            start, stop = key.start, key.stop
            if key.step not in (None, 1) or (start is not None and start < 0) \
                    or (stop is not None and stop < 0):
                return unknown_shape()
            if stop is None:
                return unknown_shape()
            return unknown_shape(rank=stop - (start or 0)) if stop >= (start or 0) else scalar()
        return Dimension(None)

    # --- combination -----------------------------------------------------
    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other):
        """The most specific shape compatible with both (ValueError if none)."""
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        try:
            self.assert_same_rank(other)
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def most_specific_compatible_shape(self, other):
        """The most specific shape that both shapes are compatible with."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape([a.value if a.value is not None and a.value == b.value else None
                            for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self._dims is not None and other._dims is not None \
                and len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_has_rank(self, rank):
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank):
        try:
            return self.merge_with(unknown_shape(rank=rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def as_proto(self):
        from weir.core import protos
        proto = protos.TensorShapeProto()
        if self._dims is None:
            proto.unknown_rank = True
        else:
            for d in self._dims:
                proto.dim.add(size=-1 if d.value is None else d.value)
        return proto

    def _as_c_shape(self):
        """The shape as _C takes it: None or a list of int|None."""
        return None if self._dims is None else [d.value for d in self._dims]

    # --- protocol --------------------------------------------------------
    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        # Unknown dims compare unequal (Dimension == gives None), as in TF1.
        return self._dims == other._dims

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(None if self._dims is None else tuple(d.value for d in self._dims))

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def __reduce__(self):
        return TensorShape, (self.dims if self._dims is None else [d.value for d in self._dims],)

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({[d.value for d in self._dims]})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def _is_shape_proto(value):
    return hasattr(value, "unknown_rank") and hasattr(value, "dim")


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None, ndims=None):
    if rank is None:
        rank = ndims
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


def scalar():
    return TensorShape([])
