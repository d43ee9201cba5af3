"""TensorFlow 2.21's functional control flow, run by Weir unchanged: the
graphs of `tf.function`s (`get_concrete_function(...).graph.as_graph_def()`)
hold StatelessIf / If / StatelessCase / StatelessWhile / While nodes and a
library with their branch and body functions. Weir imports each graph,
lowers the functional nodes to Switch/Merge and loop frames when it compiles
a step, and must give TensorFlow's values for several inputs each: tf.cond,
tf.while_loop (data-dependent trip counts, maximum_iterations, nested
loops, int and float loop variables), tf.switch_case (indexes in and out of
range) and Python `if`/`while` on tensors (autograph). DT_VARIANT values
too: a tf.TensorArray in a loop (TensorList ops), and the gradients
TensorFlow 2 exports from a GradientTape in a tf.function over a
tf.while_loop (the forward values saved in TensorLists) and over a tf.cond
(intermediates passed through Optionals), including nested loops."""
import numpy as np
import pytest

import weir as wr

CASES = '''
cases = {}

def concrete(name, fn, specs, inputs):
    """Saves fn's graph and its outputs on each of `inputs` (tuples)."""
    cf = tf.function(fn).get_concrete_function(*specs)
    save_graph(cf.graph.as_graph_def(), name)
    arrays = {"feeds": np.array([t.name for t in cf.inputs]),
              "fetches": np.array([t.name for t in cf.outputs]),
              "ops": np.array(sorted(set(n.op for n in cf.graph.as_graph_def().node)))}
    for k, args in enumerate(inputs):
        outs = cf(*[tf.constant(a) for a in args])
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        for i, a in enumerate(args):
            arrays[f"in_{k}_{i}"] = np.asarray(a)
        for j, o in enumerate(tf.nest.flatten(outs)):
            arrays[f"out_{k}_{j}"] = o.numpy()
    arrays["num_inputs"] = np.int32(len(inputs))
    save_arrays(name, **arrays)

f32 = lambda shape=(): tf.TensorSpec(shape, tf.float32)
i32 = lambda shape=(): tf.TensorSpec(shape, tf.int32)

# tf.cond on a data-dependent predicate, several outputs of two dtypes.
def cond(x):
    return tf.cond(tf.reduce_sum(x) > 0,
                   lambda: (x * 2.0, tf.constant(1)),
                   lambda: (-x, tf.constant(-1)))
concrete("cond", cond, [f32([3])],
         [(np.float32([1, 2, -1]),), (np.float32([-5, 1, 1]),)])

# tf.while_loop with a trip count from the data (0, 1, many).
def while_loop(n, x):
    i0 = tf.constant(0)
    _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 1.5 + 1.0), [i0, x])
    return acc
concrete("while", while_loop, [i32(), f32([2])],
         [(np.int32(0), np.float32([1, -1])), (np.int32(1), np.float32([1, -1])),
          (np.int32(7), np.float32([0.5, 2]))])

# maximum_iterations stops a loop whose condition still holds.
def bounded(n, limit):
    r = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i),
                      [tf.constant(0), tf.constant(0)], maximum_iterations=limit)
    return r[0], r[1]
concrete("bounded", bounded, [i32(), i32()],
         [(np.int32(10), np.int32(3)), (np.int32(2), np.int32(5)), (np.int32(4), np.int32(0))])

# Nested loops over ints, and a float loop inside.
def nested(n, m):
    def outer_body(i, total):
        def inner_body(j, t):
            return j + 1, t + i * j
        _, t = tf.while_loop(lambda j, t: j < m, inner_body, [tf.constant(0), total])
        return i + 1, t
    _, total = tf.while_loop(lambda i, t: i < n, outer_body, [tf.constant(0), tf.constant(0)])
    return total
concrete("nested", nested, [i32(), i32()],
         [(np.int32(0), np.int32(3)), (np.int32(3), np.int32(4)), (np.int32(5), np.int32(1))])

# tf.switch_case: an index out of range runs the last branch (the default).
def switch(k, x):
    return tf.switch_case(k, [lambda: x + 1.0, lambda: x * x, lambda: tf.sin(x)])
concrete("switch_case", switch, [i32(), f32([2])],
         [(np.int32(k), np.float32([0.5, -2])) for k in (0, 1, 2, 3, -1)])

# Autograph: Python if / while on tensors, a cond inside a loop.
def collatz_steps(n):
    steps = tf.constant(0)
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps
concrete("autograph", collatz_steps, [i32()],
         [(np.int32(v),) for v in (1, 2, 6, 27)])

def clip_loop(x, n):
    for _ in tf.range(n):
        if tf.reduce_max(x) > 4.0:
            x = x / 2.0
        else:
            x = x * 3.0
    return x
concrete("autograph_float", clip_loop, [f32([3]), i32()],
         [(np.float32([1, 2, 0.5]), np.int32(0)), (np.float32([1, 2, 0.5]), np.int32(5))])

# A TensorArray in a loop: TensorList ops on DT_VARIANT tensors.
def tensor_array(n):
    ta = tf.TensorArray(tf.float32, size=n)
    for i in tf.range(n):
        ta = ta.write(i, tf.cast(i, tf.float32))
    return ta.stack()
concrete("tensor_array", tensor_array, [i32()], [(np.int32(3),), (np.int32(1),)])

# A dynamically sized TensorArray written in a tf.while_loop, rows of a
# matrix, stacked; read back inside the loop too.
def tensor_array_dynamic(x, n):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    def body(i, acc, ta):
        acc = tf.sin(acc) * 2.0 + tf.cast(i, tf.float32)
        ta = ta.write(i, acc)
        return i + 1, acc + ta.read(i) * 0.5, ta
    _, last, ta = tf.while_loop(lambda i, a, t: i < n, body, [tf.constant(0), x, ta])
    return ta.stack(), last, ta.size()
concrete("tensor_array_dynamic", tensor_array_dynamic, [f32([3]), i32()],
         [(np.float32([0.5, -1, 2]), np.int32(4)), (np.float32([1, 2, 3]), np.int32(1))])

# A GradientTape over a while loop with a data-dependent trip count: the
# gradient loop pops the forward values the forward loop pushed.
def while_gradient(x, n):
    with tf.GradientTape() as tape:
        tape.watch(x)
        _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, tf.sin(y) * x + y * y * 0.1),
                             [tf.constant(0), x])
        loss = tf.reduce_sum(y * y)
    return loss, tape.gradient(loss, x)
concrete("while_gradient", while_gradient, [f32([3]), i32()],
         [(np.float32([0.3, -0.7, 1.1]), np.int32(k)) for k in (0, 1, 5)])

# A GradientTape over a tf.cond: the gradient branch reads the taken branch's
# intermediates from Optionals.
def cond_gradient(x, p):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cond(p, lambda: tf.sin(x) * tf.exp(x), lambda: tf.tanh(x) * x * x)
        loss = tf.reduce_sum(y)
    return loss, tape.gradient(loss, x)
concrete("cond_gradient", cond_gradient, [f32([3]), tf.TensorSpec([], tf.bool)],
         [(np.float32([0.3, -0.7, 1.1]), np.bool_(True)),
          (np.float32([0.3, -0.7, 1.1]), np.bool_(False))])

# The gradient of nested while loops.
def nested_gradient(x, n, m):
    with tf.GradientTape() as tape:
        tape.watch(x)
        def outer(i, y):
            _, y = tf.while_loop(lambda j, z: j < m, lambda j, z: (j + 1, tf.cos(z) * x), [0, y])
            return i + 1, y
        _, y = tf.while_loop(lambda i, y: i < n, outer, [tf.constant(0), x])
        loss = tf.reduce_sum(y)
    return loss, tape.gradient(loss, x)
concrete("nested_gradient", nested_gradient, [f32([2]), i32(), i32()],
         [(np.float32([0.4, -0.2]), np.int32(2), np.int32(3)),
          (np.float32([0.4, -0.2]), np.int32(0), np.int32(3))])

# tf.map_fn and its gradient (TensorListFromTensor / GetItem / SetItem).
def map_gradient(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.map_fn(lambda r: tf.exp(r) * r, x))
    return y, tape.gradient(y, x)
concrete("map_gradient", map_gradient, [f32([3, 2])],
         [(np.float32([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]),)])

# A TensorArray unstacked, read and written in a loop, under a GradientTape.
def tensor_array_gradient(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        ta = tf.TensorArray(tf.float32, size=3).unstack(x)
        def body(i, acc, out):
            return i + 1, acc + 1.0, out.write(i, tf.sin(ta.read(i) * acc))
        _, _, out = tf.while_loop(lambda i, a, o: i < 3, body,
                                  [0, tf.constant(1.0), tf.TensorArray(tf.float32, size=3)])
        loss = tf.reduce_sum(out.stack())
    return loss, tape.gradient(loss, x)
concrete("tensor_array_gradient", tensor_array_gradient, [f32([3, 2])],
         [(np.float32([[1, 2], [3, 4], [5, 6]]),)])

# A cond inside a loop, differentiated: Optionals inside TensorLists' loop.
def cond_in_loop_gradient(x, n):
    with tf.GradientTape() as tape:
        tape.watch(x)
        def body(i, y):
            return i + 1, tf.cond(tf.reduce_sum(y) > 0, lambda: tf.sin(y) * x, lambda: y * y)
        _, y = tf.while_loop(lambda i, y: i < n, body, [0, x])
        loss = tf.reduce_sum(y)
    return loss, tape.gradient(loss, x)
concrete("cond_in_loop_gradient", cond_in_loop_gradient, [f32([2]), i32()],
         [(np.float32([0.5, -0.3]), np.int32(3)), (np.float32([-0.5, 0.1]), np.int32(2))])

# An int32 TensorArray with a known element shape, concatenated and gathered.
def int_tensor_array(n):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[2])
    for i in tf.range(n):
        ta = ta.write(i, tf.stack([i, i * i]))
    return ta.concat(), ta.gather([0, n - 1])
concrete("int_tensor_array", int_tensor_array, [i32()], [(np.int32(4),), (np.int32(1),)])
'''


@pytest.fixture(scope="module")
def corpus(run_tf):
    return run_tf(CASES, "functional_control_flow")


def import_graph(path):
    graph = wr.Graph()
    with graph.as_default():
        wr.import_graph_def(path.read_bytes(), name="")
    return graph


def check_case(corpus, name, expected_ops, tolerance=1e-6):
    data = np.load(corpus / f"{name}.npz")
    ops = set(str(op) for op in data["ops"])
    assert expected_ops <= ops, ops
    graph = import_graph(corpus / f"{name}.pb")
    feeds = [str(f) for f in data["feeds"]]
    fetches = [str(f) for f in data["fetches"]]
    with wr.Session(graph=graph) as sess:
        for k in range(int(data["num_inputs"])):
            feed = {f: data[f"in_{k}_{i}"] for i, f in enumerate(feeds)}
            got = sess.run(fetches, feed)
            for j, value in enumerate(got):
                expected = data[f"out_{k}_{j}"]
                where = f"{name} output {j} on {[data[f'in_{k}_{i}'] for i in range(len(feeds))]}"
                assert np.asarray(value).dtype == expected.dtype, where
                np.testing.assert_allclose(value, expected, rtol=tolerance, atol=tolerance,
                                           err_msg=where)


def test_tf_cond(corpus):
    check_case(corpus, "cond", {"StatelessIf"})


def test_tf_while_loop(corpus):
    check_case(corpus, "while", {"StatelessWhile"})


def test_while_loop_with_maximum_iterations(corpus):
    check_case(corpus, "bounded", {"StatelessWhile"})


def test_nested_while_loops(corpus):
    check_case(corpus, "nested", {"StatelessWhile"})


def test_tf_switch_case(corpus):
    check_case(corpus, "switch_case", {"StatelessCase"})


def test_autograph_if_and_while(corpus):
    check_case(corpus, "autograph", {"StatelessWhile"})


def test_autograph_float_loop_with_a_cond(corpus):
    check_case(corpus, "autograph_float", {"StatelessWhile"})


def test_tensor_array_loop(corpus):
    check_case(corpus, "tensor_array", {"TensorListReserve"})


def test_dynamic_tensor_array_in_a_while_loop(corpus):
    check_case(corpus, "tensor_array_dynamic", {"StatelessWhile"}, tolerance=1e-5)


# Float32 gradients through a few sin/cos steps, summed in another order than
# TensorFlow's: a few ulps of the values.
def test_while_loop_gradient_from_a_gradient_tape(corpus):
    check_case(corpus, "while_gradient", {"StatelessWhile"}, tolerance=1e-5)


def test_cond_gradient_through_optionals(corpus):
    check_case(corpus, "cond_gradient", {"StatelessIf"}, tolerance=1e-5)


def test_nested_while_loop_gradient(corpus):
    check_case(corpus, "nested_gradient", {"StatelessWhile"}, tolerance=1e-5)


def test_map_fn_gradient(corpus):
    check_case(corpus, "map_gradient", {"StatelessWhile"}, tolerance=1e-5)


def test_tensor_array_gradient(corpus):
    check_case(corpus, "tensor_array_gradient", {"StatelessWhile"}, tolerance=1e-5)


def test_cond_in_a_loop_gradient(corpus):
    check_case(corpus, "cond_in_loop_gradient", {"StatelessWhile"}, tolerance=1e-5)


def test_int_tensor_array_concat_and_gather(corpus):
    check_case(corpus, "int_tensor_array", {"StatelessWhile"})


def test_fetching_a_list_is_a_clear_error(corpus):
    data = np.load(corpus / "tensor_array.npz")
    graph = import_graph(corpus / "tensor_array.pb")
    lists = [op for op in graph.get_operations() if op.type == "TensorListReserve"]
    assert lists, [op.type for op in graph.get_operations()]
    with wr.Session(graph=graph) as sess:
        with pytest.raises(Exception) as raised:
            sess.run(lists[0].outputs[0], {str(data["feeds"][0]): data["in_0_0"]})
    message = str(raised.value)
    assert "variant" in message and "numpy" in message, message
