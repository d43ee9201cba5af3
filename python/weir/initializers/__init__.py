"""weir.initializers: tf.compat.v1.initializers — the initializer classes under
their short names (zeros, ones, constant, random_normal, ..., glorot_uniform,
he_normal, ...) and the variable-initializer functions (global_variables,
local_variables, variables)."""
from weir.ops.init_ops import (  # noqa: F401
    Constant, GlorotNormal, GlorotUniform, Identity, Initializer, Ones, Orthogonal, RandomNormal,
    RandomUniform, TruncatedNormal, UniformUnitScaling, VarianceScaling, Zeros, he_normal,
    he_uniform, lecun_normal, lecun_uniform)

zeros = Zeros
ones = Ones
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal
orthogonal = Orthogonal
identity = Identity
uniform_unit_scaling = UniformUnitScaling


def global_variables():
    """tf.initializers.global_variables: global_variables_initializer()."""
    from weir.ops import variables
    return variables.global_variables_initializer()


def local_variables():
    """tf.initializers.local_variables: local_variables_initializer()."""
    from weir.ops import variables
    return variables.local_variables_initializer()


def variables(var_list, name="init"):
    """tf.initializers.variables: variables_initializer(var_list, name)."""
    from weir.ops import variables as variables_module
    return variables_module.variables_initializer(var_list, name=name)


__all__ = [
    "Constant", "GlorotNormal", "GlorotUniform", "Identity", "Initializer", "Ones", "Orthogonal",
    "RandomNormal", "RandomUniform", "TruncatedNormal", "UniformUnitScaling", "VarianceScaling",
    "Zeros", "constant", "global_variables", "glorot_normal", "glorot_uniform", "he_normal",
    "he_uniform", "identity", "lecun_normal", "lecun_uniform", "local_variables", "ones",
    "orthogonal", "random_normal", "random_uniform", "truncated_normal", "uniform_unit_scaling",
    "variables", "variance_scaling", "zeros",
]


def tables_initializer(name="init_all_tables"):
    """tf.initializers.tables_initializer: weir's tables_initializer."""
    import weir
    return weir.tables_initializer(name=name)


__all__ = __all__ + ["tables_initializer"]
