"""The tf.image functions TensorFlow composes of other ops (rot90, transpose,
resize_with_crop_or_pad, resize_with_pad, adjust_gamma, YIQ/YUV, image_gradients,
sobel_edges, total_variation, psnr, is_jpeg) and Equal/NotEqual of strings, against
TensorFlow 2.21 run in the test on the same inputs."""
import numpy as np
import pytest

import weir as wr

SCRIPT = '''
rng = np.random.RandomState(7)
x_np = rng.rand(2, 5, 6, 3).astype(np.float32)
u8_np = (rng.rand(5, 6, 3) * 255).astype(np.uint8)
x, u8 = tf.constant(x_np), tf.constant(u8_np)
out = {}
for k in range(-1, 5):
    out["rot90_%d" % k] = tf.image.rot90(x, k).numpy()
out["rot90_single"] = tf.image.rot90(x[0], 3).numpy()
out["transpose"] = tf.image.transpose(x).numpy()
for h, w in ((4, 8), (7, 3), (5, 6), (9, 10)):
    out["crop_pad_%d_%d" % (h, w)] = tf.image.resize_with_crop_or_pad(x, h, w).numpy()
out["crop_pad_single"] = tf.image.resize_with_crop_or_pad(x[1], 3, 9).numpy()
out["with_pad"] = tf.image.resize_with_pad(x, 8, 8).numpy()
out["with_pad_wide"] = tf.image.resize_with_pad(x[0], 4, 12, method="nearest").numpy()
out["with_pad_v1"] = v1.image.resize_image_with_pad(x, 8, 8).numpy()
out["gamma"] = tf.image.adjust_gamma(x, 2.2, 0.9).numpy()
out["gamma_u8"] = tf.image.adjust_gamma(u8, 0.5).numpy()
out["yiq"] = tf.image.rgb_to_yiq(x).numpy()
out["yiq_back"] = tf.image.yiq_to_rgb(x).numpy()
out["yuv"] = tf.image.rgb_to_yuv(x).numpy()
out["yuv_back"] = tf.image.yuv_to_rgb(x).numpy()
dy, dx = tf.image.image_gradients(x)
out["dy"], out["dx"] = dy.numpy(), dx.numpy()
out["sobel"] = tf.image.sobel_edges(x).numpy()
out["tv"] = tf.image.total_variation(x).numpy()
out["tv_single"] = tf.image.total_variation(x[0]).numpy()
out["psnr"] = tf.image.psnr(x, x * 0.9 + 0.05, 1.0).numpy()
out["psnr_u8"] = tf.image.psnr(u8, u8 // 2, 255).numpy()
jpeg = tf.io.encode_jpeg(u8).numpy()
out["is_jpeg"] = np.array([tf.image.is_jpeg(jpeg).numpy(), tf.image.is_jpeg(b"\\x89PNG").numpy()])
words = np.array([b"cat", b"dog", b"", b"cat"])
out["str_eq"] = tf.equal(words, b"cat").numpy()
out["str_ne"] = tf.not_equal(words.reshape(2, 2), np.array([b"cat", b"x"])).numpy()
np.savez(os.path.join(OUT, "out.npz"), x=x_np, u8=u8_np, jpeg=np.array(jpeg), **out)
'''


@pytest.fixture(scope="module")
def want(run_tf):
    return dict(np.load(run_tf(SCRIPT, "image_extras") / "out.npz"))


def test_composed_image_functions_and_string_equality_match_tensorflow(want):
    x, u8 = want["x"], want["u8"]
    img = wr.image
    with wr.Graph().as_default():
        got = {"rot90_%d" % k: img.rot90(x, k) for k in range(-1, 5)}
        got["rot90_single"] = img.rot90(x[0], 3)
        got["transpose"] = img.transpose(x)
        for h, w in ((4, 8), (7, 3), (5, 6), (9, 10)):
            got["crop_pad_%d_%d" % (h, w)] = img.resize_with_crop_or_pad(x, h, w)
        got["crop_pad_single"] = img.resize_with_crop_or_pad(x[1], 3, 9)
        got["with_pad"] = img.resize_with_pad(x, 8, 8)
        got["with_pad_wide"] = img.resize_with_pad(x[0], 4, 12, method="nearest")
        got["with_pad_v1"] = wr.compat.v1.image.resize_image_with_pad(x, 8, 8)
        got["gamma"] = img.adjust_gamma(x, 2.2, 0.9)
        got["gamma_u8"] = img.adjust_gamma(u8, 0.5)
        got["yiq"], got["yiq_back"] = img.rgb_to_yiq(x), img.yiq_to_rgb(x)
        got["yuv"], got["yuv_back"] = img.rgb_to_yuv(x), img.yuv_to_rgb(x)
        got["dy"], got["dx"] = img.image_gradients(x)
        got["sobel"] = img.sobel_edges(x)
        got["tv"], got["tv_single"] = img.total_variation(x), img.total_variation(x[0])
        got["psnr"] = img.psnr(x, x * 0.9 + 0.05, 1.0)
        got["psnr_u8"] = img.psnr(u8, u8 // 2, 255)
        got["is_jpeg"] = wr.stack([img.is_jpeg(want["jpeg"].item()), img.is_jpeg(b"\x89PNG")])
        words = np.array([b"cat", b"dog", b"", b"cat"])
        got["str_eq"] = wr.equal(words, b"cat")
        got["str_ne"] = wr.not_equal(words.reshape(2, 2), np.array([b"cat", b"x"]))
        with wr.Session() as sess:
            got = sess.run(got)
    for key, value in got.items():
        assert np.shape(value) == np.shape(want[key]), key
        if want[key].dtype.kind in "fc":
            np.testing.assert_allclose(value, want[key], rtol=1e-5, atol=1e-5, err_msg=key)
        else:
            np.testing.assert_array_equal(value, want[key], err_msg=key)


def test_composed_image_function_errors():
    with wr.Graph().as_default():
        with pytest.raises(ValueError, match="3 or 4 dimensions"):
            wr.image.rot90(np.zeros([4, 4], np.float32))
        with pytest.raises(ValueError, match="target_height must be > 0"):
            wr.image.resize_with_crop_or_pad(np.zeros([4, 4, 1], np.float32), 0, 3)
        with pytest.raises(ValueError, match="4D tensor"):
            wr.image.image_gradients(np.zeros([4, 4, 1], np.float32))
