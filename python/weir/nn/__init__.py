"""weir.nn: tf.compat.v1.nn — activations, conv1d/conv2d and pooling, dropout,
the cross-entropy losses, moments and batch normalization, embedding_lookup,
l2_normalize, in_top_k (see weir.ops.nn_ops for each contract); the RNNs
(dynamic_rnn, static_rnn, the bidirectional ones: weir.ops.rnn) and their
cells (weir.nn.rnn_cell); nce_loss, sampled_softmax_loss and the candidate
samplers (weir.ops.candidate_sampling)."""
from weir.ops.nn_ops import (  # noqa: F401
    atrous_conv2d, avg_pool, avg_pool1d, avg_pool2d, batch_normalization, bias_add, conv1d, conv2d,
    conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose, crelu, depthwise_conv2d,
    depthwise_conv2d_native,
    dropout, elu, embedding_lookup, fused_batch_norm, gelu, in_top_k, l2_loss, l2_normalize,
    leaky_relu, local_response_normalization, log_softmax, lrn, max_pool, max_pool1d, max_pool2d,
    moments, normalize_moments, relu, relu6, relu_layer, selu, separable_conv2d, sigmoid,
    sigmoid_cross_entropy_with_logits, silu, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, softplus, softsign,
    sparse_softmax_cross_entropy_with_logits, swish, tanh, top_k,
    weighted_cross_entropy_with_logits, weighted_moments, xw_plus_b, zero_fraction)
from weir.ops.array_ops import depth_to_space, space_to_depth  # noqa: F401
from weir.ops.nn3d_ops import (  # noqa: F401  (3-D convolution and pooling)
    avg_pool3d, conv3d, conv3d_backprop_filter_v2, conv3d_transpose, max_pool3d)
from weir.ops.rnn import (  # noqa: F401
    bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn, static_rnn)
from weir.nn import rnn_cell  # noqa: F401
from weir.ops.embedding_ops import (  # noqa: F401
    embedding_lookup_sparse, safe_embedding_lookup_sparse)
from weir.ops.candidate_sampling import (  # noqa: F401
    compute_accidental_hits, log_uniform_candidate_sampler, nce_loss, sampled_softmax_loss,
    uniform_candidate_sampler)

__all__ = [
    "atrous_conv2d", "avg_pool", "avg_pool1d", "avg_pool2d", "batch_normalization", "bias_add",
    "conv1d", "conv2d", "conv2d_backprop_filter", "conv2d_backprop_input", "conv2d_transpose",
    "crelu", "depthwise_conv2d", "depthwise_conv2d_native",
    "dropout", "elu", "embedding_lookup", "fused_batch_norm", "gelu",
    "in_top_k", "l2_loss", "l2_normalize", "leaky_relu", "local_response_normalization",
    "log_softmax", "lrn", "max_pool", "max_pool1d", "max_pool2d", "moments", "normalize_moments",
    "relu", "relu6", "relu_layer", "selu", "separable_conv2d", "sigmoid",
    "sigmoid_cross_entropy_with_logits", "silu", "softmax", "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2", "softplus", "softsign",
    "sparse_softmax_cross_entropy_with_logits", "swish", "tanh", "top_k",
    "weighted_cross_entropy_with_logits", "weighted_moments", "xw_plus_b", "zero_fraction",
    "depth_to_space", "space_to_depth",
    "bidirectional_dynamic_rnn", "dynamic_rnn", "static_bidirectional_rnn", "static_rnn", "rnn_cell",
    "compute_accidental_hits", "log_uniform_candidate_sampler", "nce_loss", "sampled_softmax_loss",
    "uniform_candidate_sampler", "embedding_lookup_sparse", "safe_embedding_lookup_sparse",
    "avg_pool3d", "conv3d", "conv3d_backprop_filter_v2", "conv3d_transpose", "max_pool3d",
]


from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    log_poisson_loss, sufficient_statistics, batch_norm_with_global_normalization,
    compute_average_loss, scale_regularization_loss, convolution, conv_transpose, pool,
    avg_pool_v2, max_pool_v2)
__all__ = __all__ + ["log_poisson_loss", "sufficient_statistics",
                     "batch_norm_with_global_normalization", "compute_average_loss",
                     "scale_regularization_loss", "convolution", "conv_transpose", "pool",
                     "avg_pool_v2", "max_pool_v2"]
from weir.ops.tf1_modules import (  # noqa: F401,E402  (tf1api)
    conv1d_transpose, depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input)
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter
depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
__all__ = __all__ + ["conv1d_transpose", "depthwise_conv2d_native_backprop_filter",
                     "depthwise_conv2d_native_backprop_input",
                     "depthwise_conv2d_backprop_filter", "depthwise_conv2d_backprop_input"]
from weir.ops.tf1_extras import space_to_batch  # noqa: F401,E402  (tf1api: TF1's nn.space_to_batch)
__all__ = __all__ + ["space_to_batch"]
