"""tf.signal: discrete Fourier transforms over the innermost 1-3 dims (ops
FFT*, IFFT*, RFFT*, IRFFT*), window functions, framing and the short-time
Fourier transform and its inverse, composed as TensorFlow composes them.

Contract: as tf.signal. rfft*'s fft_length defaults to the input's inner
dims, irfft*'s to them with the last as 2 * (n - 1); those need the dims
statically. frame/overlap_and_add/inverse_stft need the rank statically.
"""
import math

import numpy as np

from weir.framework import dtypes
from weir.framework import ops
from weir.framework.op_def_library import apply_op
from weir.ops import array_ops
from weir.ops import math_ops

__all__ = [
    "fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d",
    "rfft3d", "irfft3d", "hann_window", "hamming_window", "frame", "overlap_and_add", "stft",
    "inverse_stft",
]

_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
_REAL = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _complex_fft(op_type):
    def fn(input, name=None):  # noqa: A002  (TF's argument name)
        return apply_op(op_type, name, input=input)
    fn.__name__ = op_type.lower()
    fn.__doc__ = "Op %s over the innermost dims of a complex tensor." % op_type
    return fn


fft = _complex_fft("FFT")
ifft = _complex_fft("IFFT")
fft2d = _complex_fft("FFT2D")
ifft2d = _complex_fft("IFFT2D")
fft3d = _complex_fft("FFT3D")
ifft3d = _complex_fft("IFFT3D")


def _inner_dims(x, rank, fn_name):
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is None or len(dims) < rank or any(d is None for d in dims[-rank:]):
        raise ValueError("%s: fft_length is needed when the input's inner %d dims are not "
                         "known statically (shape %s)" % (fn_name, rank, x.shape))
    return dims[-rank:]


def _real_fft(op_type, rank, inverse):
    def fn(input_tensor, fft_length=None, name=None):
        with ops.name_scope(name, op_type, [input_tensor, fft_length]) as scope:
            if inverse:
                x = ops.convert_to_tensor(input_tensor, name="input_tensor")
                if x.dtype.base_dtype not in _REAL:
                    x = ops.convert_to_tensor(x, dtype=dtypes.complex64)
            else:
                x = ops.convert_to_tensor(input_tensor, name="input_tensor")
                if x.dtype.base_dtype not in _COMPLEX:
                    x = math_ops.cast(x, dtypes.float32)
            if fft_length is None:
                fft_length = _inner_dims(x, rank, op_type.lower())
                if inverse:
                    fft_length[-1] = 2 * (fft_length[-1] - 1)
            if isinstance(fft_length, (list, tuple)):
                for n in fft_length:
                    if not 0 <= int(n) < 2 ** 31:
                        raise ValueError("%s: fft_length %d is out of the int32 range" %
                                         (op_type.lower(), int(n)))
            length = ops.convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length")
            if inverse:
                return apply_op(op_type, scope, input=x, fft_length=length,
                                Treal=_REAL[x.dtype.base_dtype])
            return apply_op(op_type, scope, input=x, fft_length=length,
                            Tcomplex=_COMPLEX[x.dtype.base_dtype])
    fn.__name__ = op_type.lower()
    fn.__doc__ = "Op %s (fft_length defaults from the input's static shape)." % op_type
    return fn


rfft = _real_fft("RFFT", 1, False)
irfft = _real_fft("IRFFT", 1, True)
rfft2d = _real_fft("RFFT2D", 2, False)
irfft2d = _real_fft("IRFFT2D", 2, True)
rfft3d = _real_fft("RFFT3D", 3, False)
irfft3d = _real_fft("IRFFT3D", 3, True)


def _raised_cosine(window_length, periodic, dtype, a, b, name, default_name):
    with ops.name_scope(name, default_name, [window_length]) as scope:
        dtype = dtypes.as_dtype(dtype)
        n = int(window_length)
        if n < 0:
            raise ValueError("%s: window_length %d must not be negative" % (default_name, n))
        if n == 1:
            values = np.ones([1])
        else:
            denominator = n if periodic else n - 1
            values = a - b * np.cos(2.0 * np.pi * np.arange(n) / max(denominator, 1))
        return ops.convert_to_tensor(values.astype(dtype.as_numpy_dtype), name=scope)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N) for n in [0, window_length); N = window_length
    when periodic, else window_length - 1."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, name, "hann_window")


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N), N as in hann_window."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, name, "hamming_window")


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Frames of frame_length samples every frame_step along `axis`: that axis
    becomes [num_frames, frame_length]. With pad_end the signal is padded
    with pad_value so every sample is in a frame."""
    with ops.name_scope(name, "frame", [signal, frame_length, frame_step]) as scope:
        signal = ops.convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is None:
            raise ValueError("frame: the signal's rank must be known statically")
        axis = axis + rank if axis < 0 else axis
        frame_length, frame_step = int(frame_length), int(frame_step)
        if frame_length < 0 or frame_step <= 0:
            raise ValueError("frame: frame_length must be >= 0 and frame_step > 0")
        length = array_ops.shape(signal)[axis]
        if pad_end:
            num_frames = math_ops.floordiv(length + frame_step - 1, frame_step)
            padded = (num_frames - 1) * frame_step + frame_length
            extra = math_ops.maximum(padded - length, 0)
            paddings = array_ops.stack([
                array_ops.stack([0, extra]) if k == axis else array_ops.stack([0, 0])
                for k in range(rank)])
            signal = array_ops.pad(signal, paddings, constant_values=pad_value)
        else:
            num_frames = math_ops.maximum(
                0, 1 + math_ops.floordiv(length - frame_length, frame_step))
        starts = math_ops.range(0, num_frames) * frame_step
        indices = array_ops.expand_dims(starts, 1) + array_ops.expand_dims(
            math_ops.range(0, frame_length), 0)
        return array_ops.gather(signal, indices, axis=axis, name=scope)


def overlap_and_add(signal, frame_step, name=None):
    """The inverse of frame (summing overlaps): [..., frames, frame_length]
    to [..., (frames - 1) * frame_step + frame_length]."""
    with ops.name_scope(name, "overlap_and_add", [signal, frame_step]) as scope:
        signal = ops.convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is None or rank < 2:
            raise ValueError("overlap_and_add: the signal needs a static rank >= 2")
        frame_step = int(frame_step)
        shape = array_ops.shape(signal)
        num_frames, frame_length = shape[-2], shape[-1]
        out_length = math_ops.maximum(0, (num_frames - 1) * frame_step + frame_length)
        perm = [rank - 2, rank - 1] + list(range(rank - 2))
        moved = array_ops.transpose(signal, perm)
        flat = array_ops.reshape(moved, array_ops.concat(
            [[-1], array_ops.shape(moved)[2:]], 0))
        ids = array_ops.expand_dims(math_ops.range(0, num_frames) * frame_step, 1) + \
            array_ops.expand_dims(math_ops.range(0, frame_length), 0)
        summed = math_ops.unsorted_segment_sum(flat, array_ops.reshape(ids, [-1]), out_length)
        back = list(range(1, rank - 1)) + [0]
        return array_ops.transpose(summed, back, name=scope)


def _default_fft_length(frame_length):
    return 2 ** int(math.ceil(math.log2(frame_length))) if frame_length > 1 else 1


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """The short-time Fourier transform: rfft of windowed frames,
    [..., frames, fft_length // 2 + 1]."""
    with ops.name_scope(name, "stft", [signals]) as scope:
        signals = ops.convert_to_tensor(signals, name="signals")
        if fft_length is None:
            fft_length = _default_fft_length(int(frame_length))
        frames = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            frames = frames * window_fn(frame_length, dtype=signals.dtype.base_dtype)
        return rfft(frames, [fft_length], name=scope)


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """The inverse of stft up to the window's overlap-added square (use
    inverse_stft_window_fn-style windows for perfect reconstruction)."""
    with ops.name_scope(name, "inverse_stft", [stfts]) as scope:
        stfts = ops.convert_to_tensor(stfts, name="stfts")
        frame_length = int(frame_length)
        if fft_length is None:
            fft_length = _default_fft_length(frame_length)
        frames = irfft(stfts, [fft_length])
        if fft_length > frame_length:
            frames = frames[..., :frame_length]
        elif fft_length < frame_length:
            rank = frames.shape.ndims
            frames = array_ops.pad(frames, [[0, 0]] * (rank - 1) + [[0, frame_length - fft_length]])
        if window_fn is not None:
            frames = frames * window_fn(frame_length, dtype=frames.dtype.base_dtype)
        return overlap_and_add(frames, frame_step, name=scope)
