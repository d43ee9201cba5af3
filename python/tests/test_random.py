"""weir.random and the initializers: moments of the draws, ranges, TF1's
graph-level + op-level seed rules (deterministic graphs, same values across
sessions, fresh values per run), and initializer statistics (glorot limits,
variance scaling fans)."""
import math

import numpy as np
import pytest

import weir as wr


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


N = 200_000


def test_normal_and_truncated_moments():
    normal = wr.random_normal([N], mean=2.0, stddev=3.0, seed=1)
    truncated = wr.truncated_normal([N], mean=-1.0, stddev=0.5, seed=2)
    a, b = run([normal, truncated])
    assert normal.shape.as_list() == [N] and a.dtype == np.float32
    assert abs(a.mean() - 2.0) < 0.03 and abs(a.std() - 3.0) < 0.03
    assert abs(b.mean() + 1.0) < 0.01
    # N(0,1) truncated to [-2, 2] has stddev 0.8796
    assert abs(b.std() - 0.5 * 0.87962566) < 0.005
    assert b.min() >= -2.0 and b.max() <= 0.0


def test_uniform_float_and_int():
    floats = wr.random_uniform([N], minval=-2.0, maxval=3.0, seed=3)
    unit = wr.random_uniform([4, 5], dtype=wr.float64, seed=4)
    ints = wr.random_uniform([N], minval=-3, maxval=4, dtype=wr.int32, seed=5)
    big = wr.random_uniform([1000], minval=2**40, maxval=2**40 + 10, dtype=wr.int64, seed=6)
    a, u, i, b = run([floats, unit, ints, big])
    assert a.min() >= -2.0 and a.max() < 3.0
    assert abs(a.mean() - 0.5) < 0.02 and abs(a.var() - 25 / 12) < 0.03
    assert u.dtype == np.float64 and u.shape == (4, 5) and 0 <= u.min() and u.max() < 1
    assert i.dtype == np.int32 and set(np.unique(i)) == set(range(-3, 4))
    counts = np.bincount(i + 3) / N
    assert np.all(np.abs(counts - 1 / 7) < 0.005)
    assert b.dtype == np.int64 and b.min() >= 2**40 and b.max() < 2**40 + 10
    with pytest.raises(ValueError, match="maxval"):
        wr.random_uniform([3], dtype=wr.int32)


def test_shape_arguments():
    dims = wr.placeholder(wr.int32, [2])
    fed = wr.random_normal(dims, seed=1)
    assert fed.shape.as_list() == [None, None]
    assert run(fed, {dims: [3, 2]}).shape == (3, 2)
    assert wr.random_normal(wr.TensorShape([2, 3])).shape.as_list() == [2, 3]
    assert run(wr.random_uniform((), seed=2)).shape == ()
    with pytest.raises(ValueError):
        wr.random_normal([2, None])
    with pytest.raises(ValueError):
        wr.random_normal([2], dtype=wr.int32)


def test_shuffle_and_multinomial():
    values = np.arange(100).reshape(50, 2)
    shuffled = run(wr.random_shuffle(values, seed=7))
    assert sorted(shuffled[:, 0].tolist()) == values[:, 0].tolist()
    np.testing.assert_array_equal(shuffled[:, 1], shuffled[:, 0] + 1)  # rows move whole
    assert not np.array_equal(shuffled, values)
    logits = np.log(np.array([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]]) + 1e-30)
    samples = wr.multinomial(logits, 20000, seed=8)
    drawn = run(samples)
    assert samples.dtype == wr.int64 and drawn.shape == (2, 20000)
    freq = np.bincount(drawn[0], minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.015)
    assert np.all(drawn[1] == 0)
    cat = wr.random.categorical(logits, 5, dtype=wr.int32, seed=9)
    assert cat.dtype == wr.int32 and run(cat).shape == (2, 5)


def test_random_crop():
    value = np.arange(60).reshape(6, 10)
    crop = run(wr.random_crop(value, [3, 4], seed=3))
    r, c = divmod(int(crop[0, 0]), 10)
    np.testing.assert_array_equal(crop, value[r:r + 3, c:c + 4])


def test_op_seed_gives_same_values_across_sessions_and_new_values_per_run():
    x = wr.random_normal([5], seed=42)
    with wr.Session() as s1:
        first, next_run = s1.run(x), s1.run(x)
    with wr.Session() as s2:
        again = s2.run(x)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, next_run)


def test_graph_seed_makes_the_whole_graph_deterministic():
    def build():
        g = wr.Graph()
        with g.as_default():
            wr.set_random_seed(1234)
            a = wr.random_uniform([4])
            b = wr.random_uniform([4])  # a different op seed than a
        with wr.Session(graph=g) as sess:
            return sess.run([a, b])
    a1, b1 = build()
    a2, b2 = build()
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(b1, b2)
    assert not np.array_equal(a1, b1)


def test_unseeded_ops_differ_between_sessions():
    x = wr.random_uniform([8])
    with wr.Session() as s1:
        a = s1.run(x)
    with wr.Session() as s2:
        b = s2.run(x)
    assert not np.array_equal(a, b)


def test_get_seed_rules():
    assert wr.get_seed(None) == (None, None)
    assert wr.get_seed(5) == (87654321, 5)
    wr.set_random_seed(0)
    assert wr.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "nondeterministic"
    wr.set_random_seed(3)
    seed1, seed2 = wr.get_seed(None)
    assert seed1 == 3
    wr.constant(1.0)
    assert wr.get_seed(None) == (3, seed2 + 1)  # the op counter moved on
    assert wr.random.set_seed is wr.set_random_seed
    wr.random_normal([2], seed=9, name="seeded")
    op = wr.get_default_graph().get_operation_by_name("seeded/RandomStandardNormal")
    assert op.get_attr("seed") == 3 and op.get_attr("seed2") == 9


def test_random_namespace_and_names():
    assert wr.random.normal is wr.random_normal
    assert wr.random.uniform is wr.random_uniform
    assert wr.random.shuffle is wr.random_shuffle
    t = wr.random_normal([2], name="noise")
    assert t.op.name == "noise"
    assert wr.random_uniform([2]).op.name == "random_uniform"


# --- initializers ---

def _draw(init, shape, dtype=wr.float32):
    return run(init(shape, dtype))


def test_constant_initializers():
    np.testing.assert_array_equal(_draw(wr.zeros_initializer(), [2, 3]), np.zeros((2, 3)))
    ones = wr.ones_initializer(dtype=wr.int64)([4])
    assert ones.dtype == wr.int64
    np.testing.assert_array_equal(run(ones), [1, 1, 1, 1])
    np.testing.assert_array_equal(_draw(wr.constant_initializer(2.5), [2, 2]), np.full((2, 2), 2.5))
    np.testing.assert_array_equal(_draw(wr.constant_initializer([1, 2, 3, 4]), [2, 2]),
                                  [[1, 2], [3, 4]])
    # TF1 extends a short list with its last value
    np.testing.assert_array_equal(_draw(wr.constant_initializer([1, 2]), [4]), [1, 2, 2, 2])
    with pytest.raises(ValueError):
        wr.constant_initializer([1, 2, 3])([2])
    with pytest.raises(TypeError):
        wr.constant_initializer([1, 2], verify_shape=True)([4])
    np.testing.assert_array_equal(_draw(wr.initializers.identity(2.0), [2, 3]),
                                  [[2, 0, 0], [0, 2, 0]])


def test_random_initializers_statistics():
    normal = _draw(wr.random_normal_initializer(1.0, 0.5, seed=1), [N])
    assert abs(normal.mean() - 1.0) < 0.01 and abs(normal.std() - 0.5) < 0.01
    uniform = _draw(wr.random_uniform_initializer(-0.1, 0.1, seed=2), [N])
    assert uniform.min() >= -0.1 and uniform.max() < 0.1 and abs(uniform.mean()) < 0.002
    trunc = _draw(wr.truncated_normal_initializer(0.0, 2.0, seed=3), [N])
    assert np.abs(trunc).max() <= 4.0 and abs(trunc.std() - 2 * 0.8796) < 0.02


def test_glorot_and_variance_scaling():
    fan_in, fan_out = 300, 200
    limit = math.sqrt(6 / (fan_in + fan_out))
    glorot = _draw(wr.glorot_uniform_initializer(seed=4), [fan_in, fan_out])
    assert glorot.min() >= -limit and glorot.max() <= limit
    assert glorot.max() > 0.98 * limit and glorot.min() < -0.98 * limit
    assert abs(glorot.var() - limit**2 / 3) < 0.02 * limit**2
    gn = _draw(wr.glorot_normal_initializer(seed=5), [fan_in, fan_out])
    assert abs(gn.std() - math.sqrt(2 / (fan_in + fan_out))) < 0.002
    # conv filter [3, 3, 16, 32]: fan_in = 9 * 16
    he = _draw(wr.initializers.he_normal(seed=6), [3, 3, 16, 32])
    assert abs(he.std() - math.sqrt(2 / 144)) < 0.004
    hu = _draw(wr.initializers.he_uniform(seed=7), [3, 3, 16, 32])
    assert np.abs(hu).max() <= math.sqrt(6 / 144)
    lu = _draw(wr.initializers.lecun_uniform(seed=8), [400, 10])
    assert np.abs(lu).max() <= math.sqrt(3 / 400) and np.abs(lu).max() > 0.95 * math.sqrt(3 / 400)
    fan_out_scaled = _draw(wr.variance_scaling_initializer(3.0, "fan_out", "untruncated_normal",
                                                           seed=9), [50, 400])
    assert abs(fan_out_scaled.std() - math.sqrt(3.0 / 400)) < 0.002
    with pytest.raises(ValueError):
        wr.variance_scaling_initializer(mode="fan_middle")
    with pytest.raises(ValueError):
        wr.glorot_uniform_initializer()([3, 3], wr.int32)


def test_orthogonal_initializer():
    tall = _draw(wr.orthogonal_initializer(seed=1), [6, 4])
    np.testing.assert_allclose(tall.T @ tall, np.eye(4), atol=1e-5)
    wide = _draw(wr.orthogonal_initializer(gain=2.0, seed=2), [3, 5])
    np.testing.assert_allclose(wide @ wide.T, 4 * np.eye(3), atol=1e-4)
    with pytest.raises(ValueError):
        wr.orthogonal_initializer()([3])


def test_initializer_seed_and_config():
    init = wr.random_normal_initializer(seed=11)
    a = _draw(init, [5])
    b = _draw(init, [5])
    np.testing.assert_array_equal(a, b)  # same op seed in two graphs' nodes
    config = wr.initializers.variance_scaling(2.0, "fan_avg", "uniform", seed=3).get_config()
    rebuilt = wr.initializers.variance_scaling.from_config(config)
    assert rebuilt.scale == 2.0 and rebuilt.mode == "fan_avg" and rebuilt.seed == 3
    assert wr.initializers.zeros is wr.zeros_initializer
