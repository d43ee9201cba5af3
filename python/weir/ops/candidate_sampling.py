"""Candidate sampling and the sampled losses (TF1's tf.nn.nce_loss,
tf.nn.sampled_softmax_loss, tf.nn.log_uniform_candidate_sampler,
tf.nn.uniform_candidate_sampler, tf.nn.compute_accidental_hits), written as
graph code over weir's ops.

A sampler returns (sampled_candidates [num_sampled] int64,
true_expected_count [batch, num_true] float32, sampled_expected_count
[num_sampled] float32). The log-uniform (Zipfian) sampler draws class
floor(exp(u * log(range_max + 1))) - 1 for u uniform in [0, 1), so
P(c) = log((c + 2) / (c + 1)) / log(range_max + 1); the uniform one
P(c) = 1 / range_max. Without `unique` the expected count of a class is
num_sampled * P(c); with `unique` draws repeat until num_sampled distinct
classes came (a while_loop), and the count is 1 - (1 - P(c))^tries (TF's
rule, num_sampled * P(c) when no draw was rejected). The draws come from
another generator than TensorFlow's, so sampled values differ from TF's for
the same seed; pass sampled_values to make a loss deterministic.
"""
import numpy as np

from weir.framework import dtypes
from weir.framework import ops

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "compute_accidental_hits",
           "nce_loss", "sampled_softmax_loss"]


def _wr():
    import weir
    return weir


def _check_sampler_args(num_true, num_sampled, unique, range_max):
    for what, value in (("num_true", num_true), ("num_sampled", num_sampled), ("range_max", range_max)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError("%s must be a positive int, got %r" % (what, value))
    if unique and num_sampled > range_max:
        raise ValueError("num_sampled (%d) must be at most range_max (%d) when unique=True"
                         % (num_sampled, range_max))


def _sampler(kind, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    wr = _wr()
    _check_sampler_args(num_true, num_sampled, unique, range_max)
    log_range = np.log(range_max + 1.0)

    def draw(shape):
        u = wr.random_uniform(shape, dtype=wr.float64, seed=seed)
        if kind == "log_uniform":
            value = wr.cast(wr.floor(wr.exp(u * log_range)), wr.int64) - 1
        else:
            value = wr.cast(wr.floor(u * float(range_max)), wr.int64)
        return wr.floormod(wr.maximum(value, 0), range_max)

    def probability(classes):
        c = wr.cast(classes, wr.float64)
        if kind == "log_uniform":
            return (wr.log(c + 2.0) - wr.log(c + 1.0)) / log_range
        return wr.ones_like(c) / float(range_max)

    with ops.name_scope(name, kind + "_candidate_sampler", [true_classes]):
        true_classes = wr.convert_to_tensor(true_classes, dtype=wr.int64, name="true_classes")
        if not unique:
            sampled = draw([num_sampled])
            tries = wr.constant(num_sampled, wr.float64)
        else:
            slots = wr.range(num_sampled)

            def body(i, count, samples):
                value = draw([])
                seen = wr.reduce_any(wr.logical_and(wr.equal(samples, value), slots < i))
                put = wr.logical_and(wr.logical_not(seen), wr.equal(slots, i))
                samples = wr.where(put, wr.fill([num_sampled], value), samples)
                return i + wr.cast(wr.logical_not(seen), wr.int32), count + 1, samples

            _, tries, sampled = wr.while_loop(
                lambda i, count, samples: i < num_sampled, body,
                [wr.constant(0), wr.constant(0), wr.zeros([num_sampled], wr.int64)], back_prop=False)
            tries = wr.cast(tries, wr.float64)

        def expected(classes):
            p = probability(classes)
            if not unique:
                return wr.cast(p * float(num_sampled), wr.float32)
            rejected = -wr.expm1(tries * wr.log1p(-p))
            return wr.cast(wr.where(wr.equal(tries, float(num_sampled)), p * float(num_sampled), rejected),
                           wr.float32)
        sampled = wr.stop_gradient(sampled)
        return sampled, wr.stop_gradient(expected(true_classes)), wr.stop_gradient(expected(sampled))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                                  name=None):
    """Samples classes from the log-uniform (Zipfian) distribution over
    [0, range_max) (see the module doc)."""
    return _sampler("log_uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                              name=None):
    """Samples classes uniformly from [0, range_max) (see the module doc)."""
    return _sampler("uniform", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def _accidental_hits(true_classes, sampled):
    """[batch, num_sampled] bool: sampled class j is one of row i's true classes."""
    wr = _wr()
    hits = wr.equal(wr.expand_dims(true_classes, 2), wr.reshape(sampled, [1, 1, -1]))
    return wr.reduce_any(hits, axis=1)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(indices int32, ids int64, weights float32) of the sampled candidates
    that equal one of the row's true classes (weights -FLT_MAX), TF's op."""
    wr = _wr()
    with ops.name_scope(name, "compute_accidental_hits", [true_classes, sampled_candidates]):
        true_classes = wr.convert_to_tensor(true_classes, dtype=wr.int64)
        sampled = wr.convert_to_tensor(sampled_candidates, dtype=wr.int64)
        where = wr.cast(wr.where(_accidental_hits(true_classes, sampled)), wr.int32)
        indices, ids = where[:, 0], wr.cast(where[:, 1], wr.int64)
        weights = wr.fill(wr.shape(indices), np.float32(-np.finfo(np.float32).max))
        return indices, ids, weights


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                            sampled_values, subtract_log_q, remove_accidental_hits, partition_strategy,
                            name, seed):
    """The logits of each row's true classes and the sampled classes
    ([batch, num_true + num_sampled]) and their labels (1/num_true for the
    true ones, 0 for the sampled)."""
    wr = _wr()
    if not isinstance(weights, (list, tuple)):
        weights = [weights]
    with ops.name_scope(name, "compute_sampled_logits", list(weights) + [biases, inputs, labels]):
        labels = wr.convert_to_tensor(labels)
        if labels.dtype != dtypes.int64:
            labels = wr.cast(labels, wr.int64)
        labels_flat = wr.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True,
                                                           num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            wr.stop_gradient(wr.convert_to_tensor(v)) for v in sampled_values)
        sampled = wr.cast(sampled, wr.int64)
        all_ids = wr.concat([labels_flat, sampled], 0)
        inputs = wr.convert_to_tensor(inputs)
        all_w = wr.nn.embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        n_true = wr.size(labels_flat)
        true_w = all_w[:n_true]
        sampled_w = all_w[n_true:]
        sampled_logits = wr.matmul(inputs, sampled_w, transpose_b=True)
        all_b = wr.nn.embedding_lookup(biases, all_ids)
        true_b = wr.reshape(all_b[:n_true], [-1, num_true])
        sampled_b = all_b[n_true:]
        dim = wr.shape(true_w)[1:2]
        true_w = wr.reshape(true_w, wr.concat([[-1, num_true], dim], 0))
        true_logits = wr.reduce_sum(wr.expand_dims(inputs, 1) * true_w, axis=2) + true_b
        sampled_logits = sampled_logits + sampled_b
        if remove_accidental_hits:
            hits = _accidental_hits(labels, sampled)
            sampled_logits = sampled_logits + wr.cast(hits, sampled_logits.dtype) * np.float32(
                -np.finfo(np.float32).max)
        if subtract_log_q:
            true_logits = true_logits - wr.log(wr.cast(true_expected_count, true_logits.dtype))
            sampled_logits = sampled_logits - wr.log(wr.cast(sampled_expected_count, sampled_logits.dtype))
        out_logits = wr.concat([true_logits, sampled_logits], 1)
        out_labels = wr.concat([wr.ones_like(true_logits) / float(num_true), wr.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """Noise-contrastive estimation loss per example ([batch]): logistic
    losses of the true classes (label 1/num_true) and num_sampled sampled
    classes (label 0), logits corrected by log(expected count). `weights`
    [num_classes, dim] (or its shards, `partition_strategy` as
    embedding_lookup's), `biases` [num_classes], `labels` [batch, num_true]
    int, `inputs` [batch, dim]."""
    wr = _wr()
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                             num_true, sampled_values, True, remove_accidental_hits,
                                             partition_strategy, name, None)
    losses = wr.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return wr.reduce_sum(losses, axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True, partition_strategy="mod",
                         name="sampled_softmax_loss", seed=None):
    """Softmax cross entropy over each row's true classes and num_sampled
    sampled ones ([batch]); sampled classes equal to a true class are
    removed (remove_accidental_hits). Arguments as nce_loss's."""
    wr = _wr()
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                             num_true, sampled_values, True, remove_accidental_hits,
                                             partition_strategy, name, seed)
    labels = wr.stop_gradient(labels, name="labels_stop_gradient")
    return wr.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
