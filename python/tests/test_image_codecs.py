"""wr.image / wr.io codecs, colour ops and non-max suppression against
TensorFlow 2.21 (run from /opt/weir-peers in a subprocess): decoded pixels of
the same JPEG and PNG bytes equal TF's exactly (every channels / ratio /
fancy_upscaling / dct_method / dtype case, truncated files recovered), TF
decodes weir's encodings to the original pixels (PNG) or to TF's own
(JPEG: same libjpeg-turbo settings), colour ops and NMS V2..V5 match, a TF1
input pipeline (read_file, decode, resize, standardize) on files TF wrote
matches, and a GraphDef TF exported with these ops imports and runs.
Hostile bytes raise InvalidArgumentError."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import weir as wr

from peers import PEERS_PYTHON as PEER_PYTHON  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    wr.reset_default_graph()
    yield


def run(fetches, feed_dict=None):
    with wr.Session() as sess:
        return sess.run(fetches, feed_dict)


JPEG_DECODES = [  # (name of the encoded file, decode_jpeg kwargs)
    ("rgb", {}),
    ("rgb", {"channels": 1}),
    ("rgb", {"ratio": 2}),
    ("rgb", {"ratio": 4, "channels": 3}),
    ("rgb", {"fancy_upscaling": False}),
    ("rgb", {"dct_method": "INTEGER_ACCURATE"}),
    ("gray", {}),
    ("gray", {"channels": 3}),
    ("progressive", {}),
    ("nosub", {"dct_method": "INTEGER_ACCURATE"}),
]
PNG_DECODES = [  # (file, decode_png kwargs, dtype name)
    ("rgb8", {}, "uint8"), ("rgb8", {"channels": 4}, "uint8"), ("rgb8", {"channels": 1}, "uint8"),
    ("rgb8", {}, "uint16"), ("rgba8", {}, "uint8"),
    ("rgba8", {"channels": 3}, "uint8"), ("gray8", {"channels": 3}, "uint8"),
    ("rgb16", {}, "uint16"), ("rgb16", {}, "uint8"), ("rgb16", {"channels": 1}, "uint16"),
]

AREA_CASES = [([3, 2], False), ([4, 7], False), ([2, 3], True), ([11, 13], False)]


def bmp_bytes(pixels, top_down=False):
    """An uncompressed BMP of pixels [h, w, 1 | 3 | 4] (RGB order in; BGR in the file)."""
    h, w, c = pixels.shape
    row = (w * c * 8 + 31) // 32 * 4
    body = b""
    rows = range(h) if top_down else range(h - 1, -1, -1)
    for y in rows:
        line = pixels[y][:, [2, 1, 0, 3][:c]] if c >= 3 else pixels[y]
        data = line.astype(np.uint8).tobytes()
        body += data + b"\0" * (row - len(data))
    header = b"BM" + (54 + len(body)).to_bytes(4, "little") + b"\0" * 4 + (54).to_bytes(4, "little")
    info = ((40).to_bytes(4, "little") + int(w).to_bytes(4, "little", signed=True) +
            int(-h if top_down else h).to_bytes(4, "little", signed=True) +
            (1).to_bytes(2, "little") + (8 * c).to_bytes(2, "little") + b"\0" * 24)
    return header + info + body


TF_SCRIPT = textwrap.dedent("""
    import sys, os
    import numpy as np
    import tensorflow as tf
    d = dict(np.load(sys.argv[1]))
    folder = sys.argv[3]
    out = {}
    img = d["img"]
    files = {
        "rgb": tf.io.encode_jpeg(img, quality=85),
        "gray": tf.io.encode_jpeg(img[:, :, :1], quality=90),
        "progressive": tf.io.encode_jpeg(img, progressive=True, optimize_size=True),
        "nosub": tf.io.encode_jpeg(img, chroma_downsampling=False, quality=97),
        "rgb8": tf.io.encode_png(img),
        "rgba8": tf.io.encode_png(d["img4"]),
        "gray8": tf.io.encode_png(img[:, :, :1], compression=9),
        "rgb16": tf.io.encode_png(d["img16"]),
    }
    for k, v in files.items():
        out["file_" + k] = np.frombuffer(v.numpy(), np.uint8)
    for i, (f, kw) in enumerate(%(jpeg)r):
        out["jpeg_%%d" %% i] = tf.io.decode_jpeg(files[f], **kw).numpy()
    for i, (f, kw, dt) in enumerate(%(png)r):
        out["png_%%d" %% i] = tf.io.decode_png(files[f], dtype=dt, **kw).numpy()
    out["image_f32"] = tf.io.decode_image(files["rgb"], dtype=tf.float32).numpy()
    out["image_png_f32"] = tf.io.decode_image(files["rgb16"], dtype=tf.float32).numpy()
    out["jpeg_as_png16"] = tf.io.decode_png(files["rgb"], dtype=tf.uint16).numpy()
    out["png_as_jpeg"] = tf.io.decode_jpeg(files["rgb8"]).numpy()
    jpeg = files["rgb"].numpy()
    out["truncated"] = tf.io.decode_jpeg(jpeg[: len(jpeg) * 2 // 3],
                                         try_recover_truncated=True).numpy()
    out["crop"] = tf.image.decode_and_crop_jpeg(files["rgb"], [3, 5, 17, 20]).numpy()
    out["shape"] = tf.io.extract_jpeg_shape(files["rgb"]).numpy()
    # Re-encodings of TF's: for the byte comparison.
    out["tf_jpeg_q75"] = np.frombuffer(tf.io.encode_jpeg(img, quality=75).numpy(), np.uint8)
    out["decoded_weir_png"] = tf.io.decode_png(d["weir_png"].tobytes()).numpy()
    out["decoded_weir_jpeg"] = tf.io.decode_jpeg(d["weir_jpeg"].tobytes()).numpy()
    # Colour ops.
    x = d["colors"]
    out["hsv"] = tf.image.rgb_to_hsv(x).numpy()
    xt = tf.constant(d["grad_colors"])
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(tf.image.rgb_to_hsv(xt) * d["hsv_weights"])
    out["hsv_grad"] = tape.gradient(loss, xt).numpy()
    out["rgb_back"] = tf.image.hsv_to_rgb(d["hsv_in"]).numpy()
    out["hue"] = tf.image.adjust_hue(x, 0.27).numpy()
    out["hue_neg"] = tf.image.adjust_hue(x, -0.61).numpy()
    out["saturation"] = tf.image.adjust_saturation(x, 1.7).numpy()
    out["contrast"] = tf.image.adjust_contrast(x, 0.4).numpy()
    out["hue_u8"] = tf.image.adjust_hue(img, 0.1).numpy()
    out["saturation_u8"] = tf.image.adjust_saturation(img, 0.3).numpy()
    out["hsv_f64"] = tf.image.rgb_to_hsv(x.astype(np.float64)).numpy()
    out["gray_rgb"] = tf.image.grayscale_to_rgb(tf.constant(img[:, :, :1])).numpy()
    for k in ("bmp24", "bmp32", "bmp8"):
        out["decoded_" + k] = tf.io.decode_bmp(d[k].tobytes()).numpy()
    out["bmp_as_image"] = tf.io.decode_image(d["bmp24"].tobytes()).numpy()
    for i, (size, ac) in enumerate(%(area)r):
        out["area_%%d" %% i] = tf.compat.v1.image.resize_area(x, size, align_corners=ac).numpy()
        out["area_u8_%%d" %% i] = tf.compat.v1.image.resize_area(
            img[None], size, align_corners=ac).numpy()
    # NMS.
    b, s = d["boxes"], d["scores"]
    out["nms"] = tf.image.non_max_suppression(b, s, 20, 0.4).numpy()
    out["nms_thr"] = tf.image.non_max_suppression(b, s, 7, 0.6, score_threshold=0.3).numpy()
    out["nms_v2"] = tf.raw_ops.NonMaxSuppressionV2(boxes=b, scores=s, max_output_size=9,
                                                   iou_threshold=0.5).numpy()
    out["nms_v1"] = tf.raw_ops.NonMaxSuppression(boxes=b, scores=s, max_output_size=9,
                                                 iou_threshold=0.3).numpy()
    i4, v4 = tf.raw_ops.NonMaxSuppressionV4(boxes=b, scores=s, max_output_size=40,
        iou_threshold=0.5, score_threshold=0.2, pad_to_max_output_size=True)
    out["nms_v4"], out["nms_v4_valid"] = i4.numpy(), v4.numpy()
    i5, s5 = tf.image.non_max_suppression_with_scores(b, s, 15, 0.5, 0.1, soft_nms_sigma=0.5)
    out["nms_v5"], out["nms_v5_scores"] = i5.numpy(), s5.numpy()
    i5, s5 = tf.image.non_max_suppression_with_scores(b, s, 15, 0.45)
    out["nms_v5_hard"], out["nms_v5_hard_scores"] = i5.numpy(), s5.numpy()
    # A TF1 input pipeline over files TF writes.
    for k in ("rgb", "rgb8"):
        tf.io.write_file(os.path.join(folder, k + (".jpg" if k == "rgb" else ".png")), files[k])
    def pipeline(path):
        image = tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)
        image = tf.compat.v1.image.resize_bilinear(image[None], [24, 32])[0]
        return tf.image.per_image_standardization(image).numpy()
    out["pipe_jpg"] = pipeline(os.path.join(folder, "rgb.jpg"))
    out["pipe_png"] = pipeline(os.path.join(folder, "rgb8.png"))
    # A frozen graph with the ops, as a TF1 program exports it.
    g = tf.Graph()
    with g.as_default():
        contents = tf.compat.v1.placeholder(tf.string, [], name="contents")
        image = tf.io.decode_jpeg(contents, channels=3)
        flt = tf.image.convert_image_dtype(image, tf.float32)
        hsv = tf.image.rgb_to_hsv(flt)
        tf.identity(tf.image.adjust_saturation(tf.image.adjust_hue(flt, 0.2), 0.5), name="adjusted")
        tf.identity(hsv, name="hsv")
        boxes = tf.compat.v1.placeholder(tf.float32, [None, 4], name="boxes")
        scores = tf.compat.v1.placeholder(tf.float32, [None], name="scores")
        tf.identity(tf.image.non_max_suppression(boxes, scores, 10, 0.5), name="keep")
        with tf.compat.v1.Session() as sess:
            out["graph_adjusted"], out["graph_hsv"], out["graph_keep"] = sess.run(
                ["adjusted:0", "hsv:0", "keep:0"],
                {contents: files["rgb"].numpy(), boxes: b, scores: s})
    with open(os.path.join(folder, "codec_graph.pb"), "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    np.savez(sys.argv[2], **out)
""") % {"jpeg": JPEG_DECODES, "png": PNG_DECODES, "area": AREA_CASES}


def make_inputs():
    r = np.random.default_rng(16)
    yy, xx = np.mgrid[0:37, 0:53]
    # Smooth gradients plus noise: realistic enough for JPEG's chroma paths.
    img = np.stack([yy * 6, xx * 4, (yy + xx) * 3], -1) + r.integers(0, 30, (37, 53, 3))
    img = np.clip(img, 0, 255).astype(np.uint8)
    img4 = np.concatenate([img, r.integers(0, 256, (37, 53, 1)).astype(np.uint8)], -1)
    img16 = (img.astype(np.uint16) * 257 + r.integers(0, 257, img.shape)).astype(np.uint16)
    boxes = r.random((60, 4)).astype(np.float32)
    boxes[:, 2:] = boxes[:, :2] + r.random((60, 2)).astype(np.float32) * 0.5
    boxes[::7] = boxes[::7, [2, 3, 0, 1]]  # corners flipped
    scores = r.random(60).astype(np.float32)
    scores[5] = scores[9]  # a tie
    colors = r.random((2, 6, 5, 3)).astype(np.float32)
    colors[0, 0, 0] = [0.5, 0.5, 0.5]  # gray: no hue
    hsv_in = r.random((4, 3, 3)).astype(np.float32)
    # Distinct channels (no ties: the derivative is one-sided there) away from 0.
    grad_colors = (0.1 + 0.8 * r.random((5, 4, 3))).astype(np.float64)
    hsv_weights = r.standard_normal((5, 4, 3))
    bmps = {"bmp24": bmp_bytes(img[:5, :7]), "bmp32": bmp_bytes(img4[:6, :5], top_down=True),
            "bmp8": bmp_bytes(img[:3, :6, :1])}
    return {**{k: np.frombuffer(v, np.uint8) for k, v in bmps.items()},
            "grad_colors": grad_colors, "hsv_weights": hsv_weights, "img": img, "img4": img4, "img16": img16, "boxes": boxes, "scores": scores,
            "colors": colors, "hsv_in": hsv_in}


@pytest.fixture(scope="module")
def tf_reference(tmp_path_factory):
    if not os.path.exists(PEER_PYTHON):
        pytest.skip("TensorFlow peer interpreter %s is missing" % PEER_PYTHON)
    folder = tmp_path_factory.mktemp("tf_codecs")
    inputs = make_inputs()
    # weir's encodings, for TF to decode.
    wr.reset_default_graph()
    weir_png, weir_jpeg = run([wr.image.encode_png(inputs["img4"]),
                               wr.image.encode_jpeg(inputs["img"], quality=75)])
    inputs["weir_png"] = np.frombuffer(weir_png, np.uint8)
    inputs["weir_jpeg"] = np.frombuffer(weir_jpeg, np.uint8)
    np.savez(folder / "in.npz", **inputs)
    (folder / "ref.py").write_text(TF_SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    subprocess.run([PEER_PYTHON, str(folder / "ref.py"), str(folder / "in.npz"),
                    str(folder / "out.npz"), str(folder)], check=True, env=env, timeout=300,
                   stdout=subprocess.DEVNULL)
    return inputs, dict(np.load(folder / "out.npz")), folder


def file_bytes(ref, name):
    return ref["file_" + name].tobytes()


def test_jpeg_decodes_equal_tensorflow(tf_reference):
    _, ref, _ = tf_reference
    fetches = [wr.io.decode_jpeg(file_bytes(ref, f), **kw) for f, kw in JPEG_DECODES]
    for i, got in enumerate(run(fetches)):
        np.testing.assert_array_equal(got, ref["jpeg_%d" % i], err_msg=str(JPEG_DECODES[i]))


def test_png_decodes_equal_tensorflow(tf_reference):
    _, ref, _ = tf_reference
    fetches = [wr.image.decode_png(file_bytes(ref, f), dtype=getattr(wr, dt), **kw)
               for f, kw, dt in PNG_DECODES]
    for i, got in enumerate(run(fetches)):
        assert got.dtype == ref["png_%d" % i].dtype
        np.testing.assert_array_equal(got, ref["png_%d" % i], err_msg=str(PNG_DECODES[i]))


def test_decode_image_dtypes_formats_crop_and_truncation(tf_reference):
    _, ref, _ = tf_reference
    jpeg = file_bytes(ref, "rgb")
    got = run({
        "image_f32": wr.image.decode_image(jpeg, dtype=wr.float32),
        "image_png_f32": wr.io.decode_image(file_bytes(ref, "rgb16"), dtype=wr.float32),
        "jpeg_as_png16": wr.io.decode_png(jpeg, dtype=wr.uint16),
        "png_as_jpeg": wr.io.decode_jpeg(file_bytes(ref, "rgb8")),
        "truncated": wr.io.decode_jpeg(jpeg[: len(jpeg) * 2 // 3], try_recover_truncated=True),
        "crop": wr.image.decode_and_crop_jpeg(jpeg, [3, 5, 17, 20]),
        "shape": wr.io.extract_jpeg_shape(jpeg),
    })
    for key in ("jpeg_as_png16", "png_as_jpeg", "crop", "shape"):
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
    # A truncated file: the pixels decoded from the bytes present are TF's
    # exactly (the same pixels as the whole file's); what fills the rest
    # after the inserted end marker differs between libjpeg-turbo versions
    # (TF bundles its own), so only that set of intact pixels is compared.
    full = ref["jpeg_0"]
    assert got["truncated"].shape == ref["truncated"].shape
    intact = (got["truncated"] == full).all(-1)
    np.testing.assert_array_equal(intact, (ref["truncated"] == full).all(-1))
    assert 0 < intact.sum() < intact.size
    for key in ("image_f32", "image_png_f32"):
        np.testing.assert_allclose(got[key], ref[key], rtol=0, atol=1e-7, err_msg=key)


def test_encoders_round_trip_through_tensorflow(tf_reference):
    inputs, ref, _ = tf_reference
    # PNG is lossless: TF reads weir's file back to the exact pixels.
    np.testing.assert_array_equal(ref["decoded_weir_png"], inputs["img4"])
    # JPEG: weir and TF use libjpeg-turbo with the same settings.
    tf_jpeg = ref["tf_jpeg_q75"].tobytes()
    weir_decoded_tf = run(wr.io.decode_jpeg(tf_jpeg))
    np.testing.assert_array_equal(ref["decoded_weir_jpeg"].shape, inputs["img"].shape)
    diff = np.abs(ref["decoded_weir_jpeg"].astype(int) - weir_decoded_tf.astype(int))
    assert diff.max() <= 2, diff.max()
    err = np.abs(ref["decoded_weir_jpeg"].astype(int) - inputs["img"].astype(int))
    assert err.mean() < 8, err.mean()


def test_color_ops_match_tensorflow(tf_reference):
    inputs, ref, _ = tf_reference
    x, img = inputs["colors"], inputs["img"]
    got = run({
        "hsv": wr.image.rgb_to_hsv(x), "rgb_back": wr.image.hsv_to_rgb(inputs["hsv_in"]),
        "hue": wr.image.adjust_hue(x, 0.27), "hue_neg": wr.image.adjust_hue(x, -0.61),
        "saturation": wr.image.adjust_saturation(x, 1.7),
        "contrast": wr.raw_ops.AdjustContrastv2(images=x, contrast_factor=0.4),
        "hue_u8": wr.image.adjust_hue(img, 0.1),
        "saturation_u8": wr.image.adjust_saturation(img, 0.3),
        "hsv_f64": wr.image.rgb_to_hsv(x.astype(np.float64)),
        "gray_rgb": wr.image.grayscale_to_rgb(img[:, :, :1]),
    })
    for key in ("hsv", "rgb_back", "hue", "hue_neg", "saturation", "contrast", "hsv_f64"):
        np.testing.assert_allclose(got[key], ref[key], rtol=0, atol=2e-6, err_msg=key)
    for key in ("hue_u8", "saturation_u8"):  # float rounding may move a pixel by one
        assert np.abs(got[key].astype(int) - ref[key].astype(int)).max() <= 1, key
    np.testing.assert_array_equal(got["gray_rgb"], ref["gray_rgb"])


def test_bmp_and_resize_area_match_tensorflow(tf_reference):
    inputs, ref, _ = tf_reference
    fetches = {"decoded_" + k: wr.io.decode_bmp(inputs[k].tobytes())
               for k in ("bmp24", "bmp32", "bmp8")}
    fetches["bmp_as_image"] = wr.io.decode_image(inputs["bmp24"].tobytes())
    for i, (size, ac) in enumerate(AREA_CASES):
        fetches["area_%d" % i] = wr.image.resize_area(inputs["colors"], size, align_corners=ac)
        fetches["area_u8_%d" % i] = wr.image.resize_area(inputs["img"][None], size,
                                                         align_corners=ac)
    got = run(fetches)
    for key, value in got.items():
        if key.startswith("area"):
            np.testing.assert_allclose(value, ref[key], rtol=1e-5, atol=1e-4, err_msg=key)
        else:
            np.testing.assert_array_equal(value, ref[key], err_msg=key)
    bmp = inputs["bmp24"].tobytes()
    for bad in (bmp[:40], bmp[:-9], bmp[:18] + (2**30).to_bytes(4, "little") + bmp[22:]):
        with pytest.raises(wr.errors.InvalidArgumentError, match="BMP"):
            run(wr.io.decode_bmp(bad))
    with pytest.raises(wr.errors.InvalidArgumentError, match="channels"):
        run(wr.io.decode_bmp(bmp, channels=4))


def test_rgb_to_hsv_gradient_matches_tensorflow_and_finite_differences(tf_reference):
    inputs, ref, _ = tf_reference
    x = wr.constant(inputs["grad_colors"])
    loss = wr.reduce_sum(wr.image.rgb_to_hsv(x) * inputs["hsv_weights"])
    grad, = wr.gradients(loss, [x])
    with wr.Session() as sess:
        got = sess.run(grad)
        np.testing.assert_allclose(got, ref["hsv_grad"], rtol=1e-6, atol=1e-9)
        # Central differences of the same loss, element by element.
        probe = wr.placeholder(wr.float64, inputs["grad_colors"].shape)
        f = wr.reduce_sum(wr.image.rgb_to_hsv(probe) * inputs["hsv_weights"])
        base, eps = inputs["grad_colors"], 1e-6
        for index in [(0, 0, 0), (1, 2, 1), (3, 3, 2), (4, 1, 0)]:
            up, down = base.copy(), base.copy()
            up[index] += eps
            down[index] -= eps
            numeric = (sess.run(f, {probe: up}) - sess.run(f, {probe: down})) / (2 * eps)
            assert abs(numeric - got[index]) < 1e-5, (index, numeric, got[index])


def test_non_max_suppression_matches_tensorflow(tf_reference):
    inputs, ref, _ = tf_reference
    b, s = inputs["boxes"], inputs["scores"]
    i4, v4 = wr.raw_ops.NonMaxSuppressionV4(boxes=b, scores=s, max_output_size=40,
                                            iou_threshold=0.5, score_threshold=0.2,
                                            pad_to_max_output_size=True)
    got = run({
        "nms": wr.image.non_max_suppression(b, s, 20, 0.4),
        "nms_thr": wr.image.non_max_suppression(b, s, 7, 0.6, score_threshold=0.3),
        "nms_v2": wr.raw_ops.NonMaxSuppressionV2(boxes=b, scores=s, max_output_size=9,
                                                 iou_threshold=0.5),
        "nms_v1": wr.raw_ops.NonMaxSuppression(boxes=b, scores=s, max_output_size=9,
                                               iou_threshold=0.3),
        "nms_v4": i4, "nms_v4_valid": v4,
        "nms_v5": wr.image.non_max_suppression_with_scores(b, s, 15, 0.5, 0.1,
                                                           soft_nms_sigma=0.5),
        "nms_v5_hard": wr.image.non_max_suppression_with_scores(b, s, 15, 0.45),
    })
    for key in ("nms", "nms_thr", "nms_v2", "nms_v1", "nms_v4", "nms_v4_valid"):
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
    for key in ("nms_v5", "nms_v5_hard"):
        np.testing.assert_array_equal(got[key][0], ref[key], err_msg=key)
        np.testing.assert_allclose(got[key][1], ref[key + "_scores"], rtol=1e-6, err_msg=key)


def test_tf1_input_pipeline_matches_tensorflow(tf_reference):
    _, ref, folder = tf_reference
    for name, key in (("rgb.jpg", "pipe_jpg"), ("rgb8.png", "pipe_png")):
        wr.reset_default_graph()
        path = wr.placeholder(wr.string, [])
        image = wr.io.decode_image(wr.io.read_file(path), channels=3, expand_animations=False)
        image = wr.image.resize_bilinear(wr.expand_dims(image, 0), [24, 32])[0]
        got = run(wr.image.per_image_standardization(image), {path: str(folder / name)})
        np.testing.assert_allclose(got, ref[key], rtol=0, atol=2e-5, err_msg=name)


def test_tensorflow_graph_with_codec_ops_imports_and_runs(tf_reference):
    inputs, ref, folder = tf_reference
    adjusted, hsv, keep = wr.import_graph_def((folder / "codec_graph.pb").read_bytes(),
                                              return_elements=["adjusted:0", "hsv:0", "keep:0"])
    g = wr.get_default_graph()
    got = run([adjusted, hsv, keep], {g.get_tensor_by_name("import/contents:0"):
                                      file_bytes(ref, "rgb"),
                                      g.get_tensor_by_name("import/boxes:0"): inputs["boxes"],
                                      g.get_tensor_by_name("import/scores:0"): inputs["scores"]})
    np.testing.assert_allclose(got[0], ref["graph_adjusted"], rtol=0, atol=2e-6)
    np.testing.assert_allclose(got[1], ref["graph_hsv"], rtol=0, atol=2e-6)
    np.testing.assert_array_equal(got[2], ref["graph_keep"])


@pytest.mark.parametrize("data", [b"", b"garbage bytes", b"\xff\xd8\xff\xe0\x00\x10JFIF",
                                  b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", b"GIF89a" + b"\0" * 20])
def test_hostile_bytes_raise_errors(data):
    contents = wr.placeholder(wr.string, [])
    decoded = wr.io.decode_image(contents)
    with wr.Session() as sess:
        with pytest.raises((wr.errors.InvalidArgumentError, wr.errors.UnimplementedError)) as e:
            sess.run(decoded, {contents: data})
    assert "DecodeImage" in str(e.value)


def test_decode_png_refuses_two_channels_as_tensorflow():
    with pytest.raises(wr.errors.InvalidArgumentError, match="channels"):
        run(wr.io.decode_png(b"\x89PNG\r\n\x1a\n", channels=2))


def test_python_argument_errors():
    with pytest.raises(ValueError):
        wr.image.random_hue(np.zeros((2, 2, 3), np.float32), 0.7)
    with pytest.raises(ValueError):
        wr.image.random_saturation(np.zeros((2, 2, 3), np.float32), 0.5, 0.2)
    with pytest.raises(ValueError):
        wr.image.grayscale_to_rgb(np.zeros((2, 2, 3), np.float32))
    x = np.random.default_rng(1).random((3, 4, 3)).astype(np.float32)
    # random_hue / random_saturation stay RGB images in [0, 1].
    hue, sat = run([wr.image.random_hue(x, 0.2, seed=3), wr.image.random_saturation(x, 0.5, 1.5)])
    assert hue.shape == sat.shape == x.shape
    assert hue.min() >= -1e-6 and hue.max() <= 1 + 1e-6
