"""A GAN of the TF1 tutorials: generator and discriminator as functions under
variable_scope (the discriminator called twice, reuse=True for the fake
batch), tf.layers.dense with leaky_relu and batch_normalization, the two
sigmoid cross-entropy losses with ones_like / zeros_like labels, two
AdamOptimizers (beta1=0.5) over the variables of their scope
(get_collection(TRAINABLE_VARIABLES, scope=...)) behind their scope's
UPDATE_OPS, alternating steps. The noise comes from numpy (fed), so the
losses are deterministic."""
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.reset_default_graph()
rng = np.random.RandomState(31)
real_data = (rng.randn(256, 2) * [0.5, 0.2] + [2.0, -1.0]).astype(np.float32)
z_dim, batch = 4, 64


def init(shape, scale=0.3):
    return tf.constant_initializer((scale * rng.randn(*shape)).astype(np.float32))


g_inits = [init([z_dim, 16]), init([16, 2])]
d_inits = [init([2, 16]), init([16, 1])]


def generator(z, training):
    with tf.variable_scope("generator"):
        h = tf.layers.dense(z, 16, use_bias=False, kernel_initializer=g_inits[0])  # batch norm centers it
        h = tf.nn.leaky_relu(tf.layers.batch_normalization(h, training=training), alpha=0.2)
        return tf.layers.dense(h, 2, kernel_initializer=g_inits[1])


def discriminator(x, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        h = tf.nn.leaky_relu(tf.layers.dense(x, 16, kernel_initializer=d_inits[0], name="hidden"), alpha=0.2)
        return tf.layers.dense(h, 1, kernel_initializer=d_inits[1], name="logit")


real = tf.placeholder(tf.float32, [None, 2], name="real")
z = tf.placeholder(tf.float32, [None, z_dim], name="z")
training = tf.placeholder_with_default(True, [], name="training")
fake = generator(z, training)
d_real = discriminator(real)
d_fake = discriminator(fake, reuse=True)
d_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_real, labels=tf.ones_like(d_real))) + \
    tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.zeros_like(d_fake)))
g_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.ones_like(d_fake)))
d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope="generator")):
    g_train = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(g_loss, var_list=g_vars)
d_train = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(d_loss, var_list=d_vars)
noise = rng.randn(40, batch, z_dim).astype(np.float32)

history = []
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(40):
        batch_real = real_data[(step * batch) % 256:(step * batch) % 256 + batch]
        dl, _ = sess.run([d_loss, d_train], {real: batch_real, z: noise[step]})
        gl, _ = sess.run([g_loss, g_train], {z: noise[step]})
        history.append([float(dl), float(gl)])
    samples = sess.run(fake, {z: noise[0], training: False})
    moving = sess.run([v for v in tf.global_variables() if "moving_mean" in v.name][0])

assert len(d_vars) == 4 and len(g_vars) == 5, (d_vars, g_vars)  # batch norm adds gamma and beta
assert not np.allclose(moving, 0)
RESULT = {"history": history, "d_vars": [v.op.name for v in d_vars], "g_vars": [v.op.name for v in g_vars],
          "sample_mean": samples.mean(0).tolist()}
